// The live GPU probe: what the GPUs of this host are, how much memory each has free, and which
// processes hold it. Reads NVML (libnvidia-ml.so.1, loaded at run time) or, without it, nvidia-smi.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "headroom/error.h"
#include "headroom/gpu.h"
#include "headroom/units.h"
#include "headroom/vllm_engine.h"

namespace headroom {

struct GpuProcess {
  unsigned pid = 0;
  std::string name;             // executable path or name; "" when the driver would not say
  Bytes used_bytes = 0;         // 0 when unknown (see used_bytes_known)
  bool used_bytes_known = true; // false where the driver does not report per-process memory
};

struct LiveGpu {
  int index = 0;         // NVML index; for a MIG device, its slot on the parent GPU
  std::string name;      // NVML name, e.g. "NVIDIA H100 80GB HBM3" or "... MIG 3g.40gb"
  std::string uuid;      // "GPU-..." or "MIG-..."
  Bytes total_bytes = 0; // NVML memory.total (the whole framebuffer on current drivers)
  Bytes used_bytes = 0;
  Bytes free_bytes = 0;
  std::optional<Bytes> reserved_bytes;  // driver-reserved memory (nvmlDeviceGetMemoryInfo_v2)
  // Best estimate of what cudaMemGetInfo reports as total (vLLM's total_gpu_memory);
  // cuda_total_source says which estimate: the catalogue row, NVML total − reserved, or NVML
  // total − the typical driver reserve.
  Bytes cuda_total_bytes = 0;
  std::string cuda_total_source;
  int utilization_percent = -1;  // -1 unknown (MIG devices, [N/A])
  bool is_mig = false;           // a MIG device (a slice of the GPU parent_index)
  int parent_index = -1;
  bool mig_enabled = false;      // a GPU in MIG mode: CUDA sees its MIG devices, not the GPU itself
  std::vector<GpuProcess> processes;
  bool processes_known = true;   // false when the driver refused to list them (permission)
  std::optional<GpuSpec> catalog_match;

  // "GPU 3", or "GPU 0 MIG 1" for a MIG device.
  std::string label() const;
};

struct GpuInventory {
  std::string source;          // "nvml" or "nvidia-smi"
  std::string driver_version;  // "" when unknown
  std::vector<LiveGpu> gpus;   // GPUs in index order, each followed by its MIG devices
  std::vector<std::string> warnings;  // GPUs skipped, processes not listed, NVML not loadable
};

struct ProbeOptions {
  std::string nvml_library;  // "" = $HEADROOM_NVML_LIBRARY, else libnvidia-ml.so.1
  std::string nvidia_smi;    // "" = $HEADROOM_NVIDIA_SMI, else nvidia-smi on PATH
};

// Lists the GPUs of this host. NVML first; nvidia-smi only when the NVML library cannot be loaded
// (when NVML loads but fails, nvidia-smi would fail the same way, so the NVML error is returned).
// Errors: unavailable ("no NVIDIA GPU found: ...") when neither source works or no GPU is present;
// unavailable with an explanation and what to do for NVML failures (driver not loaded, driver and
// library versions differ, every GPU lost); parse_error for nvidia-smi output headroom cannot read.
Result<GpuInventory> probe_gpus(const ProbeOptions& options = {});

// What cudaMemGetInfo would report as free on `gpu`: NVML's free memory, capped by the estimated
// CUDA total minus the memory in use.
Bytes cuda_free_bytes(const LiveGpu& gpu);

// The GPUs CUDA can use, in order: GPUs without MIG mode, and the MIG devices of GPUs with it.
std::vector<const LiveGpu*> usable_gpus(const GpuInventory& inventory);

// The GpuSetup for `count` GPUs of the inventory (the first `count` usable GPUs): the catalogue
// spec (or one built from the live numbers) with total_bytes = cuda_total_bytes; free_bytes = the
// smallest CUDA-view free memory among those GPUs; memory_holders = "PID 4242 python holds 3.10 GiB
// on GPU 0" for every process holding memory on them. With mixed GPU models the smallest GPU's spec
// is used and a warning is appended to `warnings` (when given).
// Errors: invalid_argument when count < 1 or exceeds the usable GPUs present.
Result<GpuSetup> gpu_setup_from_inventory(const GpuInventory& inventory, int count,
                                          std::vector<std::string>* warnings = nullptr);

}  // namespace headroom
