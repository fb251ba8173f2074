// What the calibration set covers (../shared/calibration/startup.jsonl: the runs whose empirical
// terms were measured) and how far the KV cache may move for a run outside it.
#pragma once

#include <cstdint>
#include <optional>

#include "headroom/gpu.h"
#include "headroom/vllm_engine.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

// The newest vLLM version in the calibration set.
inline const VllmVersion k_newest_calibrated{0, 26, 1};

// The KV range for a prediction outside the calibrated region, nullopt inside it. Each reason adds
// the plausible error of the empirical terms it affects (activation A, non-torch N, graphs G when
// they are charged to the budget) to the available KV memory; tokens scale with it.
// `dynamic_resolution_vision`: a multimodal model whose vision tower takes images of any size
// (no fixed image_size); its encoder's profile pass on the largest dummy image is not modelled.
// `sort_sampler_extra`: how much higher the activation peak is when the sampler takes PyTorch's
// sort path instead of FlashInfer's kernels, for a version where an installed FlashInfer decides
// it (v0.8-v0.10 without VLLM_USE_FLASHINFER_SAMPLER); 0 otherwise.
// `tp_spans_nodes`: the tensor-parallel group has more ranks than a node has GPUs, so its
// all-reduce crosses the network.
std::optional<KvUncertainty> kv_uncertainty(const GpuSpec& gpu, const VllmVersion& version, int tensor_parallel_size,
                                            const MemoryBreakdown& memory, std::int64_t kv_tokens, bool graphs_in_budget,
                                            bool dynamic_resolution_vision = false, Bytes sort_sampler_extra = 0,
                                            bool tp_spans_nodes = false);

}  // namespace headroom::engine
