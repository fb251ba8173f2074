// The GPUs a check or plan runs on, from what the user named (a catalogue GPU with an optional
// count, a custom size, or this host's live GPUs), and the vLLM version to model. The CLI's
// --gpu/--gpus/... options and the Python package's keywords both resolve through here.
#pragma once

#include <string>
#include <vector>

#include "headroom/api_request.h"
#include "headroom/error.h"
#include "headroom/vllm_engine.h"
#include "headroom/vllm_version.h"

namespace headroom {

// "2xA100" or "H100:8" in target.gpu: moves the count into target.gpus. Errors: invalid_argument
// (where "--gpu") when target.gpus gives a different count.
Result<void> apply_gpu_count(TargetRequest& target);

// The GPU setup for the target: a catalogue GPU, a custom size (gpu_memory_gib), or the live GPUs
// when gpu is "" or "auto". `needed` is how many GPUs the configuration uses (0: every live GPU, or
// one per node). Probe warnings are appended to `warnings`. Errors name the CLI option ("--gpu",
// "--gpu-memory-gib", "--used-gib", "--free-gib"): invalid_argument for bad values, not_found for
// a GPU name the catalogue does not hold.
Result<GpuSetup> resolve_gpu_setup(const TargetRequest& target, int needed, std::vector<std::string>& warnings);

// target.vllm_version parsed, or the newest modelled version when it is empty.
Result<VllmVersion> resolve_vllm_version(const TargetRequest& target);

}  // namespace headroom
