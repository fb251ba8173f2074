// Stage 4 of predict(): the weights each pipeline stage loads (v1/worker/gpu_model_runner.py
// load_model): the modules are built first (model construction, whose shape checks fail before
// any weight is read), then each rank's share of the checkpoint is read onto the GPU, less what
// --cpu-offload-gb keeps in host memory.
#include "engine/bounded_memo.h"
#include "engine/encoder_profile.h"
#include "engine/predict_stages.h"
#include "engine/startup_checks.h"
#include "engine/vllm_messages.h"

namespace headroom::engine {

namespace {

// Per-stage weights depend only on the model and the weight plan, but walking a large MoE
// checkpoint's tensor list (~90k tensors for DeepSeek-V3) costs tens of milliseconds; searches call
// predict() many times with the same layout, so the result is memoised (bounded, thread-safe).
std::vector<StageWeights> cached_stage_weights(const ModelSpec& model, const WeightPlan& plan) {
  static BoundedMemo<std::vector<StageWeights>> memo(256);
  return memo.get(model_plan_key(model, plan), [&] {
    return model.weights ? stage_weights(model, *model.weights, plan) : stage_weights(model, synthesize_weights(model), plan);
  });
}

// VLLM_PP_LAYER_PARTITION, taken only when get_pp_indices would accept it (pp entries summing to
// the layers); otherwise model construction fails (startup_checks.cc) and vLLM's split is kept.
std::vector<int> accepted_layer_partition(const ModelSpec& model, const VllmFlags& flags, int pp,
                                          std::vector<std::string>& notes) {
  if (!flags.pp_layer_partition) return {};
  auto parts = parse_pp_layer_partition(*flags.pp_layer_partition);
  long long sum = 0;
  if (parts)
    for (int n : *parts) sum += n;
  if (!parts || static_cast<int>(parts->size()) != pp || sum != model.num_layers) return {};
  std::string list;
  for (int n : *parts) list += (list.empty() ? "" : ", ") + std::to_string(n);
  if (pp > 1) notes.push_back("VLLM_PP_LAYER_PARTITION: the pipeline stages hold " + list + " layers");
  return *parts;
}

WeightPlan weight_plan(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags, const ResolvedConfig& config) {
  const ResolvedSettings& s = config.settings;
  WeightPlan plan;
  plan.tensor_parallel_size = s.tensor_parallel_size;
  plan.pipeline_parallel_size = s.pipeline_parallel_size;
  plan.expert_parallel_size = flags.enable_expert_parallel ? s.tensor_parallel_size * s.data_parallel_size : 1;
  plan.dtype = s.dtype;
  plan.online_quantization = config.online_quantization;
  plan.gpu_architecture = gpu.architecture;
  // Text-only mode (every modality limited to 0, or --language-model-only): from v0.10.1 (#22299)
  // the model classes build no encoder or projector, so their weights are not loaded.
  plan.skip_mm_towers = skips_tower_weights(model, flags, config.version);
  plan.skip_image_tower = skips_one_tower(model, flags, config.version, "image");
  plan.skip_audio_tower = skips_one_tower(model, flags, config.version, "audio");
  plan.pooling_runner = flags.pooling_runner;
  plan.rope_cache_positions_factor = mrope_cache_factor(model, config.version);
  // ROCm pads the unquantized fused-MoE weights (#14454, taken as first in v0.8) unless
  // VLLM_ROCM_MOE_PADDING=0; quantized experts (a checkpoint's method, online fp8) take other
  // methods, which do not.
  // With AITER's fused MoE (VLLM_ROCM_USE_AITER=1) process_weights_after_loading shuffles the
  // padded weights into new contiguous tensors, which drops the padding.
  plan.rocm_moe_padding = gpu.vendor == "AMD" && model.moe && !model.quantization && config.online_quantization.empty() &&
                          !(config.version < VllmVersion{0, 8}) && flags.rocm_moe_padding.value_or(true) &&
                          !flags.rocm_use_aiter.value_or(false);
  return plan;
}

// What the ROCm padding of the unquantized experts adds to the first stage's weights.
Bytes rocm_moe_padding_bytes(const ModelSpec& model, const WeightPlan& plan, const std::vector<StageWeights>& stages) {
  WeightPlan unpadded = plan;
  unpadded.rocm_moe_padding = false;
  const auto without = cached_stage_weights(model, unpadded);
  if (stages.empty() || without.empty()) return 0;
  return std::max<Bytes>(0, stages.front().bytes - without.front().bytes);
}

std::string rocm_moe_padding_note(Bytes padding) {
  return "ROCm: vLLM pads every row of the unquantized MoE experts by 256 bytes where a row is a multiple of 512 bytes "
         "(fused_moe's _maybe_pad_weight; VLLM_ROCM_MOE_PADDING=1 by default): " +
         gib(padding) + " more weights per GPU; VLLM_ROCM_MOE_PADDING=0, or AITER's MoE (VLLM_ROCM_USE_AITER=1), leaves it out";
}

// --cpu-offload-gb (per GPU): make_layers() passes each decoder layer to maybe_offload_to_cpu
// (model_executor/models/utils.py), which moves its parameters, in order, to pinned host memory
// until the bytes moved reach the limit; embeddings, final norm and LM head are not layers and
// stay. The last parameter may overshoot the limit by its own size. Returns the bytes moved.
Bytes offloaded_bytes(const VllmFlags& flags, const StageWeights& stage) {
  if (!flags.cpu_offload_gb || *flags.cpu_offload_gb <= 0) return 0;
  const Bytes asked = static_cast<Bytes>(*flags.cpu_offload_gb * static_cast<double>(k_gib));
  return std::min(asked, stage.layer_bytes);
}

std::string offload_note(const VllmFlags& flags, Bytes moved) {
  const Bytes asked = static_cast<Bytes>(*flags.cpu_offload_gb * static_cast<double>(k_gib));
  return "--cpu-offload-gb: " + gib(moved) +
         " of the decoder layers' weights per GPU stay in host memory, read over PCIe at every step (decoding slows down)" +
         (moved < asked ? "; that is all the layers hold, so the rest of the " + gib(asked) + " asked is unused" : "");
}

// Online --quantization fp8: the most the GPU holds while rank `stage` loads, by era
// (vllm_eras.h OnlineFp8LoadPeak), from its weights in 16 bits and in fp8 (`fp8`, with the load
// buffers). In the era that may or may not have #31914, the fp8 model is taken and a note gives
// the older peak where it would not fit. 0 when the run does not quantize online.
Bytes online_fp8_load_peak(const ModelSpec& model, const WeightPlan& plan, const ResolvedConfig& config,
                           std::size_t stage, const StageWeights& fp8, Bytes usable, std::vector<std::string>& notes) {
  if (plan.online_quantization != "fp8") return 0;
  WeightPlan sixteen = plan;
  sixteen.online_quantization.clear();
  const auto stages16 = cached_stage_weights(model, sixteen);
  if (stage >= stages16.size()) return 0;
  const Bytes fp8_bytes = fp8.bytes;
  const Bytes b16 = stages16[stage].bytes + fp8.load_buffers;  // the load buffers are the same either way
  const Bytes both = b16 + std::max<Bytes>(0, b16 - fp8_bytes);
  switch (config.era.online_fp8_load_peak) {
    case OnlineFp8LoadPeak::whole_16bit_model:
      if (stage == 0)
        notes.push_back("--quantization fp8: vLLM " + config.version.to_string() + " loads the whole model in " +
                        config.settings.dtype + " before it quantizes, so loading peaks at " + gib(b16) + " per GPU");
      return b16;
    case OnlineFp8LoadPeak::both_copies:
      if (stage == 0)
        notes.push_back("--quantization fp8: vLLM " + config.version.to_string() + " keeps the " + config.settings.dtype +
                        " weights while it makes their fp8 copies (fixed by #31914), so loading peaks at " + gib(both) +
                        " per GPU");
      return both;
    case OnlineFp8LoadPeak::unsure:
      if (stage == 0 && both > usable)
        notes.push_back("--quantization fp8: a vLLM " + config.version.to_string() +
                        " build without #31914 (merged early 2026) keeps the 16-bit weights while it makes the fp8 "
                        "copies and peaks at " + gib(both) + " per GPU, more than the " + gib(usable) + " there is");
      return fp8_bytes;
    case OnlineFp8LoadPeak::fp8_model: return fp8_bytes;
  }
  return fp8_bytes;
}

// The towers' settings a config writes: "vision", "audio" or both.
std::string settings_named(const ModelSpec& model) {
  if (model.vision && model.audio) return "vision and audio";
  return model.vision ? "vision" : "audio";
}

// Where the multimodal towers' share of the weights comes from: the checkpoint's headers, or the
// towers laid out from the config by vLLM's module shapes for the family (synthesize_weights).
std::string tower_note(const ModelSpec& model, const StageWeights& first) {
  const bool gguf = model.quantization && model.quantization->method == "gguf";
  std::string source = model.weights ? (gguf ? "exact from the GGUF header" : "exact from the checkpoint's safetensors headers")
                                     : "laid out from the model's config (its " + settings_named(model) +
                                           " settings, in vLLM's module shapes for " + model.architecture + ")";
  return "the weights include " + util::fixed(to_gib(first.tower_bytes), 2) +
         " GiB of multimodal encoders and projectors on the first GPU, " + source;
}

}  // namespace

LoadedWeights load_weights(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags,
                           const ResolvedConfig& config, const Budget& budget, const PredictOptions& options) {
  const ResolvedSettings& s = config.settings;
  LoadedWeights w;
  w.construction_failure = model_construction_failure(
      StartupCheckInputs{model, gpu, flags, config.version, s, config.derived_max_model_len});
  w.plan = weight_plan(model, gpu, flags, config);
  w.plan.layer_partition = accepted_layer_partition(model, flags, s.pipeline_parallel_size, w.notes);
  auto stages = cached_stage_weights(model, w.plan);
  if (const Bytes pad = w.plan.rocm_moe_padding ? rocm_moe_padding_bytes(model, w.plan, stages) : 0; pad > 0) {
    w.notes.push_back(rocm_moe_padding_note(pad));
    if (!flags.rocm_use_aiter) w.rocm_moe_padding_unsettled = pad;
  }
  if (!stages.empty()) {
    stages.front().load_buffers = load_buffers(model, s.max_num_batched_tokens, s.dtype);
    stages.front().bytes += stages.front().load_buffers;
  }
  const bool gguf = model.quantization && model.quantization->method == "gguf";
  w.source = !model.weights ? "from the architecture" : gguf ? "exact (GGUF header)" : "exact (safetensors headers)";
  const bool measured = options.measured && options.measured->weights;
  if (measured) w.source = options.measured->source;
  // Phi-4-multimodal's Conformer speech encoder (phi4mm_audio.py) is laid out from its config
  // unless the config takes a branch headroom does not lay out.
  if (!model.weights && !measured && model.audio && model.audio->model_type == "phi4mm_conformer" && !w.plan.skip_mm_towers &&
      !(model.audio->conformer && model.audio->conformer->laid_out))
    w.notes.push_back("the weights derived from the config leave out Phi-4-multimodal's speech encoder (a " +
                      std::to_string(model.audio->layers) + "-block Conformer): the checkpoint's safetensors headers "
                      "(a local folder or the Hub) count it exactly");
  if (!stages.empty() && stages.front().tower_bytes > 0 && !measured) w.notes.push_back(tower_note(model, stages.front()));
  if (w.plan.pooling_runner)
    w.notes.push_back("the pooling runner: vLLM's pooling adapter deletes the LM head, so it is not loaded (adapters.py); its "
                      "profile runs the pooler, not the sampler, and the activation estimate keeps the sampler's term (the "
                      "one pooling run measured, Qwen3-Embedding-0.6B on vLLM 0.28, logged 0.52 GiB where it gives 0.56)");
  for (std::size_t st = 0; st < stages.size() && static_cast<int>(st) < s.pipeline_parallel_size; ++st) {
    RankWeights r;
    r.layout = stages[st];
    const Bytes moved = offloaded_bytes(flags, r.layout);
    if (st == 0 && flags.cpu_offload_gb && *flags.cpu_offload_gb > 0) w.notes.push_back(offload_note(flags, moved));
    r.resident = measured ? *options.measured->weights : r.layout.bytes - moved;
    const Bytes peak = measured ? r.resident
                                : std::max(r.resident, online_fp8_load_peak(model, w.plan, config, st, r.layout, budget.usable,
                                                                            w.notes) - moved);
    if (peak > budget.usable)
      r.oom = Failure{"weights_load_oom", "weights-load",
                      weights_oom_message(config.version, peak - budget.usable, budget.total, budget.usable), {}};
    w.ranks.push_back(std::move(r));
  }
  return w;
}

}  // namespace headroom::engine
