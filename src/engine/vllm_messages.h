// The error messages vLLM prints, by version (templates from the memory model's §6), so a
// predicted failure reads exactly like the one the user would see.
#pragma once

#include <cstdint>
#include <string>

#include "headroom/units.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

// vLLM's format_gib: round(x, 2) printed like Python ("5.0", "15.72").
std::string format_gib(Bytes bytes);

// E1: the startup free-memory check (v1/worker/utils.py request_memory).
std::string startup_free_memory_message(const VllmVersion& v, Bytes free, Bytes total, double util, Bytes requested);
// E4: no memory left for cache blocks.
std::string no_kv_cache_memory_message(const VllmVersion& v);
// E5: one max_model_len request does not fit (V1), with the estimated maximum length when > 0.
std::string kv_cache_insufficient_message(const VllmVersion& v, std::int64_t max_model_len, Bytes need, Bytes available,
                                          std::int64_t estimated_max_len);
// E7: the V0 form of E5.
std::string v0_max_len_message(std::int64_t max_model_len, std::int64_t kv_tokens);
// E6: --max-model-len auto cannot fit a single token.
std::string auto_fit_impossible_message();
// E12: max_model_len above the model's derived limit.
std::string max_model_len_exceeds_message(std::int64_t requested, const std::string& key, std::int64_t derived);
// TP size that does not divide the attention heads (config/parallel.py).
std::string tp_not_divisible_message(int heads, int tp);
// bf16 requested on a GPU without bf16 support (platforms/cuda.py).
// The V1 oracle's refusal with VLLM_USE_V1=1, and its fallback warning (without the trailing
// space vLLM leaves), v0.8-v0.10 (engine/arg_utils.py _raise_or_fallback).
std::string v1_unsupported_message(const std::string& feature);
std::string v1_fallback_message(const std::string& feature);
std::string bf16_unsupported_message(const std::string& gpu_name, const std::string& compute_capability);
// The torch OOM text for weights that do not fit (E9 in 2026 builds).
std::string weights_oom_message(const VllmVersion& v, Bytes tried, Bytes total, Bytes free);
// E10: sampler warm-up OOM.
std::string sampler_warmup_oom_message(int requests);

}  // namespace headroom::engine
