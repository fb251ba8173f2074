// probe_gpus(): NVML first, nvidia-smi when NVML cannot be loaded; and the GpuSetup that check and
// plan take from the live GPUs.
#include "headroom/gpu_probe.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "gpu/gpu_sources.h"
#include "util/strings.h"

namespace headroom {
namespace {

std::string env_or(const std::string& given, const char* variable, const char* fallback) {
  if (!given.empty()) return given;
  const char* v = std::getenv(variable);
  return v != nullptr && *v != '\0' ? std::string(v) : std::string(fallback);
}

std::string gib_text(Bytes b) { return util::fixed(to_gib(b), 2) + " GiB"; }

std::string basename_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string LiveGpu::label() const {
  if (is_mig) return "GPU " + std::to_string(parent_index) + " MIG " + std::to_string(index);
  return "GPU " + std::to_string(index);
}

namespace gpu {

void estimate_cuda_totals(std::vector<LiveGpu>& gpus) {
  for (auto& g : gpus) {
    // A MIG device is a slice: no catalogue row describes it.
    if (!g.is_mig) g.catalog_match = GpuCatalog::builtin().match_live(g.name, g.total_bytes);
    if (g.catalog_match) {
      // The catalogue holds CUDA totals seen on real runs; the live reserve, when NVML gives it,
      // caps it (ECC or a newer driver can take more).
      g.cuda_total_bytes = g.catalog_match->total_bytes;
      g.cuda_total_source = "catalogue (" + g.catalog_match->key + ")";
      if (g.reserved_bytes && g.total_bytes - *g.reserved_bytes < g.cuda_total_bytes) {
        g.cuda_total_bytes = g.total_bytes - *g.reserved_bytes;
        g.cuda_total_source = "NVML total - reserved (below the catalogue's " + g.catalog_match->key + ")";
      }
    } else if (g.reserved_bytes) {
      g.cuda_total_bytes = g.total_bytes - *g.reserved_bytes;
      g.cuda_total_source = "NVML total - reserved";
    } else {
      g.cuda_total_bytes = std::max<Bytes>(0, g.total_bytes - typical_driver_reserve(g.total_bytes));
      g.cuda_total_source = "NVML total - typical driver reserve";
    }
  }
}

}  // namespace gpu

Result<GpuInventory> probe_gpus(const ProbeOptions& options) {
  const std::string library = env_or(options.nvml_library, "HEADROOM_NVML_LIBRARY", "libnvidia-ml.so.1");
  auto attempt = gpu::read_nvml(library);
  if (attempt.loaded) return std::move(attempt.result);

  const std::string smi = env_or(options.nvidia_smi, "HEADROOM_NVIDIA_SMI", "nvidia-smi");
  auto inventory = gpu::read_nvidia_smi(smi);
  if (inventory) {
    inventory->warnings.insert(inventory->warnings.begin(),
                               "NVML could not be loaded (" + attempt.load_failure +
                                   "); the GPUs were read with nvidia-smi, which does not report reserved memory");
    return inventory;
  }
  if (inventory.error().code == ErrorCode::not_found) {
    return make_error(ErrorCode::unavailable, "no NVIDIA GPU found: NVML could not be loaded (" +
                                                  attempt.load_failure + ") and '" + smi + "' was not found");
  }
  return inventory;
}

Bytes cuda_free_bytes(const LiveGpu& gpu) {
  // NVML's free memory already leaves out the driver reserve, so it is what cudaMemGetInfo reports
  // as free; the estimated CUDA total caps it.
  return std::clamp<Bytes>(gpu.free_bytes, 0, gpu.cuda_total_bytes);
}

std::vector<const LiveGpu*> usable_gpus(const GpuInventory& inventory) {
  std::vector<const LiveGpu*> out;
  for (const auto& g : inventory.gpus)
    if (!g.mig_enabled) out.push_back(&g);
  return out;
}

Result<GpuSetup> gpu_setup_from_inventory(const GpuInventory& inventory, int count,
                                          std::vector<std::string>* warnings) {
  if (count < 1) return make_error(ErrorCode::invalid_argument, "expected at least 1 GPU, got " + std::to_string(count));
  auto usable = usable_gpus(inventory);
  if (static_cast<std::size_t>(count) > usable.size()) {
    std::vector<std::string> present;
    for (const auto* g : usable) present.push_back(g->label() + " " + g->name);
    return make_error(ErrorCode::invalid_argument,
                      std::to_string(count) + " GPUs are needed but this host has " + std::to_string(usable.size()) +
                          (present.empty() ? std::string() : " (" + util::join(present, ", ") + ")"));
  }
  std::vector<const LiveGpu*> chosen(usable.begin(), usable.begin() + count);
  // vLLM sizes the KV cache on every rank and the smallest GPU decides, so mixed models plan with it.
  const LiveGpu* smallest = *std::min_element(chosen.begin(), chosen.end(), [](const LiveGpu* a, const LiveGpu* b) {
    return a->cuda_total_bytes < b->cuda_total_bytes;
  });
  bool mixed = std::any_of(chosen.begin(), chosen.end(), [&](const LiveGpu* g) { return g->name != chosen[0]->name; });
  if (mixed && warnings) {
    std::vector<std::string> names;
    for (const auto* g : chosen) names.push_back(g->label() + " " + g->name);
    warnings->push_back("the GPUs used are different models (" + util::join(names, ", ") +
                        "); planning with the smallest, " + smallest->label() + " " + smallest->name);
  }

  GpuSetup setup;
  if (smallest->catalog_match) {
    setup.gpu = *smallest->catalog_match;
  } else {
    setup.gpu.key = "live";
    setup.gpu.name = smallest->name;
    setup.gpu.vendor = "NVIDIA";
    setup.gpu.memory_marketing_gb = static_cast<int>(std::lround(static_cast<double>(smallest->total_bytes) / 1e9));
  }
  setup.gpu.total_bytes = smallest->cuda_total_bytes;
  setup.gpu.nvml_total_bytes = smallest->total_bytes;
  setup.count = count;
  Bytes free_bytes = cuda_free_bytes(*chosen[0]);
  for (const auto* g : chosen) free_bytes = std::min(free_bytes, cuda_free_bytes(*g));
  setup.free_bytes = free_bytes;
  for (const auto* g : chosen) {
    for (const auto& p : g->processes) {
      std::string who = "PID " + std::to_string(p.pid) + (p.name.empty() ? "" : " " + basename_of(p.name));
      if (!p.used_bytes_known) setup.memory_holders.push_back(who + " holds memory on " + g->label() + " (amount unknown)");
      else if (p.used_bytes > 0) setup.memory_holders.push_back(who + " holds " + gib_text(p.used_bytes) + " on " + g->label());
    }
    if (!g->processes_known && g->used_bytes > 0) {
      setup.memory_holders.push_back(gib_text(g->used_bytes) + " is in use on " + g->label() +
                                     " by processes headroom may not list");
    }
  }
  return setup;
}

}  // namespace headroom
