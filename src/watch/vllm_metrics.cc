// Reading vLLM's metrics from a parsed /metrics page. The names come from vLLM's metrics modules:
// vllm/engine/metrics.py (V0 engine, to v0.10) and vllm/v1/metrics/loggers.py (V1 engine, v0.8+).
// Renames handled here:
//   vllm:gpu_cache_usage_perc        → vllm:kv_cache_usage_perc (V1, ~v0.10/0.11; both 0–1 fractions)
//   vllm:num_preemptions (old pages) → vllm:num_preemptions_total
//   vllm:gpu_prefix_cache_*_total    → vllm:prefix_cache_*_total (V1, v0.9)
//   vllm:time_per_output_token_seconds → vllm:inter_token_latency_seconds (V1, v0.11; both exported for a while)
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "headroom/watch.h"

namespace headroom::watch {

using prometheus::Exposition;
using prometheus::Sample;

namespace {

using SampleIndex = std::unordered_map<std::string_view, std::vector<const Sample*>>;

SampleIndex index_samples(const Exposition& page) {
  SampleIndex index;
  for (const auto& family : page.families)
    for (const auto& s : family.samples) index[s.name].push_back(&s);
  return index;
}

const std::vector<const Sample*>* find_any(const SampleIndex& index, std::initializer_list<std::string_view> names) {
  for (auto name : names) {
    auto it = index.find(name);
    if (it != index.end() && !it->second.empty()) return &it->second;
  }
  return nullptr;
}

enum class Combine { sum, max };

std::optional<double> read_value(const SampleIndex& index, std::initializer_list<std::string_view> names,
                                 Combine combine = Combine::sum) {
  const auto* samples = find_any(index, names);
  if (samples == nullptr) return std::nullopt;
  std::optional<double> out;
  for (const Sample* s : *samples) {
    if (std::isnan(s->value)) continue;
    if (!out) out = s->value;
    else if (combine == Combine::sum) *out += s->value;
    else out = std::max(*out, s->value);
  }
  return out;
}

std::optional<double> parse_double(std::string_view text) {
  double v = 0;
  if (text == "+Inf" || text == "Inf") return INFINITY;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_int(std::string_view text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// Adds every series of histogram `base` together, bucket by bucket.
std::optional<Histogram> read_histogram(const SampleIndex& index, const std::string& base) {
  auto buckets = index.find(base + "_bucket");
  if (buckets == index.end() || buckets->second.empty()) return std::nullopt;
  std::map<double, double> by_bound;
  for (const Sample* s : buckets->second) {
    const std::string* le = s->label("le");
    if (le == nullptr || std::isnan(s->value)) continue;
    auto bound = parse_double(*le);
    if (!bound) continue;
    by_bound[*bound] += s->value;
  }
  if (by_bound.empty()) return std::nullopt;
  Histogram h;
  h.upper_bounds.reserve(by_bound.size() + 1);
  h.cumulative_counts.reserve(by_bound.size() + 1);
  for (const auto& [bound, count] : by_bound) {
    h.upper_bounds.push_back(bound);
    h.cumulative_counts.push_back(count);
  }
  if (auto c = read_value(index, {base + "_count"})) h.count = *c;
  if (auto s = read_value(index, {base + "_sum"})) h.sum = *s;
  if (!std::isinf(h.upper_bounds.back())) {  // a page without the +Inf bucket: _count is its value
    h.upper_bounds.push_back(INFINITY);
    h.cumulative_counts.push_back(std::max(h.count, h.cumulative_counts.back()));
  }
  return h;
}

std::optional<CacheConfigInfo> read_cache_config(const SampleIndex& index) {
  const auto* samples = find_any(index, {"vllm:cache_config_info"});
  if (samples == nullptr) return std::nullopt;
  CacheConfigInfo info;
  for (const Sample* s : *samples) {
    if (const std::string* v = s->label("num_gpu_blocks")) {
      if (auto blocks = parse_int(*v))
        info.num_gpu_blocks = info.num_gpu_blocks ? std::min(*info.num_gpu_blocks, *blocks) : *blocks;
    }
    if (const std::string* v = s->label("block_size"); v && !info.block_size) {
      if (auto b = parse_int(*v)) info.block_size = static_cast<int>(*b);
    }
    if (const std::string* v = s->label("gpu_memory_utilization"); v && !info.gpu_memory_utilization)
      info.gpu_memory_utilization = parse_double(*v);
    if (const std::string* v = s->label("cache_dtype"); v && info.cache_dtype.empty()) info.cache_dtype = *v;
  }
  return info;
}

}  // namespace

bool VllmSnapshot::has_vllm_metrics() const {
  return requests_running || requests_waiting || kv_cache_usage || prompt_tokens_total || generation_tokens_total ||
         ttft || tpot || cache_config;
}

VllmSnapshot read_vllm_metrics(const Exposition& page, double time_s) {
  SampleIndex index = index_samples(page);
  VllmSnapshot s;
  s.time_s = time_s;

  std::set<std::string> models;
  std::set<std::string> engines;
  for (const auto& [name, samples] : index) {
    if (name.substr(0, 5) != "vllm:") continue;
    for (const Sample* sample : samples) {
      if (const std::string* m = sample->label("model_name"); m && models.size() < 16) models.insert(*m);
      if (const std::string* e = sample->label("engine"); e && engines.size() < 1024) engines.insert(*e);
    }
  }
  s.model_names.assign(models.begin(), models.end());

  s.requests_running = read_value(index, {"vllm:num_requests_running"});
  s.requests_waiting = read_value(index, {"vllm:num_requests_waiting"});
  s.requests_swapped = read_value(index, {"vllm:num_requests_swapped"});
  if ((s.kv_cache_usage = read_value(index, {"vllm:kv_cache_usage_perc"}, Combine::max)))
    s.kv_cache_usage_metric = "vllm:kv_cache_usage_perc";
  else if ((s.kv_cache_usage = read_value(index, {"vllm:gpu_cache_usage_perc"}, Combine::max)))
    s.kv_cache_usage_metric = "vllm:gpu_cache_usage_perc";

  s.preemptions_total = read_value(index, {"vllm:num_preemptions_total", "vllm:num_preemptions"});
  s.prompt_tokens_total = read_value(index, {"vllm:prompt_tokens_total"});
  s.generation_tokens_total = read_value(index, {"vllm:generation_tokens_total"});
  s.requests_finished_total = read_value(index, {"vllm:request_success_total"});
  s.prefix_cache_queries_total =
      read_value(index, {"vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"});
  s.prefix_cache_hits_total = read_value(index, {"vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"});

  s.ttft = read_histogram(index, "vllm:time_to_first_token_seconds");
  if ((s.tpot = read_histogram(index, "vllm:inter_token_latency_seconds")))
    s.tpot_metric = "vllm:inter_token_latency_seconds";
  else if ((s.tpot = read_histogram(index, "vllm:time_per_output_token_seconds")))
    s.tpot_metric = "vllm:time_per_output_token_seconds";
  s.e2e_latency = read_histogram(index, "vllm:e2e_request_latency_seconds");
  s.queue_time = read_histogram(index, "vllm:request_queue_time_seconds");

  s.avg_prompt_throughput_tokens_per_s = read_value(index, {"vllm:avg_prompt_throughput_toks_per_s"});
  s.avg_generation_throughput_tokens_per_s = read_value(index, {"vllm:avg_generation_throughput_toks_per_s"});
  s.cache_config = read_cache_config(index);
  s.engines = s.has_vllm_metrics() ? std::max<int>(1, static_cast<int>(engines.size())) : 0;
  return s;
}

std::optional<double> histogram_quantile(double q, const Histogram& h) {
  const auto& bounds = h.upper_bounds;
  const auto& counts = h.cumulative_counts;
  if (bounds.size() < 2 || counts.size() != bounds.size() || !std::isinf(bounds.back())) return std::nullopt;
  double observations = counts.back();
  if (!(observations > 0)) return std::nullopt;
  q = std::clamp(q, 0.0, 1.0);
  double rank = q * observations;
  std::size_t b = 0;
  // Counts are cumulative; a non-monotonic page (summed from series scraped at different moments)
  // is read as if each bucket held at least the one before.
  double previous = 0;
  while (b < counts.size() && std::max(counts[b], previous) < rank) previous = std::max(counts[b++], previous);
  if (b >= bounds.size() - 1) return bounds[bounds.size() - 2];
  if (b == 0 && bounds[0] <= 0) return bounds[0];
  double start = b == 0 ? 0 : bounds[b - 1];
  double below = b == 0 ? 0 : previous;
  double in_bucket = std::max(counts[b], previous) - below;
  if (!(in_bucket > 0)) return bounds[b];
  return start + (bounds[b] - start) * ((rank - below) / in_bucket);
}

}  // namespace headroom::watch
