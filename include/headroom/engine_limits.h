// Engine limits: the largest sizes headroom models (parallel sizes, GPUs, lengths, batch sizes,
// concurrency, block size, version numbers). Every entry point -- the CLI, config files, LLM(...)
// calls, pasted commands and the HTTP API -- checks what it was given against them before any work,
// so no input makes the work or memory of a check or a plan grow without a bound.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "headroom/error.h"
#include "headroom/vllm_config.h"

namespace headroom {

struct GpuSetup;

namespace limits {
// No vLLM deployment comes near these; each is far above the largest one documented (a few
// thousand GPUs, contexts of 10M tokens, max_num_seqs of a few thousand) and low enough that
// every product headroom computes from them fits in 64 bits.
inline constexpr std::int64_t k_max_parallel_size = 1024;          // TP, PP or DP alone
inline constexpr std::int64_t k_max_gpus = 4096;                   // GPUs of a setup, and TP x PP x DP
inline constexpr std::int64_t k_max_nodes = 1024;
inline constexpr std::int64_t k_max_model_len = 1LL << 30;         // tokens (1,073,741,824)
inline constexpr std::int64_t k_max_num_seqs = 1LL << 20;          // also --max-num-active-seqs
inline constexpr std::int64_t k_max_batched_tokens = 1LL << 30;
inline constexpr std::int64_t k_max_concurrency = 1LL << 20;       // plan: simultaneous requests
inline constexpr std::int64_t k_max_block_size = 1LL << 16;        // tokens per KV cache block
inline constexpr std::int64_t k_max_gpu_blocks = 1LL << 32;        // --num-gpu-blocks-override
inline constexpr std::int64_t k_max_kv_cache_bytes = 1LL << 50;    // --kv-cache-memory-bytes per GPU (1 PiB)
inline constexpr std::int64_t k_max_version_component = 99999;     // 0.19.0, .post1
}  // namespace limits

// Checks min <= value <= max. The error names `where` (a flag, a JSON key, file:line:col) and says
// both bounds: "must be between 1 and 1,024, got 65,536". `what` ("tensor-parallel size") leads the
// message when given.
Result<void> check_range(std::int64_t value, std::int64_t min, std::int64_t max, std::string_view where,
                         std::string_view what = {});

// The one check of a configuration's sizes and values (validate_flags in vllm_config.h is this
// function): utilization in (0, 1]; TP, PP, DP, lengths, max_num_seqs, batched tokens, block size
// and block counts positive and within limits; TP x PP x DP within k_max_gpus; known dtypes.
// Errors: invalid_argument naming the flag.
Result<void> validate_engine_sizes(const VllmFlags& flags);

// Whether `name` is a model dtype vLLM runs (its _STR_DTYPE_TO_TORCH_DTYPE: half, float16,
// bfloat16, float, float32), as --dtype takes besides "auto" and as config.json's torch_dtype gives.
bool is_vllm_dtype_name(std::string_view name);

// The sizes of a GPU setup: 1..k_max_gpus GPUs per node, 1..k_max_nodes nodes, and at most
// k_max_gpus in all. `where` names the option that gave the count ("--gpus").
Result<void> validate_gpu_setup_size(const GpuSetup& gpus, std::string_view where = "--gpus");

// A plan's workload: context 1..k_max_model_len tokens (when given), concurrency 1..k_max_concurrency,
// max_gpus 1..k_max_gpus (when given).
Result<void> validate_plan_sizes(std::optional<std::int64_t> context_tokens, std::int64_t concurrency,
                                 std::optional<std::int64_t> max_gpus);

}  // namespace headroom
