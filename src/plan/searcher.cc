#include "plan/searcher.h"

#include "headroom/history.h"

#include <algorithm>

#include "plan/compact_weights.h"
#include "util/strings.h"

namespace headroom::plan {

bool is_outside_budget_failure(const std::string& c) {
  return c == "startup_free_memory_insufficient" || c == "cuda_graph_capture_oom" || c == "sampler_warmup_oom";
}

bool is_kv_failure(const std::string& c) { return c == "kv_cache_insufficient" || c == "no_kv_cache_memory"; }

WeightsCache::WeightsCache(const ModelSpec& m) : model(m) {
  // One pass over the full list merges the experts of each layer (a stage per layer); the
  // compaction for each pipeline size then starts from that short list.
  full = compact_inventory(m, m.weights ? *m.weights : synthesize_weights(m), std::max(1, m.num_layers));
}

const ModelSpec& WeightsCache::model_for(int pp) {
  auto it = compacted.find(pp);
  if (it != compacted.end()) return it->second;
  ModelSpec compact = model;
  compact.weights = compact_inventory(model, full, pp);
  return compacted.emplace(pp, std::move(compact)).first->second;
}

Searcher::Searcher(const ModelSpec& model, const GpuSetup& gpus, const VllmVersion& version, Bytes margin,
                   std::optional<std::string> quantization, std::shared_ptr<WeightsCache> cache)
    : m_model(model), m_margin_setup(gpus), m_version(version), m_margin(margin), m_quantization(std::move(quantization)),
      m_cache(cache && &cache->model == &model ? std::move(cache) : std::make_shared<WeightsCache>(model)) {
  m_margin_setup.free_bytes = gpus.free_bytes.value_or(gpus.gpu.total_bytes) - margin;
  m_margin_setup.memory_holders.clear();
}

VllmFlags Searcher::flags_for(Layout layout, const Variant& v, std::int64_t max_model_len, int util_percent) const {
  VllmFlags f;
  m_kept.apply(f);
  f.tensor_parallel_size = layout.tp;
  f.pipeline_parallel_size = layout.pp;
  f.max_model_len = max_model_len;
  f.gpu_memory_utilization = util_percent / 100.0;
  f.kv_cache_dtype = v.kv_cache_dtype;
  f.max_num_seqs = v.max_num_seqs;
  f.enforce_eager = v.enforce_eager;
  if (m_quantization) f.quantization = m_quantization;
  return f;
}

Result<Prediction> Searcher::predict_with_margin(Layout layout, const VllmFlags& flags) {
  ++m_predictions;
  if (m_history && !m_history->empty())
    return predict_with_history(m_cache->model_for(layout.pp), m_margin_setup, flags, m_version, *m_history);
  return predict(m_cache->model_for(layout.pp), m_margin_setup, flags, m_version);
}

namespace {

std::string gib_text(Bytes b) { return util::fixed(to_gib(b), 2) + " GiB"; }

bool kv_holds(const Prediction& p, int concurrency) {
  if (p.failure && is_kv_failure(p.failure->error_class)) return false;
  return p.num_gpu_blocks > 0 && p.max_concurrency + 1e-9 >= concurrency;
}

bool outside_fits(const Prediction& p) { return !p.failure || !is_outside_budget_failure(p.failure->error_class); }

}  // namespace

Evaluation Searcher::evaluate(Layout layout, const Variant& variant, std::int64_t max_model_len, int concurrency) {
  Evaluation e;
  e.layout = layout;
  e.variant = variant;
  e.max_model_len = max_model_len;
  e.concurrency = concurrency;
  auto at = [&](int k) { return predict_with_margin(layout, flags_for(layout, variant, max_model_len, k)); };

  // The probe at the lowest utilization: failures that no utilization changes show up here
  // (configuration, weights load, profile run), and the startup check cannot fail lower.
  auto probe = at(k_min_util);
  if (!probe) {
    e.failure_kind = FailureKind::error;
    e.failure = probe.error().to_string();
    return e;
  }
  e.at_hi = *probe;
  if (probe->failure && !is_kv_failure(probe->failure->error_class)) {
    const auto& c = probe->failure->error_class;
    e.failure_kind = is_outside_budget_failure(c) ? FailureKind::outside_budget
                     : (c == "weights_load_oom" || c == "profile_run_oom") ? FailureKind::weights
                                                                            : FailureKind::config;
    if (c == "weights_load_oom")
      e.failure = "the weights (" + gib_text(probe->memory.weights) + " per GPU) do not load";
    else if (c == "profile_run_oom")
      e.failure = "weights (" + gib_text(probe->memory.weights) + ") + activation peak (" + gib_text(probe->memory.activation_peak) +
                  ") per GPU run out of memory in the profile run";
    else
      e.failure = probe->failure->message;
    return e;
  }
  // Highest utilization the memory outside the budget allows (monotone: a larger budget leaves
  // less outside it). Invariant: lo fits, hi does not.
  int lo = k_min_util, hi = k_max_util + 1;
  std::optional<Prediction> hi_pred;
  {
    auto top = at(k_max_util);
    if (top && outside_fits(*top)) {
      lo = k_max_util;
    } else if (top) {
      hi = k_max_util;
      hi_pred = *top;
    }
  }
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    auto p = at(mid);
    if (p && outside_fits(*p)) {
      lo = mid;
    } else {
      hi = mid;
      if (p) hi_pred = *p;
    }
  }
  e.k_hi = lo;
  e.above_hi = hi <= k_max_util ? hi_pred : std::nullopt;
  auto top = at(e.k_hi);
  if (!top) {
    e.failure_kind = FailureKind::error;
    e.failure = top.error().to_string();
    return e;
  }
  e.at_hi = *top;
  if (!kv_holds(*top, concurrency) || top->failure) {
    e.failure_kind = top->failure && !is_kv_failure(top->failure->error_class) ? FailureKind::outside_budget : FailureKind::kv_cache;
    e.failure = e.failure_kind == FailureKind::outside_budget
                    ? top->failure->message
                    : "at most " + util::fixed(e.k_hi / 100.0, 2) +
                          " is safe, where the KV cache holds " + util::with_commas(top->kv_cache_tokens) + " tokens, " +
                          util::fixed(top->max_concurrency, 2) + " of the " +
                          std::to_string(concurrency) + " request(s) needed";
    return e;
  }
  // Lowest utilization whose KV cache still holds the workload. Invariant: hi holds it, lo does not.
  int klo = k_min_util - 1, khi = e.k_hi;
  std::optional<Prediction> lo_pred;
  while (khi - klo > 1) {
    int mid = (klo + khi) / 2;
    auto p = at(mid);
    if (p && kv_holds(*p, concurrency)) {
      khi = mid;
    } else {
      klo = mid;
      if (p) lo_pred = *p;
    }
  }
  e.k_lo = khi;
  e.below_lo = klo >= k_min_util ? lo_pred : std::nullopt;
  e.feasible = true;
  return e;
}

std::int64_t Searcher::longest_context(Layout layout, const Variant& variant, int concurrency, std::int64_t upper) {
  // The utilization bound hardly depends on max_model_len; take it at a short context.
  Evaluation base = evaluate(layout, variant, std::min<std::int64_t>(upper, 256), concurrency);
  if (!base.feasible) return 0;
  auto holds = [&](std::int64_t len) {
    auto p = predict_with_margin(layout, flags_for(layout, variant, len, base.k_hi));
    return p && !p->failure && kv_holds(*p, concurrency);
  };
  if (holds(upper)) return upper;
  std::int64_t lo = 0, hi = upper;  // lo holds (0 trivially), hi does not
  while (hi - lo > 1) {
    std::int64_t mid = lo + (hi - lo) / 2;
    if (holds(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

}  // namespace headroom::plan
