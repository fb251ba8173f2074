// Each rule names the vLLM allocation it sizes (file and function, v1 unless said).
#include "diagnose/allocation_match.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "engine/encoder_profile.h"
#include "engine/vllm_defaults.h"
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

// The torch dtype's bytes: --dtype when the log or the command names it, else the checkpoint's.
double dtype_bytes_of(const LoggedRun& run, const ModelSpec& model) {
  std::string d = run.flags.dtype.value_or("auto");
  if (d == "auto") d = model.torch_dtype;
  return d == "float32" || d == "float" ? 4.0 : 2.0;
}

// The run's settings as the encoder profile needs them; what the log does not give takes vLLM's
// V1 defaults for an API server (arg_utils.py: 256 sequences, 8,192 batched tokens).
ResolvedSettings encoder_settings(const LoggedRun& run, const ModelSpec& model) {
  ResolvedSettings s;
  s.tensor_parallel_size = tp_of(run);
  s.max_model_len = run.flags.max_model_len.value_or(model.max_position_embeddings > 0 ? model.max_position_embeddings : 8192);
  s.max_num_seqs = run.flags.max_num_seqs.value_or(256);
  s.max_num_batched_tokens = run.flags.max_num_batched_tokens.value_or(8192);
  return s;
}

// The multimodal encoder's dummy batch in the profile run (engine/encoder_profile.h; v1
// gpu_model_runner.py profile_run, _get_mm_dummy_batch). Candidate tensors: one item's attention
// weights where the ViT attention falls back to torch SDPA's math path (heads per rank × patches²,
// in float32 from torch 2.5, which upcasts half inputs there, or in the model's dtype before), the
// batch's hidden states and MLP activations in the tower, and the embeddings it hands on.
std::optional<AllocationMatch> encoder_batch(double tried_gib, const LoggedRun& run, const ModelSpec& model) {
  if (!model.vision || run.engine_started) return std::nullopt;
  VllmVersion version = run.version.value_or(VllmVersion{0, 11});
  const double dtype = dtype_bytes_of(run, model);
  auto p = engine::encoder_profile(model, run.flags, encoder_settings(run, model), version, dtype, {});
  if (p.items <= 0 || p.item.patches <= 0) return std::nullopt;
  const auto& v = *model.vision;
  const bool dp_encoder = run.flags.mm_encoder_tp_mode && *run.flags.mm_encoder_tp_mode == "data";
  const double shard = dp_encoder ? 1.0 : tp_of(run);
  const double patches = static_cast<double>(p.item.patches);
  const double span = static_cast<double>(p.item.attention_span > 0 ? p.item.attention_span : p.item.patches);
  const double batch_patches = patches * p.items;
  const std::string batch = count(p.items) + " dummy " + p.item.modality + "(s) of " + count(p.item.patches) + " patches";
  struct Candidate {
    double bytes;
    std::string what;
    double confidence;
  };
  std::vector<Candidate> candidates;
  if (v.num_heads > 0) {
    const double heads = std::max(1.0, std::floor(v.num_heads / shard));
    for (double b : {4.0, dtype})
      candidates.push_back({heads * span * span * b,
                            util::fixed(heads, 0) + " heads × " + count(static_cast<long long>(span)) + "² patches × " + util::fixed(b, 0) +
                                " B: one dummy item's attention weights in the vision encoder (torch SDPA's math path)",
                            0.7});
  }
  if (v.hidden_size > 0)
    candidates.push_back({batch_patches * v.hidden_size * dtype,
                          batch + " × " + count(v.hidden_size) + " hidden × " + util::fixed(dtype, 0) + " B: the vision encoder's hidden states",
                          0.6});
  if (v.intermediate_size > 0)
    candidates.push_back({batch_patches * std::floor(v.intermediate_size / shard) * dtype,
                          batch + " × " + count(static_cast<long long>(v.intermediate_size / shard)) + " MLP width × " +
                              util::fixed(dtype, 0) + " B: the vision encoder's MLP activations",
                          0.6});
  if (p.cached_outputs > 0)
    candidates.push_back({static_cast<double>(p.cached_outputs),
                          count(p.items) + " × " + count(p.item.tokens) + " tokens of embeddings: the encoder's outputs for the dummy batch", 0.6});
  for (const auto& c : candidates)
    if (same_size(tried_gib, c.bytes))
      return AllocationMatch{"profile-run", size_text(c.bytes) + " = " + c.what + ": the profile run's encoder pass", c.confidence};
  return std::nullopt;
}

// CUDA graph capture (v1 gpu_model_runner.py capture_model): each capture size b runs the model on
// b tokens, and the graph's private pool takes its activations: the hidden states (b × hidden), the
// fused QKV projection (b × (heads + 2 KV heads) × head_dim / TP) and, for dense models, the fused
// gate/up projection and its product (b × 2I / TP, b × I / TP). Sizes from
// engine::cudagraph_capture_sizes for the version (v0.11's when unknown); the profile run's batch
// (max_num_batched_tokens tokens) has the same tensors, so that size is left out.
std::optional<AllocationMatch> graph_capture(double tried_gib, const LoggedRun& run, const ModelSpec& model) {
  if (run.engine_started || run.flags.enforce_eager || model.hidden_size <= 0) return std::nullopt;
  VllmVersion version = run.version.value_or(VllmVersion{0, 11});
  const int tp = tp_of(run);
  const double dtype = dtype_bytes_of(run, model);
  const int batched = run.flags.max_num_batched_tokens.value_or(8192);
  std::vector<int> seqs;
  if (run.flags.max_num_seqs) seqs.push_back(*run.flags.max_num_seqs);
  else seqs = {256, 1024};
  struct Width {
    double per_token;
    std::string what;
  };
  std::vector<Width> widths = {{static_cast<double>(model.hidden_size), count(model.hidden_size) + " hidden"}};
  if (model.num_attention_heads > 0 && model.head_dim > 0) {
    long long qkv = (static_cast<long long>(model.num_attention_heads) + 2LL * model.num_kv_heads) * model.head_dim / tp;
    widths.push_back({static_cast<double>(qkv), count(qkv) + " QKV width"});
  }
  if (!model.moe && model.intermediate_size > 0) {
    long long width = model.intermediate_size / tp;
    widths.push_back({2.0 * width, count(2 * width) + " gate/up width"});
    widths.push_back({static_cast<double>(width), count(width) + " MLP width"});
  }
  for (int n : seqs) {
    for (int b : engine::cudagraph_capture_sizes(version, n, batched)) {
      if (b == batched) continue;
      for (const auto& w : widths) {
        double size = b * w.per_token * dtype;
        if (size < 1048576.0 || !same_size(tried_gib, size)) continue;
        return AllocationMatch{"cuda-graph-capture",
                               size_text(size) + " = " + count(b) + " tokens (a CUDA graph capture size) × " + w.what + " × " +
                                   util::fixed(dtype, 0) + " B: capturing the graph for batch size " + count(b),
                               0.55};
      }
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
  if (model) {
    if (auto m = encoder_batch(tried_gib, run, *model)) return m;
    if (auto m = graph_capture(tried_gib, run, *model)) return m;
  }
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
    f.unclassified = r.wrapper;
    f.phase = match->phase;
    f.phase_basis = match->basis;
    f.phase_evidence = "allocation";
    f.phase_confidence = match->confidence;
    return;
  }
}

}  // namespace headroom
