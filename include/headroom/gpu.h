// GpuSpec: the memory and capabilities of one GPU model, from the built-in catalogue (facts from
// spec sheets and logs, with the total that CUDA really reports) or given by the user.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

struct GpuSpec {
  std::string key;   // catalogue slug, e.g. "h100-sxm-80gb"; "custom" for --gpu-memory-gib
  std::string name;  // display / NVML name, e.g. "NVIDIA H100 80GB HBM3"
  std::string vendor;        // "NVIDIA", "AMD"
  std::string architecture;  // "Hopper", "Ada", ...
  std::string compute_capability;  // "9.0"
  Bytes total_bytes = 0;           // what cudaMemGetInfo reports (vLLM's total_gpu_memory)
  std::optional<Bytes> nvml_total_bytes;  // what nvidia-smi prints as memory.total
  int memory_marketing_gb = 0;
  bool bf16_supported = true;
  bool fp8_supported = false;
  bool nvlink = false;  // GPUs of this model are linked by NVLink (SXM boards): custom all-reduce works
  bool unified_memory = false;  // CPU and GPU share one memory (GB10, Jetson, Strix Halo): the total includes the OS's
  // NVML answers nvmlDeviceGetMemoryInfo with NVMLError_NotSupported (GB10: nvidia-smi's memory
  // figures read N/A), so vLLM's NVML platform cannot tell the device's memory (see
  // engine::vllm_device_memory_gib).
  bool nvml_memory_unsupported = false;
  std::vector<std::string> aliases;
  std::vector<std::string> nvml_names;

  double total_gib() const { return to_gib(total_bytes); }
  // The compute capability as vLLM compares it (major × 10 + minor: "8.6" → 86); 0 when unknown.
  int capability() const;
};

// A GPU given only by its memory (`--gpu-memory-gib X`): key "custom", total_bytes = X GiB.
GpuSpec custom_gpu(double total_gib);

// The memory the driver typically keeps back from CUDA on a GPU whose NVML (nvidia-smi) total is
// `nvml_total_bytes`: what separates nvidia-smi's memory.total from cudaMemGetInfo's total.
// A fit over the catalogue rows where both totals were observed (see src/gpu/gpu_catalog.cc).
Bytes typical_driver_reserve(Bytes nvml_total_bytes);

// A GPU name that carries how many GPUs it means, as people and schedulers write it: "2xA100",
// "8 x H100", "4×L40S" (a count first) or "H100:8" (SkyPilot's accelerator form). `name` is the
// GPU's name without the count; `count` is 0 when the text gives none (then `name` is the text).
struct CountedGpuName {
  std::string name;
  int count = 0;
};
CountedGpuName split_gpu_count(std::string_view text);

class GpuCatalog {
 public:
  // The catalogue compiled into the binary (data/gpus.jsonl).
  static const GpuCatalog& builtin();

  // Parses catalogue JSON Lines. Errors name the line.
  static Result<GpuCatalog> from_jsonl(std::string_view text, const std::string& origin);

  // Finds a GPU by key, alias or NVML name, case-insensitively and ignoring spaces, dashes and
  // underscores; "80GB" and "80G" are the same. A key wins over an alias, an alias over an NVML
  // name, and among rows that share a name the first row of the catalogue wins (so "H100" is the
  // SXM 80GB row, "A100" the SXM4 40GB row, "NVIDIA GeForce RTX 3080" the 10GB row). A leading
  // "NVIDIA", "GeForce", "Tesla", "AMD" or "Instinct" may be left out or added.
  // Errors: not_found with "did you mean" suggestions in the message.
  Result<GpuSpec> find(std::string_view name) const;

  // The row for a live GPU named `nvml_name` whose NVML total is `nvml_total_bytes`: rows sharing
  // the name (RTX 3080 10GB/12GB) are told apart by memory. nullopt when no row has the name or
  // the row's memory does not fit the live total (another SKU under the same name).
  std::optional<GpuSpec> match_live(std::string_view nvml_name, Bytes nvml_total_bytes) const;

  // Every row. The built-in catalogue parses its whole file on the first call.
  const std::vector<GpuSpec>& all() const;

  // Other rows sold under the same name with another memory size: those whose own name (first
  // alias) is `name` followed by a memory size ("A100" → "A100 80GB", "RTX 3080" → "RTX 3080 12GB") and whose
  // memory differs from `chosen`'s by more than 5 %. Empty when the name already says the size.
  std::vector<GpuSpec> other_sizes_named(std::string_view name, const GpuSpec& chosen) const;

 private:
  // The built-in catalogue's names per line, read without parsing the lines (gpu_catalog.cc).
  struct NameIndex;
  static const GpuCatalog& builtin_parsed_whole();
  Result<GpuSpec> builtin_row(std::size_t at) const;

  std::vector<GpuSpec> m_gpus;
  // Set on the built-in catalogue only: find() then parses the one line it answers with, rather
  // than all 81 (most of what a check cost, 10.4 M of 16.0 M instructions), and m_gpus is empty.
  std::shared_ptr<const NameIndex> m_index;
};

}  // namespace headroom
