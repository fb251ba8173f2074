// Alerts on a watched vLLM server, each with the change that addresses it, and the comparison of
// the live KV cache capacity with headroom's prediction.
#include <fmt/format.h>

#include <cmath>

#include "headroom/vllm_engine.h"
#include "headroom/watch.h"
#include "util/json_file.h"
#include "util/strings.h"

namespace headroom::watch {

std::string_view to_string(Severity s) { return s == Severity::critical ? "critical" : "warning"; }

namespace {

// Flag name, JSON key and field of each threshold, in the order of the flags.
struct ThresholdField {
  const char* flag;
  const char* key;
  double AlertThresholds::*field;
};
constexpr ThresholdField k_threshold_fields[] = {
    {"--max-waiting", "max_waiting", &AlertThresholds::max_waiting},
    {"--max-kv-usage", "max_kv_usage", &AlertThresholds::max_kv_usage},
    {"--max-ttft-p99", "max_ttft_p99", &AlertThresholds::max_ttft_p99_s},
    {"--max-tpot-p99", "max_tpot_p99", &AlertThresholds::max_tpot_p99_s},
    {"--max-preemption-rate", "max_preemption_rate", &AlertThresholds::max_preemptions_per_s},
    {"--max-kv-mismatch", "max_kv_mismatch", &AlertThresholds::max_kv_blocks_mismatch},
};

std::string number(double v) { return fmt::format("{:g}", v); }

std::string milliseconds(double seconds) { return fmt::format("{:.0f} ms", seconds * 1000); }

std::string over_what(const DerivedFigures& d) {
  if (d.quantile_basis == QuantileBasis::since_start) return "since the server started";
  return fmt::format("over the last {:.0f} s", d.window_s);
}

}  // namespace

Result<void> validate_thresholds(const AlertThresholds& t) {
  auto bad = [](const char* flag, const std::string& expected, double got) {
    return make_error(ErrorCode::invalid_argument, "expected " + expected + ", got " + number(got), flag);
  };
  if (!(t.max_waiting >= 0)) return bad("--max-waiting", "a count of at least 0", t.max_waiting);
  if (!(t.max_kv_usage > 0 && t.max_kv_usage <= 1)) return bad("--max-kv-usage", "a fraction in (0, 1]", t.max_kv_usage);
  if (!(t.max_ttft_p99_s > 0)) return bad("--max-ttft-p99", "seconds above 0", t.max_ttft_p99_s);
  if (!(t.max_tpot_p99_s > 0)) return bad("--max-tpot-p99", "seconds above 0", t.max_tpot_p99_s);
  if (!(t.max_preemptions_per_s >= 0))
    return bad("--max-preemption-rate", "preemptions per second of at least 0", t.max_preemptions_per_s);
  if (!(t.max_kv_blocks_mismatch > 0 && t.max_kv_blocks_mismatch < 1))
    return bad("--max-kv-mismatch", "a fraction in (0, 1)", t.max_kv_blocks_mismatch);
  return {};
}

Result<AlertThresholds> read_thresholds_file(const std::string& path, AlertThresholds base) {
  auto text = util::read_file(path);
  if (!text) return tl::unexpected(text.error());
  auto json = util::parse_json(*text, path);
  if (!json) return tl::unexpected(json.error());
  if (!json->is_object())
    return make_error(ErrorCode::invalid_argument, std::string("expected a JSON object of thresholds, got ") + json->type_name(), path);
  std::vector<std::string> keys;
  for (const auto& f : k_threshold_fields) keys.emplace_back(f.key);
  for (const auto& [key, value] : json->items()) {
    const ThresholdField* field = nullptr;
    for (const auto& f : k_threshold_fields)
      if (key == f.key) field = &f;
    if (field == nullptr) {
      std::string msg = "unknown threshold \"" + key + "\"";
      auto close = util::closest_matches(key, keys);
      msg += close.empty() ? "; expected one of " + util::join(keys, ", ") : "; did you mean " + util::or_list(close) + "?";
      return make_error(ErrorCode::invalid_argument, msg, path);
    }
    if (!value.is_number())
      return make_error(ErrorCode::invalid_argument,
                        "expected a number for \"" + key + "\", got " + std::string(value.type_name()), path);
    base.*(field->field) = value.get<double>();
  }
  return base;
}

KvCapacityExpectation expectation_from(const Prediction& prediction, std::string setup) {
  return KvCapacityExpectation{prediction.num_gpu_blocks, prediction.settings.block_size, std::move(setup)};
}

KvCapacityCheck compare_kv_capacity(const KvCapacityExpectation& expected, const VllmSnapshot& live,
                                    double max_relative_difference) {
  KvCapacityCheck check;
  check.predicted_blocks = expected.num_gpu_blocks;
  if (live.cache_config && live.cache_config->num_gpu_blocks) check.live_blocks = *live.cache_config->num_gpu_blocks;
  if (!check.live_blocks) return check;
  if (expected.num_gpu_blocks <= 0) {
    // Predicted not to start at all, yet the server runs with a KV cache: that is a mismatch too.
    check.mismatch = *check.live_blocks > 0;
    return check;
  }
  double diff = static_cast<double>(*check.live_blocks - expected.num_gpu_blocks) / static_cast<double>(expected.num_gpu_blocks);
  check.relative_difference = diff;
  check.mismatch = std::fabs(diff) > max_relative_difference;
  return check;
}

std::vector<Alert> evaluate_alerts(const VllmSnapshot& s, const DerivedFigures& d, const AlertThresholds& t,
                                   const std::optional<KvCapacityCheck>& kv_check) {
  std::vector<Alert> alerts;
  if (s.requests_waiting && *s.requests_waiting > t.max_waiting) {
    alerts.push_back({"requests_waiting", Severity::warning, *s.requests_waiting, t.max_waiting,
                      fmt::format("{} requests waiting (threshold {})", number(*s.requests_waiting), number(t.max_waiting)),
                      "scale out (another replica), or raise --max-num-seqs when the KV cache has room for more "
                      "running requests"});
  }
  if (s.kv_cache_usage && *s.kv_cache_usage > t.max_kv_usage) {
    alerts.push_back({"kv_cache_full", Severity::warning, *s.kv_cache_usage, t.max_kv_usage,
                      fmt::format("KV cache {:.1f}% full (threshold {}%)", *s.kv_cache_usage * 100,
                                  number(t.max_kv_usage * 100)),
                      "give the KV cache more memory (higher --gpu-memory-utilization, or more GPUs with -tp), "
                      "shorten --max-model-len, or store it in fp8 (--kv-cache-dtype fp8)"});
  }
  if (d.ttft_p99_s && *d.ttft_p99_s > t.max_ttft_p99_s) {
    alerts.push_back({"ttft_p99_high", Severity::warning, *d.ttft_p99_s, t.max_ttft_p99_s,
                      fmt::format("time to first token p99 {:.2f} s {} (threshold {} s)", *d.ttft_p99_s, over_what(d),
                                  number(t.max_ttft_p99_s)),
                      "enable chunked prefill (--enable-chunked-prefill) with a smaller --max-num-batched-tokens so "
                      "long prompts do not hold up the batch, and prefix caching (--enable-prefix-caching) for "
                      "shared prompt prefixes"});
  }
  if (d.tpot_p99_s && *d.tpot_p99_s > t.max_tpot_p99_s) {
    alerts.push_back({"tpot_p99_high", Severity::warning, *d.tpot_p99_s, t.max_tpot_p99_s,
                      fmt::format("time per output token p99 {} {} (threshold {})", milliseconds(*d.tpot_p99_s),
                                  over_what(d), milliseconds(t.max_tpot_p99_s)),
                      "lower --max-num-seqs to shrink the decode batch, lower --max-num-batched-tokens so prefill "
                      "chunks interrupt decoding less, or spread the model over more GPUs (-tp)"});
  }
  if (d.preemptions_per_s && *d.preemptions_per_s > t.max_preemptions_per_s) {
    alerts.push_back({"preemptions_rising", Severity::critical, *d.preemptions_per_s, t.max_preemptions_per_s,
                      fmt::format("{:.2f} preemptions/s over the last {:.0f} s: requests are evicted for lack of KV "
                                  "blocks and recomputed",
                                  *d.preemptions_per_s, d.window_s),
                      "give the KV cache more memory (higher --gpu-memory-utilization), lower --max-num-seqs, or use "
                      "--kv-cache-dtype fp8"});
  }
  if (kv_check && kv_check->mismatch) {
    std::string diff = kv_check->relative_difference ? fmt::format(" ({:+.1f}%)", *kv_check->relative_difference * 100) : "";
    alerts.push_back({"kv_capacity_mismatch", Severity::warning, static_cast<double>(kv_check->live_blocks.value_or(0)),
                      static_cast<double>(kv_check->predicted_blocks),
                      fmt::format("the server has {} KV cache blocks, headroom predicted {}{}",
                                  util::with_commas(kv_check->live_blocks.value_or(0)),
                                  util::with_commas(kv_check->predicted_blocks), diff),
                      "the server does not run the setup that was predicted: compare the flags and GPUs it was "
                      "started with, and look for other processes holding GPU memory"});
  }
  return alerts;
}

}  // namespace headroom::watch
