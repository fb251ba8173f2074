// Each rule names the vLLM allocation it sizes (file and function, v1 unless said).
#include "diagnose/allocation_match.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "util/strings.h"

namespace headroom {

namespace {

constexpr double k_gib = 1073741824.0;

// torch prints sizes with format_size (c10/cuda/CUDACachingAllocator.cpp): "%.2f" in the largest
// unit below the value (bytes, KiB, MiB, GiB), so a printed size is exact to half a hundredth of it.
bool same_size(double printed_gib, double bytes) {
  double b = printed_gib * k_gib;
  double unit = bytes >= k_gib ? k_gib : bytes >= 1048576.0 ? 1048576.0 : bytes >= 1024.0 ? 1024.0 : 1.0;
  return std::abs(b - bytes) <= 0.0051 * unit;
}

std::string size_text(double bytes) {
  if (bytes >= k_gib) return util::fixed(bytes / k_gib, 2) + " GiB";
  if (bytes >= 1048576.0) return util::fixed(bytes / 1048576.0, 2) + " MiB";
  return util::fixed(bytes / 1024.0, 2) + " KiB";
}

std::string count(long long n) { return util::with_commas(n); }

std::optional<double> fact(const Finding& f, const char* name) {
  auto it = f.facts.find(name);
  if (it == f.facts.end() || !std::isfinite(it->second)) return std::nullopt;
  return it->second;
}

int tp_of(const LoggedRun& run) { return std::max(1, run.flags.tensor_parallel_size.value_or(1)); }

// The sampler's logits: max_num_seqs rows × vocabulary in float32 (v1/sample/sampler.py casts the
// logits to float32), and the int64 indices a top-k/top-p sort adds (v1/sample/ops/topk_topp_sampler.py).
// The warm-up (gpu_model_runner.py _dummy_sampler_run) uses max_num_seqs dummy requests. Without a
// logged max_num_seqs, vLLM's defaults are tried: 256 (V0, and V1 on most GPUs) and 1024 (V1 on
// large GPUs, arg_utils.py get_batch_defaults).
std::optional<AllocationMatch> sampler_logits(double tried_gib, const LoggedRun& run, const ModelSpec& model) {
  if (model.vocab_size <= 0) return std::nullopt;
  std::vector<int> seqs;
  if (run.flags.max_num_seqs) seqs.push_back(*run.flags.max_num_seqs);
  else seqs = {256, 1024};
  for (int n : seqs) {
    for (int bytes : {4, 8}) {
      double size = static_cast<double>(n) * static_cast<double>(model.vocab_size) * bytes;
      if (!same_size(tried_gib, size)) continue;
      std::string what = bytes == 4 ? "float32 logits" : "int64 sort indices";
      std::string phase = run.engine_started ? "runtime-decode" : "sampler-warmup";
      return AllocationMatch{phase,
                             size_text(size) + " = " + count(n) + " sequences × " + count(model.vocab_size) + " vocabulary × " +
                                 std::to_string(bytes) + " B (" + what + "): " +
                                 (run.engine_started ? "the sampler, serving a full batch" : "the sampler warm-up"),
                             run.flags.max_num_seqs ? 0.8 : 0.65};
    }
  }
  return std::nullopt;
}

// The KV cache: one tensor per attention layer (v1 gpu_model_runner.py _allocate_kv_cache_tensors),
// all together "Available KV cache memory".
std::optional<AllocationMatch> kv_cache_tensor(double tried_gib, const LoggedRun& run, const ModelSpec* model) {
  if (!run.kv_cache_gib || *run.kv_cache_gib <= 0) return std::nullopt;
  double kv = *run.kv_cache_gib * k_gib;
  // The logged KV memory has two decimals of GiB: compare within that rounding.
  auto near = [&](double size, double rounding) { return std::abs(tried_gib * k_gib - size) <= rounding + 0.0051 * 1048576.0; };
  if (near(kv, 0.005 * k_gib))
    return AllocationMatch{"kv-cache-alloc", size_text(kv) + " = the whole KV cache (Available KV cache memory)", 0.6};
  if (model && model->num_layers > 0) {
    int layers = model->num_layers;
    double per_layer = kv / layers;
    if (near(per_layer, 0.005 * k_gib / layers))
      return AllocationMatch{"kv-cache-alloc",
                             size_text(per_layer) + " = " + util::fixed(*run.kv_cache_gib, 2) + " GiB of KV cache / " +
                                 std::to_string(layers) + " layers: one layer's KV cache tensor",
                             0.7};
  }
  return std::nullopt;
}

// Weights: each parameter is created at its size per rank (ColumnParallelLinear / RowParallelLinear /
// VocabParallelEmbedding divide one dimension by TP) while the model is built and loaded.
std::optional<AllocationMatch> weight_tensor(double tried_gib, const LoggedRun& run, const ModelSpec& model) {
  if (!model.weights) return std::nullopt;
  int tp = tp_of(run);
  std::set<double> seen;
  for (const auto& t : model.weights->tensors) {
    double full = static_cast<double>(t.bytes);
    if (full < 1048576.0) continue;  // a few KiB of norms match anything
    for (double size : {full / tp, full}) {
      if (!seen.insert(size).second) continue;
      if (!same_size(tried_gib, size)) continue;
      return AllocationMatch{"weights-load",
                             size_text(size) + " = weight " + t.name + (size < full ? " / TP " + std::to_string(tp) : std::string()) +
                                 ": loading the weights",
                             0.7};
    }
  }
  return std::nullopt;
}

// Larger than the whole GPU: vLLM sizes the KV cache from the free memory, no weight tensor of a
// model that loads is that large per rank, and graph pools are small. What grows without such a
// bound is the profile run's dummy batch (gpu_model_runner.py profile_run: max_num_batched_tokens
// of activations, and the multimodal encoder's dummy inputs, whose attention is quadratic in the
// image tokens without a flash backend).
std::optional<AllocationMatch> beyond_capacity(double tried_gib, const Finding& f, const LoggedRun& run) {
  std::optional<double> total = fact(f, "total_gib");
  if (!total) total = run.total_gib;
  if (!total || *total <= 0 || tried_gib <= *total) return std::nullopt;
  if (run.engine_started) return std::nullopt;  // while serving, a long prefill can be as large
  return AllocationMatch{"profile-run",
                         util::fixed(tried_gib, 2) + " GiB is more than the GPU's " + util::fixed(*total, 2) +
                             " GiB: no weight, KV cache or graph tensor is that large; the profile run's dummy batch "
                             "(activations, a multimodal encoder's dummy inputs) is",
                         0.6};
}

}  // namespace

std::optional<AllocationMatch> match_allocation(double tried_gib, const Finding& finding, const LoggedRun& run,
                                                const ModelSpec* model) {
  if (!(tried_gib > 0) || !std::isfinite(tried_gib)) return std::nullopt;
  if (model) {
    if (auto m = sampler_logits(tried_gib, run, *model)) return m;
    if (auto m = weight_tensor(tried_gib, run, *model)) return m;
  }
  if (auto m = kv_cache_tensor(tried_gib, run, model)) return m;
  return beyond_capacity(tried_gib, finding, run);
}

void place_by_allocation(Diagnosis& d, const KnowledgeBase& kb, const ModelSpec* model) {
  if (!d.primary || !d.primary->out_of_memory || d.primary->phase != "unknown") return;
  Finding& f = *d.primary;
  auto tried = fact(f, "tried_gib");
  if (!tried) return;
  auto match = match_allocation(*tried, f, d.run, model);
  if (!match) return;
  for (const auto& r : kb.records()) {
    if (!r.out_of_memory || r.patterns.empty() || r.patterns.front().match != MatchRule::by_phase) continue;
    if (std::find(r.phases.begin(), r.phases.end(), match->phase) == r.phases.end()) continue;
    f.error_class = r.id;
    f.taxonomy_class = r.taxonomy_class;
    f.cause = r.cause;
    f.phase = match->phase;
    f.phase_basis = match->basis;
    f.phase_evidence = "allocation";
    f.phase_confidence = match->confidence;
    return;
  }
}

}  // namespace headroom
