// `headroom watch URL`: scrapes a vLLM server's /metrics every --interval seconds and shows KV cache
// usage, requests, preemptions, throughput, TTFT/TPOT quantiles and GPU memory, with alerts that
// say what to change. Keeps going when the server dies, hangs or writes bad lines (backing off).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>

#include "cli/alert_flags.h"
#include "cli/cli_common.h"
#include "cli/cli_parse.h"
#include "cli/commands.h"
#include "cli/target_options.h"
#include "cli/watch_prediction.h"
#include "cli/watch_view.h"

namespace headroom::cli {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int) { g_stop.store(true); }

struct WatchFlags {
  std::string url;
  double interval_s = 2;
  double window_s = 60;
  double timeout_s = 5;
  double max_backoff_s = 30;
  bool once = false;
  int retries = 3;
  std::int64_t count = 0;
  std::string format = "text";
  std::string color = "auto";
};

void print_json(const nlohmann::json& j) {
  std::fputs((j.dump() + "\n").c_str(), stdout);
  std::fflush(stdout);
}

// --once: one report. With --interval > 0 it scrapes twice, --interval apart, so the rates and
// window quantiles cover that span; with --interval 0 it scrapes once (rates are null, quantiles
// are over the server's lifetime). A failed first scrape is retried up to --retries times.
int run_once(watch::WatchSession& session, Format format, WatchView& view, int retries, const std::string& url) {
  watch::WatchSample sample;
  for (int attempt = 0;; ++attempt) {
    sample = session.step();
    if (sample.ok || attempt >= retries || g_stop.load()) break;
    print_warning(fmt::format("scrape failed: {}; retrying in {:g} s", sample.error->to_string(), sample.next_delay_s));
    watch::system_clock().sleep_s(sample.next_delay_s);
  }
  if (sample.ok && session.options().interval_s > 0 && !g_stop.load()) {
    watch::system_clock().sleep_s(session.options().interval_s);
    watch::WatchSample second = session.step();
    if (second.ok) sample = std::move(second);
    else print_warning("second scrape failed (" + second.error->to_string() + "); reporting the first alone");
  }
  if (format == Format::json) print_json(watch::to_json(sample, url));
  else if (sample.ok) view.show(sample);
  if (!sample.ok) {
    print_error(*sample.error);
    return k_exit_failure;
  }
  return sample.alerts.empty() ? k_exit_ok : k_exit_negative;
}

}  // namespace

int run_watch(const Args& args) {
  CLI::App app("Watches a running vLLM server through its Prometheus /metrics page: KV cache usage, running and "
               "waiting requests, preemptions, prompt and generation throughput, TTFT and TPOT p50/p99 over a "
               "window, GPU memory when local, and alerts with the action to take.\n\n"
               "--once prints one report and exits 0 (no alert), 3 (alerts fire) or 1 (the server could not be "
               "scraped). It scrapes twice, --interval apart, so rates cover that span; with --interval 0 it "
               "scrapes once, rates are null and quantiles cover the server's lifetime.\n"
               "Without --once, --format json prints one JSON object per sample (JSON Lines).\n\n"
               "To compare the live KV cache with headroom's prediction, name the model, the GPU and the server's "
               "vLLM flags: headroom watch URL --model MODEL --gpu H100 --max-model-len 8192 -tp 2, or paste the "
               "command after --: headroom watch URL --gpu H100 -- vllm serve MODEL ...",
               "headroom watch");
  WatchFlags f;
  app.add_option("url", f.url, "the server, e.g. http://localhost:8000 (/metrics is added when no path is given)")->required();
  app.add_option("--interval", f.interval_s, "seconds between scrapes (default 2)");
  app.add_option("--window", f.window_s, "seconds of history behind rates and quantiles (default 60)");
  app.add_option("--timeout", f.timeout_s, "seconds to wait for the server on each scrape (default 5)");
  app.add_option("--max-backoff", f.max_backoff_s, "longest wait between retries after failures (default 30)");
  app.add_flag("--once", f.once, "print one report and exit");
  app.add_option("--retries", f.retries, "with --once: retries of a failed scrape before giving up (default 3)");
  app.add_option("--count", f.count, "stop after this many samples (default: until Ctrl-C)");
  app.add_option("--format", f.format, "text or json (default text)");
  app.add_option("--color", f.color, "auto, always or never (default auto; NO_COLOR is honoured)");
  ThresholdFlags thresholds;
  add_threshold_flags(app, thresholds);
  std::string model, from_log;
  TargetOptions target;
  app.add_option("--model", model, "the model the server runs (for the KV capacity comparison)")->group("Prediction");
  app.add_option("--from-log", from_log, "the server's vLLM startup log: compare with the KV cache it logged")->group("Prediction");
  app.add_option("--gpu", target.gpu, "the GPU the server runs on, from the catalogue (e.g. H100)")->group("Prediction");
  app.add_option("--gpus", target.gpus, "GPUs available to the server")->group("Prediction");
  app.add_option("--nodes", target.nodes, "nodes")->group("Prediction");
  app.add_option("--gpu-memory-gib", target.gpu_memory_gib, "any GPU, by the total memory CUDA reports")->group("Prediction");
  app.add_option("--vllm-version", target.vllm_version, "the server's vLLM version (default: newest modelled)")->group("Prediction");

  // headroom's own options go to CLI11; the URL and the rest are the server's vLLM flags.
  Args own, rest;
  split_args(args,
             {"--interval", "--window", "--timeout", "--max-backoff", "--retries", "--count", "--format", "--color",
              "--thresholds", "--max-waiting", "--max-kv-usage", "--max-ttft-p99", "--max-tpot-p99", "--max-preemption-rate",
              "--max-kv-mismatch", "--model", "--from-log", "--gpu", "--gpus", "--nodes", "--gpu-memory-gib", "--vllm-version"},
             {"--once", "--help", "-h"}, own, rest);
  auto dashdash = std::find(args.begin(), args.end(), "--");
  if (!rest.empty() && rest.front().rfind("-", 0) != 0 && (dashdash == args.end() || std::find(args.begin(), dashdash, rest.front()) != dashdash)) {
    own.push_back(rest.front());  // the URL
    rest.erase(rest.begin());
  }
  if (auto code = parse_or_exit(app, own, "watch")) return *code;

  auto format = parse_format(f.format);
  if (!format) return print_error(format.error()), k_exit_usage;
  auto color = parse_color(f.color);
  if (!color) return print_error(color.error()), k_exit_usage;
  auto url = watch::metrics_url(f.url);
  if (!url) return print_error(url.error()), k_exit_usage;
  auto values = resolve_thresholds(thresholds);
  if (!values) return print_error(values.error()), exit_code_for(values.error());
  if (!(f.interval_s >= 0) || (!f.once && f.interval_s <= 0))
    return print_error(Error{ErrorCode::invalid_argument, "expected seconds above 0 (0 only with --once)", "--interval"}), k_exit_usage;
  if (!(f.window_s > 0)) return print_error(Error{ErrorCode::invalid_argument, "expected seconds above 0", "--window"}), k_exit_usage;
  if (!(f.timeout_s > 0)) return print_error(Error{ErrorCode::invalid_argument, "expected seconds above 0", "--timeout"}), k_exit_usage;
  if (!(f.max_backoff_s > 0)) return print_error(Error{ErrorCode::invalid_argument, "expected seconds above 0", "--max-backoff"}), k_exit_usage;

  std::vector<std::string> warnings;
  auto expectation = from_log.empty() ? watch_expectation(model, target, rest, warnings)
                                      : watch_expectation_from_log(from_log, warnings).map([](watch::KvCapacityExpectation e) {
                                          return std::optional<watch::KvCapacityExpectation>(std::move(e));
                                        });
  for (const auto& w : warnings) print_warning(w);
  if (!expectation) return print_error(expectation.error()), exit_code_for(expectation.error());

  watch::WatchOptions options;
  options.expected_kv = *expectation;
  options.url = *url;
  options.interval_s = f.interval_s;
  options.window_s = f.window_s;
  options.thresholds = *values;
  options.retry.timeout_s = f.timeout_s;
  options.retry.initial_backoff_s = std::max(0.5, std::min(f.interval_s, f.max_backoff_s));
  options.retry.max_backoff_s = f.max_backoff_s;

  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  watch::CurlClientOptions curl_options;
  curl_options.cancel = &g_stop;
  auto http = watch::make_curl_http_client(curl_options);
  // GPU memory only means something when the server runs on this machine.
  auto gpus = watch::is_local_url(*url) ? watch::make_probe_gpu_memory_source() : watch::make_null_gpu_memory_source();
  watch::WatchSession session(options, *http, watch::system_clock(), *gpus);

  bool tty = isatty(STDOUT_FILENO) != 0;
  ViewMode mode = f.once ? ViewMode::frame : (tty ? ViewMode::live : ViewMode::lines);
  WatchView view(stdout, mode, use_color(*color) ? Colour::on : Colour::off, *url, watch::is_local_url(*url));
  if (f.once) return run_once(session, *format, view, std::max(0, f.retries), *url);

  session.run(
      [&](const watch::WatchSample& sample) {
        if (*format == Format::json) {
          print_json(watch::to_json(sample, *url));
          if (!sample.ok) print_warning("scrape failed: " + sample.error->to_string());
        } else {
          view.show(sample);
        }
      },
      g_stop, f.count);
  view.finish();
  return k_exit_ok;
}

}  // namespace headroom::cli
