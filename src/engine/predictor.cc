// predict(): vLLM's startup memory accounting, step by step (memory model §8.2). Each step notes
// the vLLM file it reproduces.
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include "engine/empirical.h"
#include "engine/kv_layers.h"
#include "engine/startup_checks.h"
#include "engine/uncertainty.h"
#include "engine/vllm_defaults.h"
#include "engine/vllm_eras.h"
#include "engine/vllm_messages.h"
#include "engine/weights.h"
#include "headroom/kv_cache_spec.h"
#include "headroom/vllm_engine.h"
#include "util/strings.h"

namespace headroom {

namespace {

using engine::dtype_bytes;

bool has_state_layers(const ModelSpec& m) {
  return std::any_of(m.layer_kinds.begin(), m.layer_kinds.end(),
                     [](LayerKind k) { return k == LayerKind::mamba || k == LayerKind::linear_attention || k == LayerKind::kda_attention; });
}

bool has_kind(const ModelSpec& m, LayerKind kind) {
  return std::find(m.layer_kinds.begin(), m.layer_kinds.end(), kind) != m.layer_kinds.end();
}

// config/model.py _resolve_auto_dtype: the checkpoint dtype, float32 downcast to the preferred
// half type (bf16 from v0.9.1 / #18751, fp16 before), bf16 only on compute capability ≥ 8.0.
struct DtypeResolution {
  std::string dtype;
  std::optional<Failure> failure;
  std::vector<std::string> warnings;
};

DtypeResolution resolve_dtype(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags, const VllmVersion& v) {
  DtypeResolution r;
  std::string requested = flags.dtype.value_or("auto");
  if (requested == "half") requested = "float16";
  if (requested == "float") requested = "float32";
  const bool bf16_ok = gpu.bf16_supported;
  if (requested == "auto") {
    std::string cfg = util::to_lower(model.torch_dtype);
    if (cfg.empty()) cfg = "bfloat16";
    if (cfg == "float32") cfg = v >= VllmVersion{0, 9, 1} ? "bfloat16" : "float16";
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
                        engine::bf16_unsupported_message(gpu.name, gpu.compute_capability.empty() ? "7.x" : gpu.compute_capability), {}};
  }
  return r;
}

double kv_element_bytes(const std::string& kv_dtype, double model_bytes) {
  if (kv_dtype == "auto") return model_bytes;
  if (kv_dtype.starts_with("fp8") || kv_dtype == "int8_per_token_head") return 1;
  if (kv_dtype == "nvfp4") return 0.5625;
  return dtype_bytes(kv_dtype) > 0 ? dtype_bytes(kv_dtype) : model_bytes;
}

std::string gib(Bytes b) { return util::fixed(to_gib(b), 2) + " GiB"; }

// Per-stage weights depend only on the model and the weight plan, but walking a large MoE
// checkpoint's tensor list (~90k tensors for DeepSeek-V3) costs tens of milliseconds; searches call
// predict() many times with the same layout, so the result is memoised (bounded, thread-safe).
std::vector<engine::StageWeights> cached_stage_weights(const ModelSpec& model, const engine::WeightPlan& plan) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<engine::StageWeights>> cache;
  std::string key = model.id + '\n' + model.location + '\n' + std::string(to_string(model.source)) + '\n' +
                    std::to_string(model.weights ? model.weights->total_bytes : -1) + '\n' +
                    std::to_string(model.weights ? model.weights->tensors.size() : 0) + '\n' +
                    std::to_string(plan.tensor_parallel_size) + '/' + std::to_string(plan.pipeline_parallel_size) + '/' +
                    std::to_string(plan.expert_parallel_size) + '/' + plan.dtype + '/' + plan.online_quantization + '/' +
                    plan.gpu_architecture + '/' + [&] {
                      std::string s;
                      for (int n : plan.layer_partition) s += std::to_string(n) + ',';
                      return s;
                    }() + '/' + std::to_string(model.num_layers) + '/' + std::to_string(model.hidden_size) +
                    '/' + (model.quantization ? model.quantization->method : std::string());
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  std::vector<engine::StageWeights> stages;
  if (model.weights) {
    stages = engine::stage_weights(model, *model.weights, plan);
  } else {
    stages = engine::stage_weights(model, synthesize_weights(model), plan);
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= 256) cache.clear();
  cache.emplace(key, stages);
  return stages;
}

}  // namespace

Result<Prediction> predict(const ModelSpec& model, const GpuSetup& gpus, const VllmFlags& flags,
                           const VllmVersion& requested_version, const PredictOptions& options) {
  // VLLM_USE_V1 (envs.py, v0.8-v0.10) picks the engine: 0 runs the V0 engine, whose accounting is the
  // one of v0.7.3, the last release where V0 was the default; V0 was removed in v0.11.
  VllmVersion version = requested_version;
  const bool v0_by_env = flags.use_v1_engine && !*flags.use_v1_engine && version.is_v1_engine() && version < VllmVersion{0, 11};
  if (v0_by_env) version = VllmVersion{0, 7, 3};
  if (auto ok = validate_flags(flags); !ok) return tl::unexpected(ok.error());
  if (model.num_layers <= 0 || model.hidden_size <= 0 || model.vocab_size <= 0)
    return make_error(ErrorCode::unsupported,
                      "model '" + model.id + "' lacks the architecture facts a prediction needs (layers, hidden size, vocabulary)");
  if (gpus.gpu.total_bytes <= 0) return make_error(ErrorCode::invalid_argument, "the GPU's total memory is unknown", "--gpu");

  Prediction p;
  p.version = requested_version;
  if (v0_by_env) p.notes.push_back("VLLM_USE_V1=0: the V0 engine's accounting (as in v0.7.3) is used");
  if (flags.use_v1_engine && !*flags.use_v1_engine && !v0_by_env && version >= VllmVersion{0, 11})
    p.notes.push_back("VLLM_USE_V1=0 has no V0 engine to select: vLLM " + requested_version.to_string() +
                      " is V1 only (V0 was removed in v0.11), so the V1 engine's accounting is used");
  const engine::EraRules era = engine::era_rules(version, model);
  p.rules_version = era.rules;
  p.modelled_with = era.modelled_with;
  ResolvedSettings& s = p.settings;
  s.usage_context = flags.usage_context;
  s.tensor_parallel_size = flags.tensor_parallel_size.value_or(1);
  s.pipeline_parallel_size = flags.pipeline_parallel_size.value_or(1);
  s.data_parallel_size = flags.data_parallel_size.value_or(1);
  const int tp = s.tensor_parallel_size, pp = s.pipeline_parallel_size;
  p.gpus_used = tp * pp * s.data_parallel_size;
  const int available_gpus = gpus.count * std::max(1, gpus.nodes);
  if (p.gpus_used > available_gpus)
    return make_error(ErrorCode::invalid_argument,
                      "tensor_parallel_size " + std::to_string(tp) + " × pipeline_parallel_size " + std::to_string(pp) +
                          " × data_parallel_size " + std::to_string(s.data_parallel_size) + " needs " +
                          std::to_string(p.gpus_used) + " GPUs, but the setup has " + std::to_string(available_gpus) +
                          " (set --gpus N)");
  const bool v1 = version.is_v1_engine();
  const Bytes total = gpus.gpu.total_bytes;

  // --- Resolve the configuration (config/model.py, config/cache.py, engine/arg_utils.py) ---
  auto dt = resolve_dtype(model, gpus.gpu, flags, version);
  s.dtype = dt.dtype;
  for (auto& w : dt.warnings) p.warnings.push_back(w);
  const double model_bytes = dtype_bytes(s.dtype);
  std::string online_quant;
  if (flags.quantization) {
    s.quantization = *flags.quantization;
    if (!model.quantization && (s.quantization == "fp8" || s.quantization == "bitsandbytes")) online_quant = s.quantization;
  } else if (model.quantization) {
    s.quantization = model.quantization->method;
  }
  s.kv_cache_dtype = flags.kv_cache_dtype.value_or("auto");
  if (s.kv_cache_dtype == "auto" && model.quantization && model.quantization->kv_cache_fp8) {
    s.kv_cache_dtype = "fp8";
    p.notes.push_back("the checkpoint declares an fp8 KV cache, so kv_cache_dtype auto resolves to fp8");
  }
  s.kv_cache_dtype = engine::sparse_mla_kv_cache_dtype(model, s.kv_cache_dtype, p.notes);
  const double kv_bytes = kv_element_bytes(s.kv_cache_dtype, model_bytes);

  const std::int64_t derived_len = engine::derived_max_model_len(model);
  s.max_model_len = flags.max_model_len.value_or(derived_len);
  s.gpu_memory_utilization = flags.gpu_memory_utilization.value_or(engine::default_gpu_memory_utilization(version));
  s.enforce_eager = flags.enforce_eager;
  s.kv_cache_memory_bytes = flags.kv_cache_memory_bytes;
  const bool state_model = has_state_layers(model);
  if (v1) {
    s.enable_chunked_prefill = flags.enable_chunked_prefill.value_or(true);
    // Hybrid (Mamba / linear-attention) models keep prefix caching off by default until v0.28,
    // which turns it on in Mamba cache mode "align" (#50991).
    s.enable_prefix_caching =
        flags.enable_prefix_caching.value_or((!state_model || era.hybrid_prefix_caching_align) && !model.is_encoder_decoder);
  } else {
    s.enable_chunked_prefill = flags.enable_chunked_prefill.value_or(s.max_model_len > 32768 && !model.sliding_window);
    s.enable_prefix_caching = flags.enable_prefix_caching.value_or(false);
  }
  auto batch = engine::resolve_batch_limits(version, gpus.gpu, flags, s.max_model_len, s.enable_chunked_prefill);
  s.max_num_seqs = batch.max_num_seqs;
  s.max_num_batched_tokens = batch.max_num_batched_tokens;
  s.estimate_cuda_graphs = v1 && !s.enforce_eager &&
                           flags.estimate_cuda_graphs.value_or(version.estimates_cuda_graphs_by_default());
  // Block size: 16 unless the user set it; MLA backends of v0.8-v0.11 forced 64 (FlashMLA) or
  // 128 (CUTLASS MLA on Blackwell) — platforms/cuda.py.
  s.block_size = flags.block_size.value_or(16);
  if (!flags.block_size && model.mla && v1 && version < VllmVersion{0, 12})
    s.block_size = gpus.gpu.architecture == "Blackwell" ? 128 : 64;
  // Sparse MLA (DeepSeek-V3.2, GLM-5): FLASHMLA_SPARSE supports only 64-token blocks.
  if (!flags.block_size && model.mla && model.mla->index_head_dim > 0 && v1) s.block_size = 64;
  if (era.graph_estimate_is_zero && s.estimate_cuda_graphs) {
    s.estimate_cuda_graphs = false;
    p.notes.push_back("model runner v2 runs this model and reserves no CUDA graph memory before v0.29 (#49224): "
                      "nothing is subtracted for graphs before the KV cache");
  }

  auto fail = [&](Failure f) {
    if (!p.failure) p.failure = std::move(f);
  };
  // --- Checks before anything is allocated, in vLLM's order (startup_checks.cc) ---
  const engine::StartupCheckInputs check_in{model, gpus.gpu, flags, version, s, derived_len};
  if (auto f = engine::engine_config_failure(check_in)) fail(*f);
  for (auto& w : engine::startup_warnings(check_in)) p.warnings.push_back(std::move(w));
  if (auto f = engine::worker_init_failure(check_in, dt.failure)) fail(*f);

  // --- Budget (v1/worker/utils.py request_memory) ---
  MemoryBreakdown& m = p.memory;
  m.total = total;
  m.budget = static_cast<Bytes>(std::ceil(static_cast<double>(total) * s.gpu_memory_utilization));
  m.outside_budget = total - m.budget;
  m.baseline = engine::estimate_baseline(tp, pp);
  // Free memory at vLLM's init snapshot: what a probe saw before vLLM started, less the CUDA context
  // and NCCL buffers vLLM creates first; a log's own figure already excludes them.
  const Bytes free_at_start =
      gpus.free_bytes ? *gpus.free_bytes - (gpus.free_measured_by_vllm ? 0 : m.baseline) : total - m.baseline;
  const Bytes other_processes =
      gpus.free_bytes ? std::max<Bytes>(0, total - *gpus.free_bytes - (gpus.free_measured_by_vllm ? m.baseline : 0)) : 0;

  // --attention-config use_fp4_indexer_cache: DeepSeek-V4's indexer (the DSA indexer of V3.2 and
  // GLM-5 does not support it: config/attention.py). headroom has the compact MXFP4 layout of #48993
  // (v0.26); earlier releases' layout is not known, so they keep the fp8 rows.
  bool fp4_indexer_cache = false;
  if (flags.use_fp4_indexer_cache.value_or(false)) {
    const bool v4 = model.mla && !model.mla->compress_ratios.empty();
    if (!v4)
      p.warnings.push_back("attention_config.use_fp4_indexer_cache applies to DeepSeek-V4's indexer cache only; " +
                           model.id + " ignores it");
    else if (!era.v4_dense_packing)
      p.warnings.push_back("attention_config.use_fp4_indexer_cache before v0.26 is not modelled: the indexer cache is "
                           "sized with fp8 rows");
    else
      fp4_indexer_cache = true;
  }

  // --- Weights per stage (gpu_model_runner.py load_model) ---
  engine::WeightPlan plan;
  plan.tensor_parallel_size = tp;
  plan.pipeline_parallel_size = pp;
  plan.expert_parallel_size = flags.enable_expert_parallel ? tp * s.data_parallel_size : 1;
  plan.dtype = s.dtype;
  plan.online_quantization = online_quant;
  plan.gpu_architecture = gpus.gpu.architecture;
  if (flags.pp_layer_partition) {
    // Taken only when get_pp_indices would accept it; otherwise model construction fails below.
    auto parts = engine::parse_pp_layer_partition(*flags.pp_layer_partition);
    long long sum = 0;
    if (parts)
      for (int n : *parts) sum += n;
    if (parts && static_cast<int>(parts->size()) == pp && sum == model.num_layers) {
      plan.layer_partition = *parts;
      std::string list;
      for (int n : *parts) list += (list.empty() ? "" : ", ") + std::to_string(n);
      if (pp > 1) p.notes.push_back("VLLM_PP_LAYER_PARTITION: the pipeline stages hold " + list + " layers");
    }
  }
  auto stages = cached_stage_weights(model, plan);
  if (!stages.empty()) {
    stages.front().load_buffers = engine::load_buffers(model, s.max_num_batched_tokens, s.dtype);
    stages.front().bytes += stages.front().load_buffers;
  }
  p.sources.weights = model.weights ? "exact (safetensors headers)" : "from the architecture";

  const auto capture_sizes = engine::cudagraph_capture_sizes(version, s.max_num_seqs, s.max_num_batched_tokens,
                                                              engine::is_sm100_family(gpus.gpu));
  const int num_graphs = s.enforce_eager ? 0 : engine::num_cuda_graphs(version, capture_sizes, s.max_num_seqs);

  // Hybrid KV manager: on in V1 from v0.10. Chunked local attention (Llama 4) kept it off by
  // default (#21761, VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=False in vllm/envs.py up
  // to v0.12.0) until #29627 turned the default on (True in the v0.16.0 docs; the merge, late
  // November 2025, is taken at v0.13). A v0.19 Llama-4-Scout log shows the four groups' block count.
  const bool chunked = has_kind(model, LayerKind::chunked_attention);
  const bool hybrid_manager = v1 && version >= VllmVersion{0, 10} && (!chunked || version >= VllmVersion{0, 13});
  // Tokens in flight per request for sliding / chunked layers: max_num_batched_tokens at v0.21
  // (kv_cache_interface.py); later builds use max_concurrent_batches × mnbt, 2 × with async
  // scheduling (on by default) and PP = 1 (memory model §3.1 and §9).
  const int concurrent_batches = version >= VllmVersion{0, 22} ? (pp == 1 ? 2 : pp) : 1;
  const std::int64_t in_flight = static_cast<std::int64_t>(s.max_num_batched_tokens) * concurrent_batches;

  struct StageResult {
    Bytes weights, activation, non_torch, graph, graph_est, available;
    Bytes sampler;
    Bytes sort_sampler_extra;  // v0.8-v0.10 without VLLM_USE_FLASHINFER_SAMPLER: the sort path's extra peak
    KvCacheConfig kv;
    std::int64_t num_blocks;
    int block_size;
    int layers;
    std::vector<LayerKvSpec> check_specs;  // V1 v0.8-v0.9 with sliding layers: the specs the check sums
  };
  std::vector<StageResult> results;
  for (int st = 0; st < pp; ++st) {
    const auto& sw = stages[static_cast<std::size_t>(st)];
    StageResult r{};
    r.weights = sw.bytes;
    if (flags.cpu_offload_gb && *flags.cpu_offload_gb > 0) {
      // --cpu-offload-gb (per GPU): make_layers() passes each decoder layer to maybe_offload_to_cpu
      // (model_executor/models/utils.py), which moves its parameters, in order, to pinned host
      // memory until the bytes moved reach the limit; embeddings, final norm and LM head are not
      // layers and stay. The last parameter may overshoot the limit by its own size.
      const Bytes asked = static_cast<Bytes>(*flags.cpu_offload_gb * static_cast<double>(k_gib));
      const Bytes moved = std::min(asked, sw.layer_bytes);
      r.weights -= moved;
      if (st == 0)
        p.notes.push_back("--cpu-offload-gb: " + gib(moved) +
                          " of the decoder layers' weights per GPU stay in host memory, read over PCIe at every step "
                          "(decoding slows down)" +
                          (moved < asked ? "; that is all the layers hold, so the rest of the " + gib(asked) + " asked is unused" : ""));
    }
    r.layers = sw.end_layer - sw.first_layer;
    engine::ActivationInputs ai;
    ai.tensor_parallel_size = tp;
    ai.expert_parallel_size = plan.expert_parallel_size;
    ai.max_num_seqs = s.max_num_seqs;
    ai.max_num_batched_tokens = s.max_num_batched_tokens;
    ai.dtype_bytes = model_bytes;
    ai.last_pp_stage = st == pp - 1;
    ai.stage_layers = sw.end_layer - sw.first_layer;
    ai.multimodal = st == 0 && engine::is_multimodal(model);
    ai.flashinfer_sampler = flags.use_flashinfer_sampler;
    auto act = engine::estimate_activation(model, version, ai);
    r.activation = act.total;
    r.sampler = act.sampler;
    if (engine::sampler_path_depends_on_flashinfer(version, flags.use_flashinfer_sampler)) {
      engine::ActivationInputs sort = ai;
      sort.flashinfer_sampler = false;
      r.sort_sampler_extra = std::max<Bytes>(0, engine::estimate_activation(model, version, sort).total - act.total);
    }
    r.non_torch = engine::estimate_non_torch(version, tp, pp, gpus.gpu);
    const int moe_width_divisor = ai.expert_parallel_size > 1 ? 1 : tp;
    r.graph = engine::estimate_cuda_graph(model, num_graphs, ai.stage_layers, moe_width_divisor);
    if (options.measured) {
      const auto& mt = *options.measured;
      if (mt.weights) r.weights = *mt.weights;
      if (mt.activation_peak) {
        r.activation = *mt.activation_peak;
        r.sort_sampler_extra = 0;  // measured: whichever path the sampler took is in it
      }
      if (mt.non_torch) r.non_torch = *mt.non_torch;
      if (mt.cuda_graph) r.graph = *mt.cuda_graph;
    }
    // What vLLM subtracts is its profile's estimate, not the full capture that follows the KV
    // allocation; a measured capture stands for both.
    r.graph_est = !s.estimate_cuda_graphs ? 0
                  : (options.measured && options.measured->cuda_graph)
                      ? r.graph
                      : engine::estimate_cuda_graph_profile(model, num_graphs, ai.stage_layers, moe_width_divisor);
    Bytes non_kv = r.weights + r.activation + r.non_torch;
    // V1 v0.8-v0.9.0 and V0 v0.6.4 charged every non-torch byte on the device, including the
    // CUDA context and other processes (gpu_worker.py determine_available_memory of that era).
    if ((v1 && version < VllmVersion{0, 9, 1}) || (!v1 && version >= VllmVersion{0, 6, 4} && version < VllmVersion{0, 6, 5}))
      non_kv += m.baseline + other_processes;
    r.available = s.kv_cache_memory_bytes ? *s.kv_cache_memory_bytes : m.budget - non_kv - r.graph_est;

    engine::KvLayerInputs kin;
    kin.tensor_parallel_size = tp;
    kin.block_size = s.block_size;
    kin.kv_element_bytes = kv_bytes;
    kin.model_dtype_bytes = model_bytes;
    kin.hybrid_manager = hybrid_manager;
    // Cross-attention layers hold the encoder's tokens: max_num_encoder_input_tokens, which
    // defaults to max_num_batched_tokens (config/scheduler.py).
    kin.max_encoder_tokens = s.max_num_batched_tokens;
    kin.first_layer = sw.first_layer;
    kin.end_layer = sw.end_layer;
    kin.kv_cache_dtype = s.kv_cache_dtype;
    kin.fp4_indexer_cache = fp4_indexer_cache;
    // Mamba cache mode "align" (prefix caching on, v0.28+): two state pages per request.
    kin.mamba_pages_per_request = era.hybrid_prefix_caching_align && s.enable_prefix_caching ? 2 : 1;
    auto layers = engine::build_kv_layers(model, kin);
    for (auto& n : layers.notes)
      if (st == 0) p.notes.push_back(n);
    r.block_size = layers.attention_block_size;
    if (v1 && !hybrid_manager && version < VllmVersion{0, 10} && has_kind(model, LayerKind::sliding_attention)) {
      engine::KvLayerInputs own = kin;
      own.hybrid_manager = true;  // each layer's own spec, before unification
      r.check_specs = engine::build_kv_layers(model, own).specs;
    }
    r.kv = layers.layer_tuples ? group_layer_tuples(layers.specs, era.v4_dense_packing) : group_kv_cache_specs(layers.specs);
    r.kv.per_group_rounding = era.per_group_capacity;
    r.num_blocks = num_blocks_for(r.kv, r.available);
    results.push_back(std::move(r));
  }
  // The engine takes the minimum number of blocks over all workers (kv_cache_utils.py).
  std::size_t worst = 0;
  for (std::size_t i = 1; i < results.size(); ++i)
    if (results[i].num_blocks < results[worst].num_blocks) worst = i;
  const StageResult& w = results[worst];
  for (const auto& r : results) {
    MemoryBreakdown sm = m;
    sm.weights = r.weights;
    sm.activation_peak = r.activation;
    sm.non_torch = r.non_torch;
    sm.cuda_graph = s.estimate_cuda_graphs ? r.graph_est : r.graph;
    sm.kv_cache = r.available;
    p.stages.push_back(sm);
  }
  m.weights = w.weights;
  m.activation_peak = w.activation;
  m.non_torch = w.non_torch;
  m.cuda_graph = s.estimate_cuda_graphs ? w.graph_est : w.graph;
  m.kv_cache = w.available;
  s.block_size = w.block_size;
  p.num_gpu_blocks = w.num_blocks;
  // An override replaces the profiled block count; from v0.21 (#41069) the checks and auto-fit see
  // the memory those blocks take instead of the profiled figure.
  const Bytes block_bytes = w.kv.uniform_type ? w.kv.uniform_page_sum : w.kv.page_bytes * std::max(1, w.kv.group_size);
  Bytes kv_available = w.available;
  if (flags.num_gpu_blocks_override) {
    p.num_gpu_blocks = *flags.num_gpu_blocks_override;
    kv_available = static_cast<Bytes>(*flags.num_gpu_blocks_override) * block_bytes;
  }
  if (!w.kv.error.empty()) return make_error(ErrorCode::unsupported, w.kv.error);
  const std::string measured_src = options.measured ? options.measured->source : "";
  p.sources.activation_peak = options.measured && options.measured->activation_peak ? measured_src : "estimate";
  p.sources.non_torch = options.measured && options.measured->non_torch ? measured_src : "estimate";
  p.sources.cuda_graph = options.measured && options.measured->cuda_graph ? measured_src : "estimate";
  if (options.measured && options.measured->weights) p.sources.weights = measured_src;

  // KV layout summary.
  KvCacheLayout& kv = p.kv;
  kv.block_size = s.block_size;
  kv.page_bytes = w.kv.page_bytes;
  kv.group_size = w.kv.group_size;
  kv.num_groups = static_cast<int>(w.kv.groups.size());
  {
    int attn_layers = 0;
    for (const auto& g : w.kv.groups)
      if (g.spec.type != KvSpecType::mamba) attn_layers += static_cast<int>(g.layers.size());
    // The first attention group describes the layout (a hybrid's first group may be a state group).
    const KvCacheGroup* first = w.kv.groups.empty() ? nullptr : &w.kv.groups[0];
    for (const auto& g : w.kv.groups)
      if (g.spec.type != KvSpecType::mamba) {
        first = &g;
        break;
      }
    if (first) {
      LayerKvSpec one = first->spec;
      one.block_size = 1;
      kv.bytes_per_token = one.type == KvSpecType::mamba ? 0 : one.page_bytes() * attn_layers;
      // One block holds a page of every layer (sparse MLA latent + indexer, DeepSeek-V4 tuples).
      if (w.kv.uniform_type) kv.bytes_per_token = w.kv.uniform_page_sum / std::max(1, s.block_size);
      if (w.kv.layer_tuples) kv.bytes_per_token = w.kv.page_bytes / std::max(1, s.block_size);
      kv.description = std::to_string(attn_layers) + " attention layers";
      if (w.kv.layer_tuples) kv.description = std::to_string(attn_layers) + " caches of " + std::to_string(w.layers) + " layers";
      if (model.mla) kv.description += ", MLA latent " + std::to_string(first->spec.head_size);
      else kv.description += ", " + std::to_string(first->spec.num_kv_heads) + " KV heads × " + std::to_string(first->spec.head_size);
      kv.description += ", " + (s.kv_cache_dtype == "auto" ? s.dtype : s.kv_cache_dtype);
      if (kv.num_groups > 1) kv.description += ", " + std::to_string(kv.num_groups) + " groups";
    }
  }

  // --- Capacity figures (kv_cache_utils.py _report_kv_cache_config, by era §3.7) ---
  auto capacity = [&](std::int64_t len) {
    kv.blocks_per_request = blocks_per_request(w.kv, len, in_flight);
    p.max_concurrency = max_concurrency(w.kv, p.num_gpu_blocks, len, in_flight);
    const int min_block = s.block_size;
    if (!v1) {
      p.kv_cache_tokens = p.num_gpu_blocks * min_block;
      p.max_concurrency = static_cast<double>(p.kv_cache_tokens) / static_cast<double>(len);
    } else if (version >= VllmVersion{0, 21}) {
      p.kv_cache_tokens = static_cast<std::int64_t>(p.max_concurrency * static_cast<double>(len));
    } else if (version >= VllmVersion{0, 10}) {
      std::int64_t groups = std::max<std::int64_t>(1, static_cast<std::int64_t>(w.kv.groups.size()));
      p.kv_cache_tokens = w.kv.uniform_type || groups == 1 ? p.num_gpu_blocks * min_block : (p.num_gpu_blocks / groups) * min_block;
    } else {
      p.kv_cache_tokens = p.num_gpu_blocks * min_block;
      p.max_concurrency = static_cast<double>(p.kv_cache_tokens) / static_cast<double>(len);
    }
  };

  // --- Startup checks in the order vLLM meets them ---
  if (v1 && version >= VllmVersion{0, 9, 1} && free_at_start < m.budget) {
    std::string msg = engine::startup_free_memory_message(version, free_at_start, total, s.gpu_memory_utilization, m.budget);
    fail(Failure{"startup_free_memory_insufficient", "startup-free-memory-check", msg, {}});
    // What to do: the highest utilization the free memory allows, or free the memory others hold.
    const double max_util = std::floor(static_cast<double>(free_at_start) / static_cast<double>(total) * 100.0) / 100.0;
    std::string todo = "to pass the startup check, lower --gpu-memory-utilization to at most " + util::fixed(max_util, 2) +
                       " (" + gib(free_at_start) + " free when vLLM starts)";
    if (other_processes > 0)
      todo += ", or stop what holds " + gib(other_processes) +
              " on the GPU (listed below; headroom never stops processes itself)";
    p.notes.push_back(todo);
  }
  // Model construction (load_model builds the modules before any weight is read).
  if (auto f = engine::model_construction_failure(check_in)) fail(*f);
  const Bytes usable = total - m.baseline - other_processes;
  if (w.weights > usable) {
    fail(Failure{"weights_load_oom", "weights-load", engine::weights_oom_message(version, w.weights - usable, total, usable), {}});
  } else if (w.weights + w.activation + w.non_torch > usable && !s.kv_cache_memory_bytes) {
    fail(Failure{"profile_run_oom", "profile-run",
                 "torch.OutOfMemoryError: CUDA out of memory during the profile run: weights " + gib(w.weights) +
                     " + activation peak " + gib(w.activation) + " exceed the " + gib(usable) + " the GPU has free",
                 {}});
  }
  p.largest_fitting_max_model_len =
      w.kv.empty() ? s.max_model_len : estimate_max_model_len(w.kv, kv_available, std::max(derived_len, s.max_model_len), in_flight);
  if (!w.kv.empty()) {
    if (flags.max_model_len_auto) {
      std::int64_t fit = estimate_max_model_len(w.kv, kv_available, derived_len, in_flight);
      if (fit <= 0) {
        fail(Failure{"no_kv_cache_memory", "kv-cache-alloc", engine::auto_fit_impossible_message(), {}});
      } else {
        if (fit < derived_len)
          p.notes.push_back("--max-model-len auto: reduced from " + std::to_string(derived_len) + " to " + std::to_string(fit) +
                            " to fit in available GPU memory");
        s.max_model_len = fit;
      }
    }
    const Bytes need = w.check_specs.empty()
                           ? kv_bytes_needed(w.kv, s.max_model_len, in_flight)
                           : engine::pre_hybrid_kv_need(w.check_specs, s.max_model_len, version, in_flight);
    if (kv_available <= 0) {
      fail(Failure{"no_kv_cache_memory", "kv-cache-alloc", engine::no_kv_cache_memory_message(version), {}});
    } else if (v1 && need > kv_available) {
      std::int64_t est = estimate_max_model_len(w.kv, kv_available, s.max_model_len, in_flight);
      fail(Failure{"kv_cache_insufficient", "kv-cache-alloc",
                   engine::kv_cache_insufficient_message(version, s.max_model_len, need, kv_available, est), est});
    }
  }
  capacity(s.max_model_len);
  // DeepSeek-V4: the sliding-window caches and compressor states are sized for every token in
  // flight, and each of their pages takes a whole packed block; say so when they, not the
  // context, set the concurrency.
  if (w.kv.layer_tuples && !w.kv.groups.empty() && kv.blocks_per_request > 0) {
    const std::int64_t context_pages = group_pages_per_request(w.kv.groups.front(), s.max_model_len, in_flight);
    const std::int64_t window_pages = kv.blocks_per_request - context_pages;
    if (window_pages > context_pages)
      p.notes.push_back("each request holds " + std::to_string(context_pages) + " blocks for its context and " +
                        std::to_string(window_pages) + " for the sliding-window caches and compressor states, sized for " +
                        std::to_string(in_flight) + " tokens in flight (max_num_batched_tokens" +
                        (in_flight > s.max_num_batched_tokens ? " × " + std::to_string(in_flight / std::max(1, s.max_num_batched_tokens)) : std::string()) +
                        "); a lower --max-num-batched-tokens raises the concurrency");
  }
  if (auto f = engine::kv_allocation_failure(check_in)) fail(*f);
  // Hybrid Mamba models: each decode sequence needs its own state block, and FULL decode graphs
  // are captured up to max_num_seqs (config/compilation.py resolve_cudagraph_mode_and_sizes, 2026).
  if (state_model && v1 && version >= VllmVersion{0, 18} && !s.enforce_eager && p.num_gpu_blocks > 0 &&
      s.max_num_seqs > p.num_gpu_blocks) {
    fail(Failure{"mamba_cache_blocks_insufficient", "kv-cache-alloc",
                 "max_num_seqs (" + std::to_string(s.max_num_seqs) + ") exceeds available Mamba cache blocks (" +
                     std::to_string(p.num_gpu_blocks) +
                     "). Each decode sequence requires one Mamba cache block, so CUDA graph capture cannot proceed. Please "
                     "lower max_num_seqs to at most " + std::to_string(p.num_gpu_blocks) +
                     " or increase gpu_memory_utilization.",
                 {}});
  }
  if (!v1 && !p.failure && p.kv_cache_tokens < s.max_model_len) {
    fail(Failure{"kv_cache_insufficient", "kv-cache-alloc", engine::v0_max_len_message(s.max_model_len, p.kv_cache_tokens),
                 p.largest_fitting_max_model_len});
  }
  // After KV allocation: graph capture, then the sampler warm-up (v1/worker/gpu_worker.py
  // compile_or_warm_up_model runs it after capture_model on purpose, so its buffers stay allocated).
  // Resident then: the CUDA context, other processes, weights, non-torch and the KV tensors; the
  // profile's activation was freed and is not part of it. The graphs are captured into what is left
  // (an estimate in the budget only reserved room for them), then the warm-up's [R, vocab] buffers.
  if (!p.failure) {
    const Bytes kv_alloc = p.num_gpu_blocks * block_bytes;
    const Bytes in_use = m.baseline + other_processes + w.weights + w.non_torch + kv_alloc;
    const Bytes graphs = s.enforce_eager ? 0 : w.graph;
    const int requests = std::min(s.max_num_seqs, s.max_num_batched_tokens);
    const Bytes warmup = w.sampler > 0 ? engine::sampler_warmup_bytes(version, requests, model.vocab_size, flags.use_flashinfer_sampler) : 0;
    if (graphs > 0 && in_use + graphs > total) {
      fail(Failure{"cuda_graph_capture_oom", "cuda-graph-capture",
                   "torch.OutOfMemoryError: CUDA out of memory while capturing CUDA graphs: about " + gib(w.graph) +
                       " of graphs do not fit in the " + gib(std::max<Bytes>(0, total - in_use)) + " left after the KV cache",
                   {}});
    } else if (v1 && in_use + graphs + warmup > total) {
      fail(Failure{"sampler_warmup_oom", "sampler-warmup", engine::sampler_warmup_oom_message(requests), {}});
      p.notes.push_back("the sampler warm-up after graph capture needs about " + gib(warmup) + " for " + std::to_string(requests) +
                        " dummy requests × a " + std::to_string(model.vocab_size) + "-token vocabulary, but only " +
                        gib(std::max<Bytes>(0, total - in_use - graphs)) +
                        " is left beside the KV cache and the graphs: lower --gpu-memory-utilization or --max-num-seqs");
    }
  }
  if (s.estimate_cuda_graphs)
    p.notes.push_back("CUDA graph memory is estimated by vLLM's profile (" + gib(w.graph_est) +
                      ") and subtracted from the budget before the KV cache (v0.21+); the full capture after it takes about " +
                      gib(w.graph));
  else if (!s.enforce_eager) p.notes.push_back("CUDA graph memory (" + gib(w.graph) + ") is not charged to the budget in this version: it must fit in the memory outside it");
  if (gpus.free_bytes && other_processes > 0)
    for (const auto& h : gpus.memory_holders) p.notes.push_back(h);
  p.uncertainty = engine::kv_uncertainty(gpus.gpu, requested_version, tp, m, p.kv_cache_tokens, s.estimate_cuda_graphs,
                                         model.vision.has_value() && model.vision->image_size == 0,
                                         w.sort_sampler_extra, gpus.nodes > 1 && tp > gpus.count);
  p.starts = !p.failure.has_value();
  return p;
}

}  // namespace headroom
