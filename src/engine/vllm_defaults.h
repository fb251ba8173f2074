// vLLM's defaults by version, GPU and usage context: gpu_memory_utilization, batch limits,
// max_model_len derivation, CUDA graph capture sizes, block size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

// 0.90 up to v0.20, 0.92 from v0.21 (#38284) — config/cache.py.
double default_gpu_memory_utilization(const VllmVersion& version);

struct BatchLimits {
  int max_num_seqs = 0;
  int max_num_batched_tokens = 0;
};

// engine/arg_utils.py get_batch_defaults and the adjustments after it (§5.1 of the memory model).
BatchLimits resolve_batch_limits(const VllmVersion& version, const GpuSpec& gpu, const VllmFlags& flags,
                                 std::int64_t max_model_len, bool chunked_prefill);

// The device memory get_batch_defaults compares (engine/arg_utils.py): NvmlCudaPlatform's
// get_device_total_memory asks NVML, and where NVML cannot report memory (GB10's unified memory:
// NVMLError_NotSupported) the `except Exception: device_memory = 0` there makes the device a small
// one, whatever its 119.7 GiB. On Jetson, which has no NVML, vLLM takes torch's total instead
// (NonNvmlCudaPlatform), as on ROCm.
double vllm_device_memory_gib(const GpuSpec& gpu);

// Whether the GPU counts as a big device for the batch defaults: ≥ 70 GiB and not an A100
// (#17885, v0.9); before that H100/H200 by name.
bool is_big_gpu(const VllmVersion& version, const GpuSpec& gpu);

// The model's derived max_model_len (config/model.py _get_and_verify_max_len): the configured
// length, RoPE scaling, the tokenizer's model_max_length.
std::int64_t derived_max_model_len(const ModelSpec& model);

// The --performance-mode vLLM runs with: the flag's value from v0.17 (#34936, "balanced" when not
// given); "" before v0.17, which has no such mode.
std::string performance_mode(const VllmVersion& version, const VllmFlags& flags);

// What besides the version and the batch limits shapes the capture sizes.
struct CaptureOptions {
  bool sm100_family = false;   // data-center Blackwell (compute capability 10.x)
  bool interactivity = false;  // --performance-mode interactivity: every size from 1 to min(max capture, 32)
  const std::vector<int>* given_sizes = nullptr;  // --compilation-config cudagraph_capture_sizes
  std::optional<int> max_capture_size;           // --compilation-config max_cudagraph_capture_size
};

// CUDA graph capture sizes (config/vllm.py _set_cudagraph_sizes) for the version.
std::vector<int> cudagraph_capture_sizes(const VllmVersion& version, int max_num_seqs, int max_num_batched_tokens,
                                         const CaptureOptions& options = {});

}  // namespace headroom::engine
