// Watching a running vLLM server: scrape its Prometheus /metrics page (old and new vLLM metric
// names), derive rates and latency quantiles over a sliding window, raise alerts that say what to
// change, compare the live KV cache capacity with headroom's prediction, and write the same alerts
// as Prometheus alerting rules. I/O goes through small interfaces (HttpClient, Clock,
// GpuMemorySource) so tests can use fakes and a compressed-time clock.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "headroom/error.h"
#include "headroom/prometheus.h"
#include "headroom/units.h"

namespace headroom {
struct Prediction;
}

namespace headroom::watch {

// ---- I/O seams ----------------------------------------------------------------------------------

struct HttpResponse {
  long status = 0;
  std::string body;
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // GETs `url`, giving up after `timeout_s` seconds. Errors (code unavailable, where = url):
  // "cannot connect: <reason>", "no response within T s", "the server closed the connection ...",
  // "the server answered HTTP <status>", "the response is larger than N bytes", "cancelled".
  virtual Result<HttpResponse> get(const std::string& url, double timeout_s) = 0;
};

struct CurlClientOptions {
  Bytes max_body_bytes = 64 * k_mib;          // a /metrics page is a few hundred KiB
  const std::atomic<bool>* cancel = nullptr;  // when set to true, a request in flight is abandoned
};
// The libcurl client (keeps its connection alive between scrapes).
std::unique_ptr<HttpClient> make_curl_http_client(CurlClientOptions options = {});

// Monotonic time for scheduling and the wall clock for display, in seconds.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual double now_s() = 0;
  virtual double unix_time_s() = 0;
  virtual void sleep_s(double seconds) = 0;
};
Clock& system_clock();

// A clock that only moves when slept on or advanced (compressed-time tests and benchmarks).
class ManualClock : public Clock {
 public:
  explicit ManualClock(double start_unix_time_s = 1'750'000'000.0) : m_unix_start(start_unix_time_s) {}
  double now_s() override { return m_now; }
  double unix_time_s() override { return m_unix_start + m_now; }
  void sleep_s(double seconds) override { m_now += seconds > 0 ? seconds : 0; }

 private:
  double m_unix_start;
  double m_now = 0;
};

struct GpuMemoryReading {
  int index = 0;
  std::string name;
  Bytes used_bytes = 0;
  Bytes total_bytes = 0;
};

// Per-GPU memory of the machine the server runs on (only meaningful when it is this machine).
class GpuMemorySource {
 public:
  virtual ~GpuMemorySource() = default;
  // An empty list when the source has no GPUs to report; errors: unavailable (driver missing).
  virtual Result<std::vector<GpuMemoryReading>> read() = 0;
};
// Reports no GPUs (remote servers).
std::unique_ptr<GpuMemorySource> make_null_gpu_memory_source();
// The GPUs of this machine through the live probe (headroom/gpu_probe.h); no GPUs when none is found.
std::unique_ptr<GpuMemorySource> make_probe_gpu_memory_source();

// ---- What one scrape says -----------------------------------------------------------------------

// A cumulative histogram (Prometheus buckets), all series of one metric added together.
struct Histogram {
  std::vector<double> upper_bounds;       // ascending; the last is +Inf
  std::vector<double> cumulative_counts;  // one per bound
  double sum = 0;
  double count = 0;
};

// The q-quantile (0 ≤ q ≤ 1) as Prometheus's histogram_quantile computes it: linear interpolation
// inside the bucket holding the rank, the first bucket starting at 0, and the upper bound of the
// last finite bucket when the rank falls in +Inf. nullopt when the histogram holds no observations.
std::optional<double> histogram_quantile(double q, const Histogram& h);

// vllm:cache_config_info, the engine's cache settings exported as labels of an info gauge.
struct CacheConfigInfo {
  std::optional<std::int64_t> num_gpu_blocks;  // smallest over engines ("None" before allocation)
  std::optional<int> block_size;
  std::optional<double> gpu_memory_utilization;
  std::string cache_dtype;
};

struct VllmSnapshot {
  double time_s = 0;  // Clock::now_s() of the scrape
  std::vector<std::string> model_names;
  int engines = 0;  // distinct `engine` label values (1 for servers without the label)
  // Gauges, summed over engines (kv_cache_usage: the fullest engine).
  std::optional<double> requests_running;
  std::optional<double> requests_waiting;
  std::optional<double> requests_swapped;  // V0 only
  std::optional<double> kv_cache_usage;    // 0–1 fraction
  std::string kv_cache_usage_metric;       // vllm:gpu_cache_usage_perc or vllm:kv_cache_usage_perc
  // Counters since the server started.
  std::optional<double> preemptions_total;
  std::optional<double> prompt_tokens_total;
  std::optional<double> generation_tokens_total;
  std::optional<double> requests_finished_total;  // vllm:request_success_total, all finished_reason values
  std::optional<double> prefix_cache_queries_total;
  std::optional<double> prefix_cache_hits_total;
  // Latency histograms (seconds).
  std::optional<Histogram> ttft;
  std::optional<Histogram> tpot;  // inter_token_latency when present, else time_per_output_token
  std::string tpot_metric;
  std::optional<Histogram> e2e_latency;
  std::optional<Histogram> queue_time;
  // V0 engines also export their own running averages.
  std::optional<double> avg_prompt_throughput_tokens_per_s;
  std::optional<double> avg_generation_throughput_tokens_per_s;
  std::optional<CacheConfigInfo> cache_config;

  // Whether the page held any vLLM metric at all.
  bool has_vllm_metrics() const;
};

// Reads the vLLM metrics of a parsed page, whatever vLLM version wrote it; missing metrics stay
// nullopt. `time_s` is stored as the snapshot's time.
VllmSnapshot read_vllm_metrics(const prometheus::Exposition& page, double time_s);

// ---- Figures over a window ----------------------------------------------------------------------

enum class QuantileBasis {
  none,         // no observations to compute from
  window,       // bucket increases between the oldest and newest sample of the window
  since_start,  // a single sample: the server's cumulative buckets since it started
};
std::string_view to_string(QuantileBasis basis);

struct DerivedFigures {
  double window_s = 0;  // time between the oldest and newest sample used
  int samples = 0;
  int counter_resets = 0;  // server restarts seen inside the window
  // Rates from counter increases (nullopt with fewer than two samples or a missing counter).
  std::optional<double> prompt_tokens_per_s;
  std::optional<double> generation_tokens_per_s;
  std::optional<double> preemptions_per_s;
  std::optional<double> requests_per_s;
  std::optional<double> prefix_cache_hit_rate;  // hits / queries over the window, 0–1
  QuantileBasis quantile_basis = QuantileBasis::none;
  std::optional<double> ttft_p50_s, ttft_p99_s;
  std::optional<double> tpot_p50_s, tpot_p99_s;
};

// A bounded ring of the most recent snapshots. Increases are summed step by step, so a counter
// that drops (server restart) counts from zero again, as Prometheus's increase() does.
class MetricsWindow {
 public:
  // Keeps samples no older than `window_s` behind the newest, and never more than `max_samples`.
  MetricsWindow(double window_s, std::size_t max_samples);

  void add(VllmSnapshot snapshot);
  DerivedFigures derive() const;
  std::size_t size() const { return m_size; }
  std::size_t capacity() const { return m_capacity; }

 private:
  const VllmSnapshot& at(std::size_t i) const;  // 0 = oldest

  double m_window_s;
  std::size_t m_capacity;
  std::vector<VllmSnapshot> m_ring;
  std::size_t m_head = 0;  // index of the oldest sample
  std::size_t m_size = 0;
};

// ---- Alerts -------------------------------------------------------------------------------------

struct AlertThresholds {
  double max_waiting = 50;               // requests
  double max_kv_usage = 0.95;            // fraction
  double max_ttft_p99_s = 5;
  double max_tpot_p99_s = 0.1;
  double max_preemptions_per_s = 0;      // "rising preemptions": any increase over the window
  double max_kv_blocks_mismatch = 0.05;  // relative difference of live and predicted KV blocks
};

// Range checks; errors name the flag: "--max-kv-usage: expected a fraction in (0, 1], got 1.5".
Result<void> validate_thresholds(const AlertThresholds& t);

// Overrides `base` with a JSON object whose keys are the flag names without dashes
// ({"max_waiting": 80, "max_ttft_p99": 3}). Errors: parse_error with file:line:col, invalid_argument
// for unknown keys (with "did you mean") and non-numbers.
Result<AlertThresholds> read_thresholds_file(const std::string& path, AlertThresholds base);

enum class Severity { warning, critical };
std::string_view to_string(Severity s);

struct Alert {
  std::string id;  // requests_waiting, kv_cache_full, ttft_p99_high, tpot_p99_high, preemptions_rising, kv_capacity_mismatch
  Severity severity = Severity::warning;
  double value = 0;
  double threshold = 0;
  std::string summary;  // what is wrong, with the figures
  std::string action;   // what to change
};

// The KV capacity headroom predicted for the server's model, GPUs and flags.
struct KvCapacityExpectation {
  std::int64_t num_gpu_blocks = 0;
  int block_size = 16;
  std::string setup;  // "Llama-3.1-8B on 1 × H100, --max-model-len 8192"
};
KvCapacityExpectation expectation_from(const Prediction& prediction, std::string setup);

struct KvCapacityCheck {
  std::int64_t predicted_blocks = 0;
  std::optional<std::int64_t> live_blocks;  // nullopt: the server does not export cache_config_info
  std::optional<double> relative_difference;  // (live − predicted) / predicted
  bool mismatch = false;
};
KvCapacityCheck compare_kv_capacity(const KvCapacityExpectation& expected, const VllmSnapshot& live,
                                    double max_relative_difference);

// The alerts that fire for a snapshot and its window, in a fixed order.
std::vector<Alert> evaluate_alerts(const VllmSnapshot& snapshot, const DerivedFigures& derived,
                                   const AlertThresholds& thresholds, const std::optional<KvCapacityCheck>& kv_check);

// ---- Prometheus alerting rules -------------------------------------------------------------------

struct RuleOptions {
  std::string for_duration = "5m";  // how long a condition holds before the alert fires
  std::string rate_window = "5m";   // range of rate() and histogram_quantile()
  std::string selector;             // extra label matchers for every series, e.g. job="vllm"
  std::string group_name = "headroom-vllm";
};

// A Prometheus rule file (YAML) with one alerting rule per alert of evaluate_alerts() except the
// KV capacity comparison. Errors: invalid_argument for a duration that is not a Prometheus
// duration ("5m", "1h30m") or a selector with unbalanced quotes or braces.
Result<std::string> prometheus_alert_rules(const AlertThresholds& thresholds, const RuleOptions& options);

// ---- Scraping and the watch loop ----------------------------------------------------------------

struct RetryPolicy {
  double timeout_s = 5;          // per request
  double initial_backoff_s = 1;  // wait after the first failure, doubled after each further one
  double max_backoff_s = 30;
  double multiplier = 2;
};

// Exponential backoff, capped.
class Backoff {
 public:
  explicit Backoff(const RetryPolicy& policy) : m_policy(policy) {}
  double next_delay_s();  // records a failure and returns how long to wait before retrying
  void reset() { m_failures = 0; }
  int failures() const { return m_failures; }

 private:
  RetryPolicy m_policy;
  int m_failures = 0;
};

struct ScrapeResult {
  VllmSnapshot snapshot;
  std::vector<Error> problems;  // malformed lines that were skipped (bounded)
  int skipped_lines = 0;
  std::size_t page_bytes = 0;
};

// One GET of the /metrics page and its parse. Malformed lines are skipped and reported. Errors:
// the HttpClient's, or unavailable "no vllm: metrics on the page ..." when the page has none.
Result<ScrapeResult> scrape_once(HttpClient& http, Clock& clock, const std::string& url, double timeout_s);

// "host:8000" → "http://host:8000/metrics"; a URL with a path is kept. Errors: invalid_argument
// for schemes other than http and https.
Result<std::string> metrics_url(const std::string& text);

// Whether the URL's host is this machine (localhost, 127.0.0.0/8, ::1), where GPU memory can be read.
bool is_local_url(const std::string& url);

struct WatchOptions {
  std::string url;
  double interval_s = 2;
  double window_s = 60;
  std::size_t max_window_samples = 4096;
  RetryPolicy retry;
  AlertThresholds thresholds;
  std::optional<KvCapacityExpectation> expected_kv;
};

struct WatchSample {
  double time_s = 0;
  double unix_time_s = 0;
  bool ok = false;               // the scrape succeeded
  std::optional<Error> error;    // why it did not
  int consecutive_failures = 0;
  double next_delay_s = 0;       // interval after success, backoff after failure
  std::optional<VllmSnapshot> snapshot;  // this scrape's (absent when it failed)
  std::vector<Error> page_problems;
  int skipped_lines = 0;
  DerivedFigures derived;
  std::vector<Alert> alerts;
  std::optional<KvCapacityCheck> kv_check;
  std::vector<GpuMemoryReading> gpus;
  std::optional<Error> gpu_error;
};

class WatchSession {
 public:
  WatchSession(WatchOptions options, HttpClient& http, Clock& clock, GpuMemorySource& gpus);

  // Scrapes once now and updates the window. Never fails: a failed scrape is a sample with ok=false.
  WatchSample step();

  // Steps until `stop` is true or `max_samples` samples were taken (0 = no limit), waiting the
  // interval (or the backoff) between them in slices of at most 0.1 s so `stop` is noticed quickly.
  void run(const std::function<void(const WatchSample&)>& on_sample, const std::atomic<bool>& stop,
           std::int64_t max_samples = 0);

  const WatchOptions& options() const { return m_options; }

 private:
  WatchOptions m_options;
  HttpClient& m_http;
  Clock& m_clock;
  GpuMemorySource& m_gpus;
  MetricsWindow m_window;
  Backoff m_backoff;
};

// The JSON form of a sample (schema_version 1): url, time, ok, error, metrics, derived, alerts[],
// kv_capacity, gpus. Keys are stable; absent figures are null.
nlohmann::json to_json(const WatchSample& sample, const std::string& url);

}  // namespace headroom::watch
