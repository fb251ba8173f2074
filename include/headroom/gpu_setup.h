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

// How messages and `where` name the target's fields: the CLI's options, or the JSON members of an
// API request (quoted in messages: "\"gpus\" says 3").
struct TargetFieldNames {
  std::string gpu, gpus, gpu_memory_gib, used_gib, free_gib;
  bool quoted = false;

  std::string shown(const std::string& name) const { return quoted ? "\"" + name + "\"" : name; }
  static TargetFieldNames cli() { return {"--gpu", "--gpus", "--gpu-memory-gib", "--used-gib", "--free-gib", false}; }
  static TargetFieldNames json() { return {"gpu", "gpus", "gpu_memory_gib", "used_gib", "free_gib", true}; }
};

// "2xA100" or "H100:8" in target.gpu: moves the count into target.gpus. Errors: invalid_argument
// (where names.gpu) when target.gpus gives a different count.
Result<void> apply_gpu_count(TargetRequest& target, const TargetFieldNames& names = TargetFieldNames::cli());

// The GPU setup for the target: a catalogue GPU, a custom size (gpu_memory_gib), or the live GPUs
// when gpu is "" or "auto". `needed` is how many GPUs the configuration uses (0: every live GPU, or
// one per node). Probe warnings are appended to `warnings`. Errors name the fields as `names` does
// (the CLI's "--gpu", "--gpu-memory-gib", "--used-gib", "--free-gib" by default): invalid_argument
// for bad values, not_found for a GPU name the catalogue does not hold.
Result<GpuSetup> resolve_gpu_setup(const TargetRequest& target, int needed, std::vector<std::string>& warnings,
                                   const TargetFieldNames& names = TargetFieldNames::cli());

// target.vllm_version parsed, or the newest modelled version when it is empty.
Result<VllmVersion> resolve_vllm_version(const TargetRequest& target);

}  // namespace headroom
