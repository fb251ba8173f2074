// The watch loop: scrape, update the window, derive figures, evaluate alerts; back off after
// failures and keep going. Also the JSON form of a sample.
#include <algorithm>
#include <cmath>

#include "headroom/watch.h"

namespace headroom::watch {

namespace {

std::size_t window_capacity(const WatchOptions& o) {
  // Enough samples to span the window at the scrape interval, plus the baseline sample.
  double needed = o.interval_s > 0 ? std::ceil(o.window_s / o.interval_s) + 2 : 2;
  return static_cast<std::size_t>(std::clamp<double>(needed, 2, static_cast<double>(std::max<std::size_t>(2, o.max_window_samples))));
}

}  // namespace

WatchSession::WatchSession(WatchOptions options, HttpClient& http, Clock& clock, GpuMemorySource& gpus)
    : m_options(std::move(options)),
      m_http(http),
      m_clock(clock),
      m_gpus(gpus),
      m_window(m_options.window_s, window_capacity(m_options)),
      m_backoff(m_options.retry) {}

WatchSample WatchSession::step() {
  WatchSample out;
  out.time_s = m_clock.now_s();
  out.unix_time_s = m_clock.unix_time_s();
  auto scraped = scrape_once(m_http, m_clock, m_options.url, m_options.retry.timeout_s);
  if (!scraped) {
    out.ok = false;
    out.error = scraped.error();
    out.next_delay_s = m_backoff.next_delay_s();
    out.consecutive_failures = m_backoff.failures();
    return out;
  }
  m_backoff.reset();
  out.ok = true;
  out.next_delay_s = m_options.interval_s;
  out.page_problems = std::move(scraped->problems);
  out.skipped_lines = scraped->skipped_lines;
  m_window.add(scraped->snapshot);
  out.derived = m_window.derive();
  if (m_options.expected_kv)
    out.kv_check = compare_kv_capacity(*m_options.expected_kv, scraped->snapshot, m_options.thresholds.max_kv_blocks_mismatch);
  out.alerts = evaluate_alerts(scraped->snapshot, out.derived, m_options.thresholds, out.kv_check);
  out.snapshot = std::move(scraped->snapshot);
  if (auto gpus = m_gpus.read()) out.gpus = std::move(*gpus);
  else out.gpu_error = gpus.error();
  return out;
}

void WatchSession::run(const std::function<void(const WatchSample&)>& on_sample, const std::atomic<bool>& stop,
                       std::int64_t max_samples) {
  std::int64_t taken = 0;
  while (!stop.load()) {
    WatchSample sample = step();
    on_sample(sample);
    if (max_samples > 0 && ++taken >= max_samples) return;
    double wake = m_clock.now_s() + sample.next_delay_s;
    for (double now = m_clock.now_s(); now < wake && !stop.load(); now = m_clock.now_s())
      m_clock.sleep_s(std::min(0.1, wake - now));
  }
}

namespace {

nlohmann::json opt(const std::optional<double>& v) {
  if (!v || std::isnan(*v) || std::isinf(*v)) return nullptr;
  return *v;
}

nlohmann::json error_json(const Error& e) { return e.to_string(); }

nlohmann::json metrics_json(const VllmSnapshot& s) {
  nlohmann::json m;
  m["model_names"] = s.model_names;
  m["engines"] = s.engines;
  m["requests_running"] = opt(s.requests_running);
  m["requests_waiting"] = opt(s.requests_waiting);
  m["requests_swapped"] = opt(s.requests_swapped);
  m["kv_cache_usage"] = opt(s.kv_cache_usage);
  m["kv_cache_usage_metric"] = s.kv_cache_usage_metric.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.kv_cache_usage_metric);
  m["preemptions_total"] = opt(s.preemptions_total);
  m["prompt_tokens_total"] = opt(s.prompt_tokens_total);
  m["generation_tokens_total"] = opt(s.generation_tokens_total);
  m["requests_finished_total"] = opt(s.requests_finished_total);
  m["prefix_cache_queries_total"] = opt(s.prefix_cache_queries_total);
  m["prefix_cache_hits_total"] = opt(s.prefix_cache_hits_total);
  m["tpot_metric"] = s.tpot_metric.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.tpot_metric);
  m["avg_prompt_throughput_tokens_per_s"] = opt(s.avg_prompt_throughput_tokens_per_s);
  m["avg_generation_throughput_tokens_per_s"] = opt(s.avg_generation_throughput_tokens_per_s);
  if (s.cache_config) {
    const auto& c = *s.cache_config;
    m["cache_config"] = {
        {"num_gpu_blocks", c.num_gpu_blocks ? nlohmann::json(*c.num_gpu_blocks) : nlohmann::json(nullptr)},
        {"block_size", c.block_size ? nlohmann::json(*c.block_size) : nlohmann::json(nullptr)},
        {"gpu_memory_utilization", opt(c.gpu_memory_utilization)},
        {"cache_dtype", c.cache_dtype.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.cache_dtype)},
    };
  } else {
    m["cache_config"] = nullptr;
  }
  return m;
}

nlohmann::json derived_json(const DerivedFigures& d) {
  return {
      {"window_s", d.window_s},
      {"samples", d.samples},
      {"counter_resets", d.counter_resets},
      {"prompt_tokens_per_s", opt(d.prompt_tokens_per_s)},
      {"generation_tokens_per_s", opt(d.generation_tokens_per_s)},
      {"preemptions_per_s", opt(d.preemptions_per_s)},
      {"requests_per_s", opt(d.requests_per_s)},
      {"prefix_cache_hit_rate", opt(d.prefix_cache_hit_rate)},
      {"quantile_basis", to_string(d.quantile_basis)},
      {"ttft_p50_s", opt(d.ttft_p50_s)},
      {"ttft_p99_s", opt(d.ttft_p99_s)},
      {"tpot_p50_s", opt(d.tpot_p50_s)},
      {"tpot_p99_s", opt(d.tpot_p99_s)},
  };
}

}  // namespace

nlohmann::json to_json(const WatchSample& sample, const std::string& url) {
  nlohmann::json j;
  j["schema_version"] = 1;
  j["url"] = url;
  j["time"] = sample.unix_time_s;
  j["ok"] = sample.ok;
  j["error"] = sample.error ? error_json(*sample.error) : nlohmann::json(nullptr);
  j["consecutive_failures"] = sample.consecutive_failures;
  j["next_scrape_in_s"] = sample.next_delay_s;
  j["metrics"] = sample.snapshot ? metrics_json(*sample.snapshot) : nlohmann::json(nullptr);
  j["derived"] = sample.ok ? derived_json(sample.derived) : nlohmann::json(nullptr);
  j["alerts"] = nlohmann::json::array();
  for (const auto& a : sample.alerts)
    j["alerts"].push_back({{"id", a.id},
                           {"severity", to_string(a.severity)},
                           {"value", a.value},
                           {"threshold", a.threshold},
                           {"summary", a.summary},
                           {"action", a.action}});
  if (sample.kv_check) {
    const auto& k = *sample.kv_check;
    j["kv_capacity"] = {{"predicted_blocks", k.predicted_blocks},
                        {"live_blocks", k.live_blocks ? nlohmann::json(*k.live_blocks) : nlohmann::json(nullptr)},
                        {"relative_difference", opt(k.relative_difference)},
                        {"mismatch", k.mismatch}};
  } else {
    j["kv_capacity"] = nullptr;
  }
  j["gpus"] = nlohmann::json::array();
  for (const auto& g : sample.gpus)
    j["gpus"].push_back({{"index", g.index}, {"name", g.name}, {"used_bytes", g.used_bytes}, {"total_bytes", g.total_bytes}});
  nlohmann::json problems = nlohmann::json::array();
  for (const auto& p : sample.page_problems) problems.push_back(p.to_string());
  j["page_problems"] = {{"skipped_lines", sample.skipped_lines}, {"first", problems}};
  return j;
}

}  // namespace headroom::watch
