// The checks vLLM makes before it allocates memory for the KV cache, grouped by the stage that runs
// them and kept in vLLM's order, each with the message vLLM prints (docs/startup-checks.md).
// The memory checks that follow (free memory, weights, profile run, KV cache, Mamba blocks, graph
// capture, sampler warm-up) need the memory accounting and stay in predictor.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <vector>

#include "headroom/gpu.h"
#include "headroom/kv_cache_spec.h"
#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_engine.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

struct StartupCheckInputs {
  const ModelSpec& model;
  const GpuSpec& gpu;
  const VllmFlags& flags;
  const VllmVersion& version;
  const ResolvedSettings& settings;
  std::int64_t derived_max_model_len = 0;
};

// Engine configuration (engine/arg_utils.py create_engine_config → config/*.py), in the order the
// config objects are built: max_model_len against the model's limit, quantization against the GPU's
// compute capability, block size, scheduler limits, tensor/pipeline parallel size against the heads
// and layers. The first failure, or nullopt.
std::optional<Failure> engine_config_failure(const StartupCheckInputs& in);

// What the checks cannot decide but the user should know: a mistyped flag's did-you-mean, and an
// architecture outside vLLM's model registry (data/vllm_architectures.json), which runs only if
// transformers or remote code has it.
std::vector<std::string> startup_warnings(const StartupCheckInputs& in);

// For an architecture vLLM dropped (data/vllm_architectures.json previously_supported) asked of a
// later release: a line naming the last release that serves it; nullopt otherwise.
std::optional<std::string> dropped_architecture_note(const std::string& architecture, const VllmVersion& version);

// Worker initialisation before the free-memory check (v1/worker/gpu_worker.py init_device →
// platforms/cuda.py check_if_supports_dtype): the dtype against the GPU.
std::optional<Failure> worker_init_failure(const StartupCheckInputs& in, const std::optional<Failure>& dtype_failure);

// Model construction in load_model, layer by layer as the modules are built: the vocabulary split
// over TP (VocabParallelEmbedding), attention and KV heads (QKVParallelLinear), the MLP / expert width
// (MergedColumnParallelLinear, FusedMoE), and the quantized shapes per rank (fp8 blocks, GPTQ/AWQ
// groups, Marlin tiles). The first failure, or nullopt.
std::optional<Failure> model_construction_failure(const StartupCheckInputs& in);

// KV cache allocation (v1/worker/gpu_model_runner.py initialize_kv_cache → the attention backend's
// get_kv_cache_shape): FlashAttention and Triton attention need a block size that is a multiple of 16.
// Runs after the KV cache checks, before graph capture.
std::optional<Failure> kv_allocation_failure(const StartupCheckInputs& in);

// V1 before the hybrid KV cache manager (v0.8-v0.9): the "max seq len" check sums every layer's
// own spec (v1/core/kv_cache_utils.py check_enough_kv_cache_memory) before sliding-window layers are
// unified into full attention for allocation, so a sliding layer needs only its window:
// v0.8 SlidingWindowSpec.bytes_for_tokens = cdiv(min(len, window), block) × page; v0.9
// max_memory_usage_bytes (window − 1 + in-flight tokens, plus one block). `specs` are the layers
// with their sliding-window specs (build_kv_layers with the hybrid manager on).
Bytes pre_hybrid_kv_need(const std::vector<LayerKvSpec>& specs, std::int64_t max_model_len, const VllmVersion& version,
                         std::int64_t in_flight_tokens);

// The minimum compute capability (major × 10 + minor) vLLM requires for a quantization method at a
// version (quantization/*.py get_min_capability), or 0 when it sets none.
int min_quantization_capability(const std::string& method, const VllmVersion& version);

}  // namespace headroom::engine
