// Stage 5 of predict(): the profile run and what it leaves for the KV cache
// (v1/worker/gpu_worker.py determine_available_memory → gpu_model_runner.py profile_run, then
// profile_cudagraph_memory where graphs are estimated). Each term of the profile is a function
// below; a new term (another dummy pass vLLM makes before sizing the KV cache) is one more
// function and one more line in profile_rank().
#include <algorithm>
#include <cmath>

#include "engine/empirical.h"
#include "engine/encoder_profile.h"
#include "engine/predict_stages.h"
#include "engine/quant_kernels.h"
#include "engine/uncertainty.h"
#include "engine/vllm_defaults.h"
#include "util/strings.h"

namespace headroom::engine {

namespace {

// What one rank's profile needs to know of its place in the pipeline.
struct RankPlace {
  int index = 0;  // pipeline stage, 0 first
  int stage_layers = 0;
  bool last = true;
};

// The multimodal encoder's pass on vLLM's dummy batch, first pipeline stage only
// (gpu_model_runner.py profile_run: the encoder runs on _get_mm_dummy_batch before _dummy_run and
// its outputs stay in the encoder cache through the language model's dummy run). What it adds to
// the activation is decided in estimate_activation: torch's peak is the larger of the encoder's
// own peak and the language model's with those outputs held (encoder_profile.h).
EncoderProfile profile_encoder(const ModelSpec& model, const VllmFlags& flags, const ResolvedConfig& config,
                               const RankPlace& place, const EncoderDevice& device) {
  if (place.index != 0 || !is_multimodal(model)) return {};
  return encoder_profile(model, flags, config.settings, config.version, config.model_dtype_bytes, device);
}

// The dummy forward pass and the sampler's dummy run (gpu_model_runner.py _dummy_run,
// _dummy_sampler_run): the torch peak they raise.
void profile_activation(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags, const ResolvedConfig& config,
                        const WeightPlan& plan, const RankPlace& place, const EncoderProfile& encoder, RankProfile& r) {
  const ResolvedSettings& s = config.settings;
  ActivationInputs ai;
  ai.tensor_parallel_size = s.tensor_parallel_size;
  ai.expert_parallel_size = plan.expert_parallel_size;
  ai.max_num_seqs = s.max_num_seqs;
  ai.max_num_batched_tokens = s.max_num_batched_tokens;
  ai.dtype_bytes = config.model_dtype_bytes;
  ai.last_pp_stage = place.last;
  ai.stage_layers = place.stage_layers;
  ai.multimodal = place.index == 0 && is_multimodal(model);
  ai.flashinfer_sampler = flags.use_flashinfer_sampler;
  ai.text_only = text_only_mode(model, flags);
  ai.linear_method = resolved_quantization_method(s.quantization, flags.quantization.has_value(), model, gpu);
  ai.quant_bits = model.quantization ? model.quantization->bits : 0;
  if (encoder.items > 0) {
    ai.encoder_pass_peak = encoder.encoder_peak;
    ai.encoder_cached_outputs = encoder.cached_outputs;
  }
  const auto act = estimate_activation(model, config.version, ai);
  // The pass is an estimate from the tower's widths: the range allows for it where it sets the peak.
  if (act.encoder_pass > 0 && act.total == act.encoder_pass) r.encoder_pass_estimate = act.encoder_pass;
  if (encoder.items > 0) {
    ActivationInputs without = ai;
    without.encoder_pass_peak = 0;
    without.encoder_cached_outputs = 0;
    r.encoder_share = std::max<Bytes>(0, act.total - estimate_activation(model, config.version, without).total);
  }
  r.activation = act.total;
  r.encoder_pass_modelled = encoder.items > 0;
  r.encoder_other_reading = encoder.other_reading;
  r.encoder_other_reading_why = encoder.other_reading_why;
  r.encoder_pass_off = ai.text_only || flags.skip_mm_profiling;
  r.encoder_pass_unsized = encoder.family_unsized;  // only set where the pass runs
  // The audio encoder is what vLLM profiles where the sized batch is audio (MiniCPM-o's 750 tokens
  // outrank an image), or where nothing else is allowed.
  r.audio_profiled = model.audio && model.audio->layers > 0 && !r.encoder_pass_off && mm_limit(flags, "audio") > 0 &&
                     (encoder.item.modality == "audio" || !model.vision ||
                      (mm_limit(flags, "image") == 0 && mm_limit(flags, "video") == 0));
  // Gemma 4's dummy audio is feature_extractor.fft_length samples (gemma4_mm.py
  // Gemma4DummyInputsBuilder.get_dummy_mm_data), a few milliseconds: its encoder pass is a few
  // frames, nothing to allow for. Qwen2-Audio's, Qwen2.5-Omni's, Qwen3-Omni's and MiniCPM-o's
  // 30 s clips, Phi-4-multimodal's 15 s one, Ultravox's 480 s one and Voxtral's max_model_len-long
  // one are sized (encoder_profile.cc); an audio encoder outside these keeps the allowance.
  r.audio_pass_unsized = r.audio_profiled && !audio_pass_sized(model, config.version);
  // vLLM logs the same batch: "Encoder cache will be initialized with a budget of N tokens, and
  // profiled with K <modality> items of the maximum feature size." (gpu_model_runner.py profile_run)
  if (encoder.items > 0 && !config.version.is_v1_engine())
    r.encoder_note = "vLLM's V0 profile run encodes " + std::to_string(encoder.items) + " dummy " + encoder.item.modality +
                     "(s) in one batch, one set per dummy sequence (--max-num-seqs " + std::to_string(s.max_num_seqs) +
                     ") before sizing the KV cache; its log says \"Starting profile run for multi-modal models.\"";
  else if (encoder.items > 0)
    r.encoder_note = "vLLM's profile run encodes " + std::to_string(encoder.items) + " dummy " + encoder.item.modality + "(s) of " +
                     util::with_commas(encoder.item.tokens) + " embeddings before sizing the KV cache and holds " +
                     gib(encoder.cached_outputs) + " of their output meanwhile; its log says \"budget of " +
                     std::to_string(encoder.encoder_budget) + " tokens, and profiled with " + std::to_string(encoder.items) + " " +
                     encoder.item.modality + " items\"";
  r.sampler = act.sampler;
  if (act.total != act.encoder_pass &&
      static_cast<double>(act.sampler) >= (1.0 + k_unmeasured_architecture_activation) * static_cast<double>(act.sampler_rival))
    r.sampler_sets_peak = act.sampler;
  if (sampler_path_depends_on_flashinfer(config.version, flags.use_flashinfer_sampler)) {
    // The estimate takes each era's fitted path (FlashInfer's kernels on v0.8-v0.10, the sort on
    // v0.11.0, whose runs measured it); the other path is the other reading.
    ActivationInputs other = ai;
    other.flashinfer_sampler = !(config.version < VllmVersion{0, 11});
    r.sampler_other_path = estimate_activation(model, config.version, other).total - act.total;
  }
  if (config.era.model_runner_v2 && place.last) {
    ActivationInputs v2 = ai;
    v2.runner_v2_sampler = true;
    r.runner_v2_sampler_less = std::max<Bytes>(0, act.total - estimate_activation(model, config.version, v2).total);
  }
}

// From v0.26 (#49208) non-KV memory is the drop in device free memory since the worker's init
// snapshot, so the model runner's persistent buffers, allocated after that snapshot and outside
// load_model, are in it ("consumed memory (weights + non-torch)"); before, no term counted them.
// Model Runner V2: sample/penalties.py PenaltiesState's output_bin_counts [max_num_reqs, vocab]
// int32 (allocated whatever the requests ask; open PR #52718 of 2026-08-18 would make it uint16)
// and prompt_bin_mask [max_num_reqs, cdiv(vocab, 32)] int32, and structured_outputs.py's
// grammar_bitmask [max_num_reqs, cdiv(vocab, 32)] int32, on the last pipeline stage. The V1
// runner (gpu_model_runner.py __init__): inputs_embeds [max_num_tokens, hidden] in the model dtype
// on every model, text-only too (#35975, which would skip it, was closed unmerged). The small
// token- and request-sized buffers (positions, M-RoPE positions, logits indices) are left out.
Bytes runner_buffer_bytes(const ModelSpec& model, const ResolvedConfig& config, const RankPlace& place) {
  if (!config.era.non_kv_from_free_memory) return 0;
  const ResolvedSettings& s = config.settings;
  if (config.era.model_runner_v2) {
    if (!place.last) return 0;
    const double reqs = s.max_num_seqs, vocab = static_cast<double>(model.vocab_size);
    return static_cast<Bytes>(reqs * vocab * 4 + 2 * reqs * std::ceil(vocab / 32) * 4);
  }
  return static_cast<Bytes>(static_cast<double>(s.max_num_batched_tokens) * model.hidden_size * config.model_dtype_bytes);
}

// Kernel images and communication buffers: the non-torch increase since the init snapshot; from
// v0.26 with the runner's persistent buffers.
void profile_non_torch(const ModelSpec& model, const GpuSpec& gpu, const ResolvedConfig& config, const RankPlace& place,
                       RankProfile& r) {
  const ResolvedSettings& s = config.settings;
  r.fusion_workspace = allreduce_fusion_workspace_bytes(config.version, s, gpu, model.hidden_size, config.model_dtype_bytes);
  r.runner_buffers = runner_buffer_bytes(model, config, place);
  r.non_torch = estimate_non_torch(config.version, s.tensor_parallel_size, s.pipeline_parallel_size, gpu) +
                r.fusion_workspace + r.runner_buffers;
}

// CUDA graphs: what the full capture after the KV allocation takes, and what the profile's own
// estimate subtracts before it (v0.21+ or VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1).
void profile_cuda_graphs(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags, const ResolvedConfig& config,
                         const WeightPlan& plan, const RankPlace& place, RankProfile& r) {
  const ResolvedSettings& s = config.settings;
  const auto capture_sizes = cudagraph_capture_sizes(
      config.version, s.max_num_seqs, s.max_num_batched_tokens,
      {.sm100_family = is_sm100_family(gpu),
       .interactivity = s.performance_mode == "interactivity",
       .given_sizes = flags.cudagraph_capture_sizes ? &*flags.cudagraph_capture_sizes : nullptr,
       .max_capture_size = flags.max_cudagraph_capture_size});
  const int num_graphs =
      s.enforce_eager ? 0 : num_cuda_graphs(config.version, capture_sizes, s.max_num_seqs, flags.cudagraph_mode);
  const int moe_width_divisor = plan.expert_parallel_size > 1 ? 1 : s.tensor_parallel_size;
  r.graph = estimate_cuda_graph(model, num_graphs, place.stage_layers, moe_width_divisor);
  r.graph_estimate = s.estimate_cuda_graphs
                         ? estimate_cuda_graph_profile(model, num_graphs, place.stage_layers, moe_width_divisor)
                         : 0;
}

// Terms measured on a real run of the same setup replace the estimates; a measured capture
// stands for the profile's estimate too.
void apply_measured(const MeasuredTerms& mt, const ResolvedSettings& s, RankProfile& r) {
  if (mt.activation_peak) {
    r.activation = *mt.activation_peak;
    r.encoder_pass_estimate = 0;  // measured: the encoder's pass is in it
    r.encoder_pass_modelled = false;
    r.encoder_other_reading = 0;
    r.sampler_other_path = 0;  // measured: whichever path the sampler took is in it
    r.runner_v2_sampler_less = 0;
    r.sampler_sets_peak = 0;
  }
  if (mt.non_torch) {
    r.non_torch = *mt.non_torch;
    r.fusion_workspace = 0;  // measured: whatever the run allocated is in it
    r.runner_buffers = 0;
  }
  if (mt.cuda_graph) {
    r.graph = *mt.cuda_graph;
    if (s.estimate_cuda_graphs) r.graph_estimate = r.graph;
  }
}

// "Available KV cache memory": the budget less what the profile left resident; what vLLM
// subtracts for graphs is its profile's estimate, not the full capture that follows.
Bytes available_kv_memory(const ResolvedConfig& config, const Budget& budget, Bytes weights, const RankProfile& r) {
  if (config.settings.kv_cache_memory_bytes) return *config.settings.kv_cache_memory_bytes;
  Bytes non_kv = weights + r.activation + r.non_torch;
  if (config.era.non_kv_includes_device_baseline) non_kv += budget.baseline + budget.other_processes;
  return budget.budget - non_kv - r.graph_estimate;
}

RankProfile profile_rank(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags, const ResolvedConfig& config,
                         const Budget& budget, const WeightPlan& plan, const RankWeights& weights,
                         const RankPlace& place, const PredictOptions& options) {
  RankProfile r;
  // What cudaMemGetInfo reports while the encoder runs: the device less the weights, the context
  // and other processes.
  const EncoderDevice device{gpu.total_bytes, gpu.total_bytes - weights.resident - budget.baseline - budget.other_processes};
  const EncoderProfile encoder = profile_encoder(model, flags, config, place, device);
  profile_activation(model, gpu, flags, config, plan, place, encoder, r);
  profile_non_torch(model, gpu, config, place, r);
  profile_cuda_graphs(model, gpu, flags, config, plan, place, r);
  if (options.measured) apply_measured(*options.measured, config.settings, r);
  r.kv_available = available_kv_memory(config, budget, weights.resident, r);
  // torch.OutOfMemoryError in the profile run, when the weights themselves loaded.
  if (!weights.oom && weights.resident + r.activation + r.non_torch > budget.usable && !config.settings.kv_cache_memory_bytes)
    r.oom = Failure{"profile_run_oom", "profile-run",
                    "torch.OutOfMemoryError: CUDA out of memory during the profile run: weights " + gib(weights.resident) +
                        " + activation peak " + gib(r.activation) + " exceed the " + gib(budget.usable) + " the GPU has free",
                    {}};
  return r;
}

}  // namespace

Profile profile_run(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags, const ResolvedConfig& config,
                    const Budget& budget, const LoadedWeights& weights, const PredictOptions& options) {
  Profile p;
  const int pp = config.settings.pipeline_parallel_size;
  for (std::size_t st = 0; st < weights.ranks.size(); ++st) {
    const RankWeights& w = weights.ranks[st];
    const RankPlace place{static_cast<int>(st), w.layout.end_layer - w.layout.first_layer, static_cast<int>(st) == pp - 1};
    p.ranks.push_back(profile_rank(model, gpu, flags, config, budget, weights.plan, w, place, options));
  }
  return p;
}

}  // namespace headroom::engine
