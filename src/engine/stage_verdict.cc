// Stage 8 of predict(): the verdict — the first failure in the order vLLM meets them — and the
// report: the memory split of every pipeline stage, the KV cache's capacity, where each term came
// from, the notes in the order the stages made them, and the spread outside the calibration.
#include "engine/predict_stages.h"
#include "engine/uncertainty.h"

namespace headroom::engine {

namespace {

// The memory split of each pipeline stage, first to last.
std::vector<MemoryBreakdown> stage_memory(const StageResults& r) {
  MemoryBreakdown base;
  base.total = r.budget.total;
  base.budget = r.budget.budget;
  base.outside_budget = r.budget.total - r.budget.budget;
  base.baseline = r.budget.baseline;
  if (r.config.era.non_kv_includes_device_baseline && !r.config.settings.kv_cache_memory_bytes)
    base.charged_baseline = r.budget.baseline + r.budget.other_processes;
  const bool graphs_in_budget = r.config.settings.estimate_cuda_graphs;
  std::vector<MemoryBreakdown> out;
  for (std::size_t st = 0; st < r.profile.ranks.size(); ++st) {
    const RankProfile& p = r.profile.ranks[st];
    MemoryBreakdown m = base;
    m.weights = r.weights.ranks[st].resident;
    m.activation_peak = p.activation;
    m.encoder_profile = p.encoder_share;
    m.non_torch = p.non_torch;
    m.cuda_graph = graphs_in_budget ? p.graph_estimate : p.graph;
    m.kv_cache = p.kv_available;
    out.push_back(m);
  }
  return out;
}

// The first failure before graph capture, in vLLM's order: configuration and worker init, the
// free-memory check, model construction, loading the weights, the profile run, the KV cache.
std::optional<Failure> failure_before_graphs(const StageResults& r) {
  const std::size_t b = r.layout.binding;
  for (const auto* f : {&r.before_allocation.failure, &r.budget.free_memory_failure, &r.weights.construction_failure,
                        &r.weights.ranks[b].oom, &r.profile.ranks[b].oom})
    if (*f) return *f;
  if (!r.capacity.failures.empty()) return r.capacity.failures.front();
  return std::nullopt;
}

TermSources term_sources(const LoadedWeights& weights, const PredictOptions& options) {
  TermSources t;
  const std::string measured = options.measured ? options.measured->source : "";
  t.weights = weights.source;
  t.activation_peak = options.measured && options.measured->activation_peak ? measured : "estimate";
  t.non_torch = options.measured && options.measured->non_torch ? measured : "estimate";
  t.cuda_graph = options.measured && options.measured->cuda_graph ? measured : "estimate";
  return t;
}

// The notes of every stage in the order vLLM meets what they describe, then the graphs' place in
// the budget and the processes that hold memory.
std::vector<std::string> report_notes(const GpuSetup& gpus, const StageResults& r, bool after_kv_ran) {
  std::vector<std::string> notes = r.config.notes;
  for (const auto* part : {&r.weights.notes, &r.layout.notes, &r.budget.notes, &r.capacity.notes})
    notes.insert(notes.end(), part->begin(), part->end());
  if (after_kv_ran) notes.insert(notes.end(), r.after_kv.notes.begin(), r.after_kv.notes.end());
  const ResolvedSettings& s = r.config.settings;
  const RankProfile& w = r.profile.ranks[r.layout.binding];
  // The encoder runs on the first pipeline stage only.
  if (!r.profile.ranks.empty() && !r.profile.ranks.front().encoder_note.empty())
    notes.push_back(r.profile.ranks.front().encoder_note);
  if (w.fusion_workspace > 0)
    notes.push_back("non-torch memory includes FlashInfer's all-reduce + RMSNorm fusion workspace (" + gib(w.fusion_workspace) +
                    " per GPU: three multicast buffers rounded to 512 MiB), which vLLM compiles in at TP " +
                    std::to_string(s.tensor_parallel_size) + " on NVSwitch boards; --enforce-eager, or --compilation-config "
                    "'{\"pass_config\": {\"fuse_allreduce_rms\": false}}', leaves it out");
  if (w.runner_buffers > 0)
    notes.push_back("non-torch memory includes the model runner's persistent buffers (" + gib(w.runner_buffers) +
                    std::string(r.config.era.model_runner_v2
                                    ? ": model runner v2's penalty counts, [--max-num-seqs, vocab] int32, and its bitmasks"
                                    : ": the V1 runner's inputs_embeds, [--max-num-batched-tokens, hidden]") +
                    "), which vLLM counts in its consumed memory from v0.26");
  if (s.estimate_cuda_graphs)
    notes.push_back("CUDA graph memory is estimated by vLLM's profile (" + gib(w.graph_estimate) +
                    ") and subtracted from the budget before the KV cache (v0.21+); the full capture after it takes about " +
                    gib(w.graph));
  else if (!s.enforce_eager)
    notes.push_back("CUDA graph memory (" + gib(w.graph) +
                    ") is not charged to the budget in this version: it must fit in the memory outside it");
  if (gpus.free_bytes && r.budget.other_processes > 0)
    for (const auto& h : gpus.memory_holders) notes.push_back(h);
  return notes;
}

// What the model side adds to the KV range: the encoder's pass where it sets the activation (an
// estimate from the tower's widths) and what it already charged, and a guessed quantization's
// other reading.
ModelUncertainty model_uncertainty(const ModelSpec& model, const StageResults& r) {
  ModelUncertainty u;
  const RankProfile& rank = r.profile.ranks[r.layout.binding];
  u.encoder_pass_estimate = rank.encoder_pass_estimate;
  u.encoder_pass_modelled = rank.encoder_pass_modelled;
  if (rank.encoder_pass_unsized) u.unsized_tower = model.architecture;
  u.audio_pass_unsized = rank.audio_pass_unsized;
  u.audio_profiled = rank.audio_profiled;
  u.encoder_other_reading = rank.encoder_other_reading;
  u.encoder_other_reading_why = rank.encoder_other_reading_why;
  u.sampler_sets_peak = rank.sampler_sets_peak;
  u.runner_v2_sampler_less = rank.runner_v2_sampler_less;
  u.rocm_moe_padding = r.weights.rocm_moe_padding_unsettled;
  u.architecture_assumed_from = model.architecture_assumed_from;
  u.gdn_graph_estimate_transient = r.config.settings.estimate_cuda_graphs && !(r.config.version < VllmVersion{0, 26}) &&
                                   has_kind(model, LayerKind::linear_attention);
  if (model.quantization) {
    // 0 unless the method was guessed or part of its ignore list is unknown.
    u.guessed_quantization_extra = guessed_quantization_extra_bytes(model, r.weights.plan);
    u.guessed_method = model.quantization->method;
    if (model.quantization->guessed_from.empty()) u.unknown_ignore_entries = model.quantization->ignore_entries_unaccounted;
  }
  return u;
}

}  // namespace

Prediction verdict_and_notes(const ModelSpec& model, const GpuSetup& gpus, const PredictOptions& options,
                             const StageResults& r) {
  const ResolvedConfig& c = r.config;
  Prediction p;
  p.version = c.requested_version;
  p.rules_version = c.era.rules;
  p.modelled_with = c.era.modelled_with;
  p.settings = c.settings;
  p.settings.block_size = r.layout.summary.block_size;
  p.settings.max_model_len = r.capacity.max_model_len;
  p.gpus_used = c.gpus_used;
  p.stages = stage_memory(r);
  p.memory = p.stages[r.layout.binding];
  p.kv = r.layout.summary;
  p.kv.blocks_per_request = r.capacity.blocks_per_request;
  p.sources = term_sources(r.weights, options);
  p.num_gpu_blocks = r.layout.num_gpu_blocks;
  p.kv_cache_tokens = r.capacity.kv_cache_tokens;
  p.max_concurrency = r.capacity.max_concurrency;
  p.largest_fitting_max_model_len = r.capacity.largest_fitting_max_model_len;
  // Graph capture and the sampler warm-up run only when everything before them passed.
  p.failure = failure_before_graphs(r);
  const bool after_kv_ran = !p.failure;
  if (after_kv_ran) p.failure = r.after_kv.failure;
  p.warnings = c.warnings;
  p.warnings.insert(p.warnings.end(), r.before_allocation.warnings.begin(), r.before_allocation.warnings.end());
  p.notes = report_notes(gpus, r, after_kv_ran);
  const int tp = c.settings.tensor_parallel_size;
  // --kv-cache-memory-bytes: the KV cache is what the user reserved, whatever the profile found.
  if (!c.settings.kv_cache_memory_bytes)
    p.uncertainty = kv_uncertainty(gpus.gpu, c.requested_version, tp, p.memory, p.kv_cache_tokens, c.settings.estimate_cuda_graphs,
                                   model.vision.has_value() && !r.profile.ranks[r.layout.binding].encoder_pass_off &&
                                       (model.vision->image_size == 0 || r.profile.ranks[r.layout.binding].encoder_pass_unsized),
                                   r.profile.ranks[r.layout.binding].sampler_other_path, gpus.nodes > 1 && tp > gpus.count,
                                   model_uncertainty(model, r));
  p.kv_range = stated_kv_range(p.uncertainty, p.memory.kv_cache, p.kv_cache_tokens, c.settings.kv_cache_memory_bytes.has_value());
  p.starts = !p.failure.has_value();
  return p;
}

}  // namespace headroom::engine
