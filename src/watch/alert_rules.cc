// Prometheus alerting rules for the alerts of `headroom watch`, so the same conditions page someone
// when nobody is watching. Each expression accepts the metric names of old and new vLLM versions.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string_view>

#include "headroom/watch.h"

namespace headroom::watch {

namespace {

// Prometheus durations: units from years to milliseconds, largest first, e.g. "1h30m", "90s".
// Plain code: a rules file may hold text of any length.
bool is_prometheus_duration(const std::string& text) {
  static constexpr std::string_view k_units[] = {"y", "w", "d", "h", "m", "s", "ms"};
  std::size_t i = 0, next_unit = 0;
  while (i < text.size()) {
    std::size_t digits = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    if (i == digits) return false;
    std::size_t u = next_unit;
    // "ms" before "m": the longest unit that is spelled here, in the order Prometheus allows.
    while (u < std::size(k_units) &&
           !(text.compare(i, k_units[u].size(), k_units[u]) == 0 &&
             !(k_units[u] == "m" && i + 1 < text.size() && text[i + 1] == 's')))
      ++u;
    if (u == std::size(k_units)) return false;
    i += k_units[u].size();
    next_unit = u + 1;
  }
  return !text.empty();
}

Result<void> check_selector(const std::string& selector) {
  bool in_quotes = false;
  for (std::size_t i = 0; i < selector.size(); ++i) {
    char c = selector[i];
    if (in_quotes && c == '\\') {
      ++i;
      continue;
    }
    if (c == '"') in_quotes = !in_quotes;
    else if (!in_quotes && (c == '{' || c == '}'))
      return make_error(ErrorCode::invalid_argument,
                        "expected label matchers without braces, such as job=\"vllm\", got '" + selector + "'", "--selector");
  }
  if (in_quotes)
    return make_error(ErrorCode::invalid_argument, "a quoted label value is not closed in '" + selector + "'", "--selector");
  return {};
}

std::string yaml_string(const std::string& s) { return nlohmann::json(s).dump(); }

std::string number(double v) { return fmt::format("{:g}", v); }

struct Rule {
  std::string alert;
  std::string expr;
  std::string severity;
  std::string summary;
  std::string description;
};

}  // namespace

Result<std::string> prometheus_alert_rules(const AlertThresholds& t, const RuleOptions& o) {
  if (auto ok = validate_thresholds(t); !ok) return tl::unexpected(ok.error());
  if (!is_prometheus_duration(o.for_duration))
    return make_error(ErrorCode::invalid_argument, "expected a Prometheus duration such as 5m or 1h30m, got '" + o.for_duration + "'", "--for");
  if (!is_prometheus_duration(o.rate_window))
    return make_error(ErrorCode::invalid_argument, "expected a Prometheus duration such as 5m or 1h30m, got '" + o.rate_window + "'", "--window");
  if (auto ok = check_selector(o.selector); !ok) return tl::unexpected(ok.error());
  if (o.group_name.empty()) return make_error(ErrorCode::invalid_argument, "expected a rule group name, got ''", "--group");

  const std::string sel = o.selector.empty() ? "" : "{" + o.selector + "}";
  const std::string& w = o.rate_window;
  auto p99 = [&](const std::string& histogram) {
    return fmt::format("histogram_quantile(0.99, sum by (instance, model_name, le) (rate({}_bucket{}[{}])))", histogram, sel, w);
  };

  std::vector<Rule> rules = {
      {"VllmRequestsWaiting",
       fmt::format("sum by (instance, model_name) (vllm:num_requests_waiting{}) > {}", sel, number(t.max_waiting)),
       "warning", "{{ $value }} requests waiting on {{ $labels.instance }} ({{ $labels.model_name }})",
       fmt::format("More than {} requests have been queueing for {}. Action: scale out (another replica), or raise "
                   "--max-num-seqs when the KV cache has room for more running requests.",
                   number(t.max_waiting), o.for_duration)},
      {"VllmKvCacheFull",
       fmt::format("max by (instance, model_name) (vllm:kv_cache_usage_perc{0} or vllm:gpu_cache_usage_perc{0}) > {1}", sel,
                   number(t.max_kv_usage)),
       "warning", "KV cache {{ $value | humanizePercentage }} full on {{ $labels.instance }} ({{ $labels.model_name }})",
       fmt::format("KV cache usage has stayed above {}% for {}. Action: give the KV cache more memory (higher "
                   "--gpu-memory-utilization, or more GPUs with -tp), shorten --max-model-len, or store it in fp8 "
                   "(--kv-cache-dtype fp8).",
                   number(t.max_kv_usage * 100), o.for_duration)},
      {"VllmTimeToFirstTokenP99High", fmt::format("{} > {}", p99("vllm:time_to_first_token_seconds"), number(t.max_ttft_p99_s)),
       "warning", "time to first token p99 {{ $value | humanizeDuration }} on {{ $labels.instance }} ({{ $labels.model_name }})",
       fmt::format("The 99th percentile of time to first token over {} is above {} s. Action: enable chunked prefill "
                   "(--enable-chunked-prefill) with a smaller --max-num-batched-tokens, and prefix caching "
                   "(--enable-prefix-caching) for shared prompt prefixes.",
                   w, number(t.max_ttft_p99_s))},
      {"VllmTimePerOutputTokenP99High",
       fmt::format("({} or {}) > {}", p99("vllm:inter_token_latency_seconds"), p99("vllm:time_per_output_token_seconds"),
                   number(t.max_tpot_p99_s)),
       "warning", "time per output token p99 {{ $value | humanizeDuration }} on {{ $labels.instance }} ({{ $labels.model_name }})",
       fmt::format("The 99th percentile of time per output token over {} is above {} ms. Action: lower --max-num-seqs "
                   "to shrink the decode batch, lower --max-num-batched-tokens so prefill chunks interrupt decoding "
                   "less, or spread the model over more GPUs (-tp).",
                   w, number(t.max_tpot_p99_s * 1000))},
      {"VllmPreemptionsRising",
       fmt::format("sum by (instance, model_name) (rate(vllm:num_preemptions_total{0}[{1}]) or rate(vllm:num_preemptions{0}[{1}])) > {2}",
                   sel, w, number(t.max_preemptions_per_s)),
       "critical", "{{ $value | humanize }} preemptions/s on {{ $labels.instance }} ({{ $labels.model_name }})",
       "Requests are evicted for lack of KV cache blocks and recomputed. Action: give the KV cache more memory "
       "(higher --gpu-memory-utilization), lower --max-num-seqs, or use --kv-cache-dtype fp8."},
  };

  std::string out;
  out += "# Prometheus alerting rules for vLLM servers, written by headroom " HEADROOM_VERSION ".\n";
  out += fmt::format("# Thresholds: waiting > {}, KV cache usage > {}, TTFT p99 > {} s, TPOT p99 > {} s, preemptions/s > {}.\n",
                     number(t.max_waiting), number(t.max_kv_usage), number(t.max_ttft_p99_s), number(t.max_tpot_p99_s),
                     number(t.max_preemptions_per_s));
  out += "groups:\n";
  out += "  - name: " + yaml_string(o.group_name) + "\n";
  out += "    rules:\n";
  for (const auto& r : rules) {
    out += "      - alert: " + r.alert + "\n";
    out += "        expr: " + yaml_string(r.expr) + "\n";
    out += "        for: " + o.for_duration + "\n";
    out += "        labels:\n";
    out += "          severity: " + r.severity + "\n";
    out += "        annotations:\n";
    out += "          summary: " + yaml_string(r.summary) + "\n";
    out += "          description: " + yaml_string(r.description) + "\n";
  }
  return out;
}

}  // namespace headroom::watch
