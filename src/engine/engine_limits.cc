// The one range check of the sizes a user or client names (engine_limits.h): called by the CLI,
// by predict() and make_plan() (so config files, LLM(...) calls, pasted commands and the HTTP API
// all pass through it) before any work that grows with a size.
#include "headroom/engine_limits.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/weights.h"
#include "headroom/vllm_engine.h"
#include "util/strings.h"

namespace headroom {

Result<void> check_range(std::int64_t value, std::int64_t min, std::int64_t max, std::string_view where,
                         std::string_view what) {
  if (value >= min && value <= max) return {};
  std::string message = what.empty() ? std::string() : std::string(what) + " ";
  message += "must be between " + util::with_commas(min) + " and " + util::with_commas(max) + ", got " +
             util::with_commas(value);
  return make_error(ErrorCode::invalid_argument, message, std::string(where));
}

namespace {

Result<void> check_optional(const auto& v, std::int64_t max, const char* flag) {
  if (!v) return {};
  if (*v <= 0) return make_error(ErrorCode::invalid_argument, "must be a positive integer, got " + std::to_string(*v), flag);
  return check_range(*v, 1, max, flag);
}

Result<void> check_parallel_sizes(const VllmFlags& f) {
  for (auto r : {check_optional(f.tensor_parallel_size, limits::k_max_parallel_size, "--tensor-parallel-size"),
                 check_optional(f.pipeline_parallel_size, limits::k_max_parallel_size, "--pipeline-parallel-size"),
                 check_optional(f.data_parallel_size, limits::k_max_parallel_size, "--data-parallel-size")})
    if (!r) return r;
  const std::int64_t world = std::int64_t{f.tensor_parallel_size.value_or(1)} * f.pipeline_parallel_size.value_or(1) *
                             f.data_parallel_size.value_or(1);
  if (world > limits::k_max_gpus)
    return make_error(ErrorCode::invalid_argument,
                      "tensor x pipeline x data parallel size is " + util::with_commas(world) + " GPUs; headroom models at most " +
                          util::with_commas(limits::k_max_gpus),
                      "--tensor-parallel-size");
  return {};
}

Result<void> check_batch_sizes(const VllmFlags& f) {
  for (auto r : {check_optional(f.max_num_seqs, limits::k_max_num_seqs, "--max-num-seqs"),
                 check_optional(f.max_num_active_seqs, limits::k_max_num_seqs, "--max-num-active-seqs"),
                 check_optional(f.max_num_batched_tokens, limits::k_max_batched_tokens, "--max-num-batched-tokens"),
                 check_optional(f.block_size, limits::k_max_block_size, "--block-size"),
                 check_optional(f.num_gpu_blocks_override, limits::k_max_gpu_blocks, "--num-gpu-blocks-override")})
    if (!r) return r;
  if (f.max_model_len && *f.max_model_len <= 0)
    return make_error(ErrorCode::invalid_argument,
                      "must be a positive number of tokens (or auto / -1), got " + std::to_string(*f.max_model_len),
                      "--max-model-len");
  if (f.max_model_len)
    if (auto r = check_range(*f.max_model_len, 1, limits::k_max_model_len, "--max-model-len"); !r) return r;
  return {};
}

Result<void> check_memory_values(const VllmFlags& f) {
  if (f.gpu_memory_utilization && !(*f.gpu_memory_utilization > 0.0 && *f.gpu_memory_utilization <= 1.0))
    return make_error(ErrorCode::invalid_argument,
                      "must be in (0, 1], got " + util::fixed(*f.gpu_memory_utilization, 4) +
                          " (it is a fraction of the GPU's total memory, e.g. 0.9)",
                      "--gpu-memory-utilization");
  if (f.kv_cache_memory_bytes && *f.kv_cache_memory_bytes <= 0)
    return make_error(ErrorCode::invalid_argument, "must be a positive size", "--kv-cache-memory-bytes");
  if (f.kv_cache_memory_bytes)
    if (auto r = check_range(*f.kv_cache_memory_bytes, 1, limits::k_max_kv_cache_bytes, "--kv-cache-memory-bytes", "the size (bytes)"); !r)
      return r;
  if (f.cpu_offload_gb && !(*f.cpu_offload_gb >= 0 && *f.cpu_offload_gb < 1e6))
    return make_error(ErrorCode::invalid_argument, "must be a size in GiB, 0 or more", "--cpu-offload-gb");
  if (f.pp_layer_partition) {
    // A stage without layers is not something vLLM checks for; it cannot serve, so it is refused here.
    if (auto parts = engine::parse_pp_layer_partition(*f.pp_layer_partition))
      for (int n : *parts)
        if (n < 1)
          return make_error(ErrorCode::invalid_argument,
                            "every pipeline stage needs at least one layer, got '" + *f.pp_layer_partition + "'",
                            "VLLM_PP_LAYER_PARTITION");
  }
  return {};
}

constexpr std::string_view k_vllm_dtypes[] = {"half", "float16", "bfloat16", "float", "float32"};

Result<void> check_dtypes(const VllmFlags& f) {
  if (f.kv_cache_dtype) {
    static const std::vector<std::string> k_kv = {"auto", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla",
                                                  "bfloat16", "float16", "half", "int8_per_token_head",
                                                  "fp8_per_token_head", "nvfp4"};
    if (std::find(k_kv.begin(), k_kv.end(), *f.kv_cache_dtype) == k_kv.end())
      return make_error(ErrorCode::invalid_argument,
                        "expected one of " + util::or_list(k_kv) + ", got '" + *f.kv_cache_dtype + "'", "--kv-cache-dtype");
  }
  if (f.dtype && *f.dtype != "auto" && !is_vllm_dtype_name(*f.dtype)) {
    std::vector<std::string> names{"auto"};
    names.insert(names.end(), std::begin(k_vllm_dtypes), std::end(k_vllm_dtypes));
    return make_error(ErrorCode::invalid_argument, "expected one of " + util::or_list(names) + ", got '" + *f.dtype + "'",
                      "--dtype");
  }
  return {};
}

}  // namespace

bool is_vllm_dtype_name(std::string_view name) {
  return std::find(std::begin(k_vllm_dtypes), std::end(k_vllm_dtypes), name) != std::end(k_vllm_dtypes);
}

Result<void> validate_engine_sizes(const VllmFlags& f) {
  for (auto step : {check_memory_values, check_parallel_sizes, check_batch_sizes, check_dtypes})
    if (auto r = step(f); !r) return r;
  return {};
}

Result<void> validate_flags(const VllmFlags& flags) { return validate_engine_sizes(flags); }

Result<void> validate_gpu_setup_size(const GpuSetup& gpus, std::string_view where) {
  if (auto r = check_range(gpus.count, 1, limits::k_max_gpus, where, "the GPU count"); !r) return r;
  if (auto r = check_range(gpus.nodes, 1, limits::k_max_nodes, "--nodes", "the node count"); !r) return r;
  const std::int64_t total = std::int64_t{gpus.count} * gpus.nodes;
  if (total > limits::k_max_gpus)
    return make_error(ErrorCode::invalid_argument,
                      util::with_commas(gpus.nodes) + " nodes x " + util::with_commas(gpus.count) + " GPUs is " +
                          util::with_commas(total) + " GPUs; headroom models at most " + util::with_commas(limits::k_max_gpus),
                      std::string(where));
  return {};
}

Result<void> validate_plan_sizes(std::optional<std::int64_t> context_tokens, std::int64_t concurrency,
                                 std::optional<std::int64_t> max_gpus) {
  if (context_tokens)
    if (auto r = check_range(*context_tokens, 1, limits::k_max_model_len, "--context", "the context (tokens)"); !r) return r;
  if (auto r = check_range(concurrency, 1, limits::k_max_concurrency, "--concurrency", "the number of requests"); !r) return r;
  if (max_gpus)
    if (auto r = check_range(*max_gpus, 1, limits::k_max_gpus, "--max-gpus", "the GPU count"); !r) return r;
  return {};
}

}  // namespace headroom
