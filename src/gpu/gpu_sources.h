// The two sources of live GPU facts behind probe_gpus(): NVML (loaded at run time) and the
// nvidia-smi command. Internal to src/gpu/; tests reach them through this header.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "headroom/gpu_probe.h"

namespace headroom::gpu {

struct NvmlAttempt {
  bool loaded = false;       // false: the library or a required symbol is missing; try nvidia-smi
  std::string load_failure;  // why it did not load (dlerror text)
  Result<GpuInventory> result;
};

// Loads `library_path` with dlopen and lists the GPUs and MIG devices through it. The result is
// the whole answer when `loaded` is true (NVML errors are explained there).
NvmlAttempt read_nvml(const std::string& library_path);

// Runs `program --query-gpu=...` and `--query-compute-apps=...` (no shell) and parses them.
// Errors: not_found when the program cannot be started; unavailable when it fails.
Result<GpuInventory> read_nvidia_smi(const std::string& program);

// Parses `--query-gpu=index,name,uuid,memory.total,memory.used,memory.free,utilization.gpu,
// driver_version --format=csv,noheader,nounits`. The driver version of the first GPU goes to
// `driver_version`. Errors: parse_error naming the line and field.
Result<std::vector<LiveGpu>> parse_nvidia_smi_gpus(std::string_view csv, std::string* driver_version);

// Parses `--query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits`
// into the processes of `gpus` (matched by UUID). Errors: parse_error naming the line and field.
Result<void> parse_nvidia_smi_apps(std::string_view csv, std::vector<LiveGpu>& gpus);

// Sets catalog_match, cuda_total_bytes and cuda_total_source of every GPU.
void estimate_cuda_totals(std::vector<LiveGpu>& gpus);

}  // namespace headroom::gpu
