// Soak benchmark of `headroom watch`: many thousands of scrape cycles against the loopback fake
// vLLM server (real HTTP through libcurl) with a compressed-time clock, so hours of watching run in
// seconds. The page changes every scrape (counters and histograms grow, the server "restarts" now
// and then, some scrapes fail). Prints the resident set size at the start, middle and end: it must
// stay flat. Then times the /metrics parser with Google Benchmark.
//   bench_watch_soak [--cycles N] [--interval S] [benchmark flags]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "fake_vllm_server.h"
#include "headroom/prometheus.h"
#include "headroom/watch.h"

namespace {

long rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// A vLLM 0.11-style page for two engines after `cycle` scrapes; counters restart every 5000 cycles.
std::string make_page(long cycle) {
  static const double ttft_bounds[] = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
                                       1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
  static const double tpot_bounds[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                       0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
  long c = cycle % 5000;  // a restart every 5000 scrapes
  std::string out;
  out.reserve(64 * 1024);
  auto labels = [](int engine) { return fmt::format("engine=\"{}\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"", engine); };
  out += "# HELP vllm:num_requests_running Number of requests in model execution batches.\n# TYPE vllm:num_requests_running gauge\n";
  for (int e = 0; e < 2; ++e) out += fmt::format("vllm:num_requests_running{{{}}} {}\n", labels(e), 20 + (c % 17));
  out += "# TYPE vllm:num_requests_waiting gauge\n";
  for (int e = 0; e < 2; ++e) out += fmt::format("vllm:num_requests_waiting{{{}}} {}\n", labels(e), (c / 100) % 70);
  out += "# TYPE vllm:kv_cache_usage_perc gauge\n";
  for (int e = 0; e < 2; ++e) out += fmt::format("vllm:kv_cache_usage_perc{{{}}} {}\n", labels(e), 0.5 + 0.49 * std::sin(c * 0.01));
  for (const char* name : {"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:num_preemptions_total",
                           "vllm:request_success_total", "vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total"}) {
    out += fmt::format("# TYPE {} counter\n", name);
    double per_cycle = std::strstr(name, "preempt") ? 0.01 : std::strstr(name, "success") ? 3 : 1000;
    for (int e = 0; e < 2; ++e) out += fmt::format("{}{{{}}} {}\n", name, labels(e), std::floor(c * per_cycle));
  }
  auto histogram = [&](const char* name, const double* bounds, std::size_t n, double scale) {
    out += fmt::format("# TYPE {} histogram\n", name);
    for (int e = 0; e < 2; ++e) {
      double cumulative = 0;
      for (std::size_t i = 0; i < n; ++i) {
        cumulative += std::floor(c * scale / static_cast<double>(1 + (i > 6 ? i - 6 : 6 - i)));
        out += fmt::format("{}_bucket{{{},le=\"{}\"}} {}\n", name, labels(e), bounds[i], cumulative);
      }
      out += fmt::format("{}_bucket{{{},le=\"+Inf\"}} {}\n", name, labels(e), cumulative);
      out += fmt::format("{}_count{{{}}} {}\n{}_sum{{{}}} {}\n", name, labels(e), cumulative, name, labels(e), cumulative * 0.2);
    }
  };
  histogram("vllm:time_to_first_token_seconds", ttft_bounds, std::size(ttft_bounds), 3);
  histogram("vllm:inter_token_latency_seconds", tpot_bounds, std::size(tpot_bounds), 300);
  histogram("vllm:e2e_request_latency_seconds", ttft_bounds, std::size(ttft_bounds), 3);
  histogram("vllm:request_queue_time_seconds", ttft_bounds, std::size(ttft_bounds), 3);
  out += "# TYPE vllm:cache_config_info gauge\n";
  for (int e = 0; e < 2; ++e)
    out += fmt::format("vllm:cache_config_info{{block_size=\"16\",cache_dtype=\"auto\",engine=\"{}\",num_gpu_blocks=\"29067\"}} 1.0\n", e);
  if (cycle % 997 == 0) out += "this line is malformed {\n";
  return out;
}

int run_soak(long cycles, double interval_s) {
  using namespace headroom::watch;
  std::atomic<long> cycle{0};
  headroom::testing::FakeVllmServer server([&cycle] { return make_page(cycle.load()); });
  auto http = make_curl_http_client();
  auto gpus = make_null_gpu_memory_source();
  ManualClock clock;
  WatchOptions options;
  options.url = server.url();
  options.interval_s = interval_s;
  options.window_s = 300;
  options.retry.timeout_s = 2;
  options.retry.initial_backoff_s = interval_s;
  options.retry.max_backoff_s = 30;
  options.expected_kv = KvCapacityExpectation{28071, 16, "soak"};
  WatchSession session(options, *http, clock, *gpus);

  long failures = 0, alerts = 0, samples = 0;
  long rss_start = 0, rss_middle = 0;
  std::atomic<bool> stop{false};
  std::printf("watch soak: %ld scrape cycles, interval %g s (%.1f h of watching), page %zu bytes\n", cycles, interval_s,
              static_cast<double>(cycles) * interval_s / 3600, make_page(2500).size());
  session.run(
      [&](const WatchSample& s) {
        ++samples;
        if (!s.ok) ++failures;
        alerts += static_cast<long>(s.alerts.size());
        long next = cycle.fetch_add(1) + 1;
        // The server misbehaves now and then: errors for a few scrapes every 2000 cycles.
        server.set_behaviour(next % 2000 < 3 ? headroom::testing::ServerBehaviour::http_error
                                             : headroom::testing::ServerBehaviour::serve);
        if (samples == 100) rss_start = rss_kib();
        if (samples == cycles / 2) rss_middle = rss_kib();
      },
      stop, cycles);
  long rss_end = rss_kib();
  std::printf("VmRSS after 100 cycles: %ld KiB\nVmRSS at the middle:    %ld KiB\nVmRSS at the end:       %ld KiB\n", rss_start,
              rss_middle, rss_end);
  std::printf("samples %ld, failed scrapes %ld, alerts raised %ld, simulated time %.1f h\n", samples, failures, alerts,
              clock.now_s() / 3600);
  return 0;
}

void BM_ParseMetricsPage(benchmark::State& state) {
  std::string page = make_page(2500);
  for (auto _ : state) {
    auto r = headroom::prometheus::parse_text(page, "metrics", headroom::prometheus::MalformedLines::skip);
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * page.size()));
}
BENCHMARK(BM_ParseMetricsPage);

void BM_ReadVllmSnapshot(benchmark::State& state) {
  auto page = headroom::prometheus::parse_text(make_page(2500));
  for (auto _ : state) benchmark::DoNotOptimize(headroom::watch::read_vllm_metrics(*page, 0));
}
BENCHMARK(BM_ReadVllmSnapshot);

}  // namespace

int main(int argc, char** argv) {
  long cycles = 20000;
  double interval_s = 1;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cycles") == 0 && i + 1 < argc) cycles = std::stol(argv[++i]);
    else if (std::strcmp(argv[i], "--interval") == 0 && i + 1 < argc) interval_s = std::stod(argv[++i]);
    else rest.push_back(argv[i]);
  }
  run_soak(cycles, interval_s);
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
