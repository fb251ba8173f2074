// Stage 1 of predict(): the configuration vLLM resolves from the flags before it starts a worker
// (engine/arg_utils.py create_engine_config → config/model.py, config/cache.py,
// config/scheduler.py, config/attention.py).
#include <algorithm>

#include "engine/encoder_profile.h"
#include "engine/gemma4_vision.h"
#include "engine/predict_stages.h"
#include "headroom/engine_limits.h"
#include "engine/vllm_defaults.h"
#include "engine/vllm_messages.h"

namespace headroom::engine {

namespace {

bool has_state_layers(const ModelSpec& m) {
  return std::any_of(m.layer_kinds.begin(), m.layer_kinds.end(), [](LayerKind k) {
    return k == LayerKind::mamba || k == LayerKind::linear_attention || k == LayerKind::kda_attention;
  });
}

// config/model.py _resolve_auto_dtype: the checkpoint dtype, float32 downcast to the era's preferred
// half type, bf16 only on compute capability ≥ 8.0.
struct DtypeResolution {
  std::string dtype;
  std::optional<Failure> failure;
  std::vector<std::string> warnings;
};

DtypeResolution resolve_dtype(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags, const EraRules& era) {
  DtypeResolution r;
  std::string requested = flags.dtype.value_or("auto");
  if (requested == "half") requested = "float16";
  if (requested == "float") requested = "float32";
  const bool bf16_ok = gpu.bf16_supported;
  if (requested == "auto") {
    std::string cfg = util::to_lower(model.torch_dtype);
    if (cfg.empty()) cfg = "bfloat16";
    if (cfg == "float32") cfg = era.float32_downcast_dtype;
    if (cfg == "bfloat16" && !bf16_ok) {
      r.warnings.push_back("the model's bfloat16 runs as float16 on " + gpu.name + " (no bf16 support)");
      cfg = "float16";
    }
    r.dtype = cfg;
    return r;
  }
  r.dtype = requested;
  if (requested == "bfloat16" && !bf16_ok) {
    r.failure = Failure{"unsupported_dtype_on_gpu", "config",
                        bf16_unsupported_message(gpu.name, gpu.compute_capability.empty() ? "7.x" : gpu.compute_capability), {}};
  }
  return r;
}

double kv_element_bytes(const std::string& kv_dtype, double model_bytes) {
  if (kv_dtype == "auto") return model_bytes;
  if (kv_dtype.starts_with("fp8") || kv_dtype == "int8_per_token_head") return 1;
  if (kv_dtype == "nvfp4") return 0.5625;
  return dtype_bytes(kv_dtype) > 0 ? dtype_bytes(kv_dtype) : model_bytes;
}

// The engine vLLM runs and so whose accounting applies: V0's is the one of v0.7.3, the last
// release where V0 was the default; V0 was removed in v0.11.
struct EngineChoice {
  VllmVersion version;
  std::optional<Failure> failure;
};

// What the V1 oracle (engine/arg_utils.py _is_v1_supported_oracle, v0.8.0-v0.10.1) finds V1
// lacking for this run, in its order, as its messages name it; "" when nothing. Only CUDA GPUs:
// the checks do not apply on ROCm.
std::string v1_unsupported_feature(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags, const EraRules& era) {
  if (!era.v1_oracle_fallbacks) return "";
  // "No Mamba or Encoder-Decoder so far": Llama 3.2 Vision is SupportsV0Only, and the oracle names
  // model_config.architectures, a Python list. This one holds on any GPU.
  const std::string arch = model.is_encoder_decoder ? "['" + model.architecture + "']" : "";
  if (gpu.vendor == "AMD" || gpu.capability() <= 0) return arch;
  if (gpu.capability() < 80) return "Compute Capability < 8.0";
  const std::string kv = flags.kv_cache_dtype.value_or("auto");
  if (kv == "auto") return arch;
  // "No Fp8 KV cache so far": only FlashAttention 3 reads an fp8 cache (fa_utils.py
  // flash_attn_supports_fp8: FA3 on compute capability 9.x), and only when no other backend is set.
  const bool will_use_fa = !flags.attention_backend || *flags.attention_backend == "FLASH_ATTN_VLLM_V1";
  const bool fa3_fp8 = era.v1_fp8_kv_with_fa3 && kv.starts_with("fp8") && will_use_fa && gpu.capability() / 10 == 9;
  return fa3_fp8 ? arch : "--kv-cache-dtype";
}

// VLLM_USE_V1 (envs.py, v0.8-v0.10) picks the engine: 0 runs the V0 engine. Unset, the V1 oracle
// runs V0 for what V1 lacks (_raise_or_fallback warns "... Falling back to V0."), and with
// VLLM_USE_V1=1 raises instead.
EngineChoice engine_version(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags,
                            const VllmVersion& requested, std::vector<std::string>& notes) {
  const EraRules era = era_rules(requested, model);
  const VllmVersion v0{0, 7, 3};
  const std::string lacking = v1_unsupported_feature(model, gpu, flags, era);
  const bool for_model = lacking.starts_with("['");
  if (!lacking.empty() && flags.use_v1_engine.value_or(false)) {
    notes.push_back("without VLLM_USE_V1=1, vLLM " + requested.to_string() + " falls back to its V0 engine here (" + lacking +
                    (for_model ? "" : " on " + gpu.name) + ")");
    return {requested, Failure{"v1_engine_unsupported", "config", v1_unsupported_message(lacking), {}}};
  }
  if (!lacking.empty() && !flags.use_v1_engine) {
    notes.push_back("vLLM " + requested.to_string() + " runs its V0 engine " +
                    (for_model ? "for " + model.architecture : "on " + gpu.name + " (compute capability " + gpu.compute_capability + ")") +
                    ": \"" + v1_fallback_message(lacking) +
                    "\"; the V0 engine's accounting (as in v0.7.3) is used");
    return {v0, std::nullopt};
  }
  if (!flags.use_v1_engine || *flags.use_v1_engine) return {requested, std::nullopt};
  if (era.v1_engine && !era.v0_engine_removed) {
    notes.push_back("VLLM_USE_V1=0: the V0 engine's accounting (as in v0.7.3) is used");
    return {v0, std::nullopt};
  }
  if (era.v0_engine_removed)
    notes.push_back("VLLM_USE_V1=0 has no V0 engine to select: vLLM " + requested.to_string() +
                    " is V1 only (V0 was removed in v0.11), so the V1 engine's accounting is used");
  return {requested, std::nullopt};
}

// Attention layers need heads of some width: without head_dim in the config it is hidden_size /
// num_attention_heads, which is 0 when the heads outnumber the hidden size; a KV page of no
// bytes sizes nothing. Models without attention layers (Mamba only) need none.
Result<void> check_attention_width(const ModelSpec& model) {
  bool attention = model.layer_kinds.empty();
  for (LayerKind k : model.layer_kinds)
    attention = attention || k == LayerKind::full_attention || k == LayerKind::sliding_attention ||
                k == LayerKind::chunked_attention || k == LayerKind::cross_attention;
  if (!attention || (model.head_dim > 0 && model.num_attention_heads > 0 && model.num_kv_heads > 0)) return {};
  return make_error(ErrorCode::unsupported,
                    "model '" + model.id + "' has attention layers of no width: head_dim " + std::to_string(model.head_dim) +
                        " (hidden_size " + std::to_string(model.hidden_size) + ", " +
                        std::to_string(model.num_attention_heads) + " attention heads, " +
                        std::to_string(model.num_kv_heads) + " KV heads); its config needs head_dim or fewer heads");
}

// config.json's torch_dtype, when --dtype leaves the dtype to the model (config/model.py
// _resolve_auto_dtype takes it): one of the types vLLM runs (_STR_DTYPE_TO_TORCH_DTYPE). Another
// name ("bfloat08") is no dtype a KV cache or a weight could be sized in.
Result<void> check_model_dtype(const ModelSpec& model, const VllmFlags& flags) {
  if (flags.dtype && *flags.dtype != "auto") return {};
  const std::string cfg = util::to_lower(model.torch_dtype);
  if (cfg.empty() || is_vllm_dtype_name(cfg)) return {};
  return make_error(ErrorCode::invalid_argument,
                    "model '" + model.id + "' gives torch_dtype '" + model.torch_dtype +
                        "' in its config, which is not a dtype vLLM runs (float16, bfloat16, float32); correct the "
                        "config or set --dtype",
                    "torch_dtype");
}

// The facts and sizes a prediction cannot do without. Errors name what is missing.
Result<void> check_inputs(const ModelSpec& model, const GpuSetup& gpus, const VllmFlags& flags) {
  if (auto ok = validate_flags(flags); !ok) return tl::unexpected(ok.error());
  if (model.num_layers <= 0 || model.hidden_size <= 0 || model.vocab_size <= 0)
    return make_error(ErrorCode::unsupported,
                      "model '" + model.id + "' lacks the architecture facts a prediction needs (layers, hidden size, vocabulary)");
  if (gpus.gpu.total_bytes <= 0) return make_error(ErrorCode::invalid_argument, "the GPU's total memory is unknown", "--gpu");
  if (auto ok = check_attention_width(model); !ok) return ok;
  return check_model_dtype(model, flags);
}

Result<void> check_gpu_count(const ResolvedSettings& s, int gpus_used, const GpuSetup& gpus) {
  const int available_gpus = gpus.count * std::max(1, gpus.nodes);
  if (gpus_used <= available_gpus) return {};
  return make_error(ErrorCode::invalid_argument,
                    "tensor_parallel_size " + std::to_string(s.tensor_parallel_size) + " × pipeline_parallel_size " +
                        std::to_string(s.pipeline_parallel_size) + " × data_parallel_size " +
                        std::to_string(s.data_parallel_size) + " needs " + std::to_string(gpus_used) +
                        " GPUs, but the setup has " + std::to_string(available_gpus) + " (set --gpus N)");
}

// config/model.py (dtype, quantization) and config/cache.py (kv_cache_dtype).
void resolve_dtypes(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags, ResolvedConfig& c) {
  ResolvedSettings& s = c.settings;
  auto dt = resolve_dtype(model, gpu, flags, c.era);
  s.dtype = dt.dtype;
  c.dtype_failure = dt.failure;
  for (auto& w : dt.warnings) c.warnings.push_back(w);
  c.model_dtype_bytes = dtype_bytes(s.dtype);
  if (flags.quantization) {
    s.quantization = *flags.quantization;
    if (!model.quantization && (s.quantization == "fp8" || s.quantization == "bitsandbytes")) c.online_quantization = s.quantization;
  } else if (model.quantization) {
    s.quantization = model.quantization->method;
  }
  s.kv_cache_dtype = flags.kv_cache_dtype.value_or("auto");
  if (s.kv_cache_dtype == "auto" && model.quantization && model.quantization->kv_cache_fp8) {
    s.kv_cache_dtype = "fp8";
    c.notes.push_back("the checkpoint declares an fp8 KV cache, so kv_cache_dtype auto resolves to fp8");
  }
  s.kv_cache_dtype = sparse_mla_kv_cache_dtype(model, s.kv_cache_dtype, c.notes);
  c.kv_element_bytes = kv_element_bytes(s.kv_cache_dtype, c.model_dtype_bytes);
}

// config/scheduler.py and config/cache.py defaults: length, utilization, chunked prefill, prefix
// caching, batch limits; config/compilation.py: whether graphs are estimated before the KV cache.
// #43051 (v0.22; arg_utils.py _set_default_max_num_seqs_and_batched_tokens_args): an unset
// max_num_batched_tokens is raised to a multimodal prefix-LM model's largest item, which must fit
// in one batch; then capped at max_num_seqs x max_model_len as usual.
void raise_batched_tokens_for_prefix_lm(const ModelSpec& model, const VllmFlags& flags, ResolvedConfig& c) {
  ResolvedSettings& s = c.settings;
  if (flags.max_num_batched_tokens || c.version < VllmVersion{0, 22} || !gemma4_prefix_lm(model, c.version) ||
      text_only_mode(model, flags))
    return;
  const std::int64_t need = gemma4_prefix_lm_batched_tokens(model, flags, c.version);
  if (need <= s.max_num_batched_tokens) return;
  c.notes.push_back("vLLM raises max_num_batched_tokens from " + std::to_string(s.max_num_batched_tokens) + " to " +
                    std::to_string(need) + " to fit one video of this prefix-LM model in a batch (its log: \"Raising "
                    "max_num_batched_tokens ... for prefix-LM model\")");
  s.max_num_batched_tokens = static_cast<int>(std::min<std::int64_t>(need, static_cast<std::int64_t>(s.max_num_seqs) * s.max_model_len));
  if (!flags.max_num_seqs) s.max_num_seqs = std::min(s.max_num_seqs, s.max_num_batched_tokens);
}

void resolve_scheduler(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags, ResolvedConfig& c) {
  ResolvedSettings& s = c.settings;
  const EraRules& era = c.era;
  c.derived_max_model_len = derived_max_model_len(model);
  s.max_model_len = flags.max_model_len.value_or(c.derived_max_model_len);
  s.gpu_memory_utilization = flags.gpu_memory_utilization.value_or(default_gpu_memory_utilization(c.version));
  s.enforce_eager = flags.enforce_eager;
  s.kv_cache_memory_bytes = flags.kv_cache_memory_bytes;
  if (era.v1_engine) {
    s.enable_chunked_prefill = flags.enable_chunked_prefill.value_or(true);
    // Hybrid (Mamba / linear-attention) models keep prefix caching off by default until v0.28,
    // which turns it on in Mamba cache mode "align" (#50991).
    s.enable_prefix_caching = flags.enable_prefix_caching.value_or(
        (!has_state_layers(model) || era.hybrid_prefix_caching_align) && !model.is_encoder_decoder);
  } else {
    s.enable_chunked_prefill = flags.enable_chunked_prefill.value_or(s.max_model_len > 32768 && !model.sliding_window);
    s.enable_prefix_caching = flags.enable_prefix_caching.value_or(false);
  }
  s.performance_mode = performance_mode(c.version, flags);
  auto batch = resolve_batch_limits(c.version, gpu, flags, s.max_model_len, s.enable_chunked_prefill);
  s.max_num_seqs = batch.max_num_seqs;
  s.max_num_batched_tokens = batch.max_num_batched_tokens;
  raise_batched_tokens_for_prefix_lm(model, flags, c);
  s.estimate_cuda_graphs =
      era.v1_engine && !s.enforce_eager && flags.estimate_cuda_graphs.value_or(era.graphs_estimated_by_default);
  if (era.graph_estimate_is_zero && s.estimate_cuda_graphs) {
    s.estimate_cuda_graphs = false;
    c.notes.push_back("model runner v2 runs this model and reserves no CUDA graph memory before v0.29 (#49224): "
                      "nothing is subtracted for graphs before the KV cache");
  }
}

// Block size: 16 unless the user set it; the MLA backends of some eras force theirs
// (platforms/cuda.py). Sparse MLA (DeepSeek-V3.2, GLM-5): FLASHMLA_SPARSE supports only 64-token blocks.
int resolve_block_size(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags, const EraRules& era) {
  if (flags.block_size) return *flags.block_size;
  if (model.mla && era.v1_engine && model.mla->index_head_dim > 0) return 64;
  if (model.mla && era.mla_forces_block_size) return gpu.architecture == "Blackwell" ? 128 : 64;
  return 16;
}

// --attention-config use_fp4_indexer_cache: DeepSeek-V4's indexer (the DSA indexer of V3.2 and
// GLM-5 does not support it: config/attention.py). headroom has the compact MXFP4 layout of #48993
// (v0.26); earlier releases' layout is not known, so they keep the fp8 rows (the checks before
// allocation warn about both cases).
bool resolve_fp4_indexer_cache(const ModelSpec& model, const VllmFlags& flags, const EraRules& era) {
  const bool v4 = model.mla && !model.mla->compress_ratios.empty();
  return flags.use_fp4_indexer_cache.value_or(false) && v4 && era.v4_dense_packing;
}

}  // namespace

Result<ResolvedConfig> resolve_configuration(const ModelSpec& model, const GpuSetup& gpus, const VllmFlags& flags,
                                             const VllmVersion& requested_version) {
  if (auto ok = check_inputs(model, gpus, flags); !ok) return tl::unexpected(ok.error());
  ResolvedConfig c;
  c.requested_version = requested_version;
  auto engine = engine_version(model, gpus.gpu, flags, requested_version, c.notes);
  c.version = engine.version;
  c.engine_failure = engine.failure;
  c.era = era_rules(c.version, model);
  apply_model_runner_choice(c.era, flags.use_v2_model_runner);
  ResolvedSettings& s = c.settings;
  s.usage_context = flags.usage_context;
  s.tensor_parallel_size = flags.tensor_parallel_size.value_or(1);
  s.pipeline_parallel_size = flags.pipeline_parallel_size.value_or(1);
  s.data_parallel_size = flags.data_parallel_size.value_or(1);
  c.gpus_used = s.tensor_parallel_size * s.pipeline_parallel_size * s.data_parallel_size;
  if (auto ok = check_gpu_count(s, c.gpus_used, gpus); !ok) return tl::unexpected(ok.error());
  resolve_dtypes(model, gpus.gpu, flags, c);
  resolve_scheduler(model, gpus.gpu, flags, c);
  s.block_size = resolve_block_size(model, gpus.gpu, flags, c.era);
  c.fp4_indexer_cache = resolve_fp4_indexer_cache(model, flags, c.era);
  return c;
}

}  // namespace headroom::engine
