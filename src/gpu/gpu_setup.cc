#include "headroom/gpu_setup.h"

#include <algorithm>

#include "headroom/engine_limits.h"
#include "headroom/gpu.h"
#include "headroom/gpu_probe.h"
#include "util/strings.h"

namespace headroom {

Result<void> apply_gpu_count(TargetRequest& t, const TargetFieldNames& names) {
  auto counted = split_gpu_count(t.gpu);
  if (counted.count == 0) return {};
  if (t.gpus > 0 && t.gpus != counted.count)
    return make_error(ErrorCode::invalid_argument,
                      "'" + t.gpu + "' means " + std::to_string(counted.count) + " GPUs but " + names.shown(names.gpus) +
                          " says " + std::to_string(t.gpus) + ": give the count once",
                      names.gpu);
  t.gpu = counted.name;
  t.gpus = counted.count;
  return {};
}

namespace {

// The live GPUs of this host: `needed` of them, or all when needed is 0.
Result<GpuSetup> live_gpu_setup(const TargetRequest& t, int needed, int nodes, std::vector<std::string>& warnings,
                                const TargetFieldNames& names) {
  auto inventory = probe_gpus();
  if (!inventory)
    return make_error(ErrorCode::invalid_argument,
                      "no GPU given and none found on this host (" + inventory.error().message + "): name one with " +
                          (names.quoted ? names.shown(names.gpu) : names.gpu + " NAME (see 'headroom gpus --catalog')") +
                          " or give its memory with " + (names.quoted ? names.shown(names.gpu_memory_gib) : names.gpu_memory_gib + " X"),
                      names.gpu);
  for (const auto& w : inventory->warnings) warnings.push_back(w);
  int count = t.gpus > 0 ? t.gpus : needed > 0 ? needed : static_cast<int>(usable_gpus(*inventory).size());
  auto live = gpu_setup_from_inventory(*inventory, std::max(1, count), &warnings);
  if (!live) return tl::unexpected(live.error());
  live->nodes = nodes;
  if (t.used_gib || t.free_gib) {
    // The options describe the memory others hold instead of what the probe saw.
    Bytes free = t.free_gib ? from_gib(*t.free_gib) : live->gpu.total_bytes - from_gib(*t.used_gib);
    if (free <= 0 || free > live->gpu.total_bytes)
      return make_error(ErrorCode::invalid_argument, "free memory must be between 0 and the GPU's total",
                        t.free_gib ? names.free_gib : names.used_gib);
    live->free_bytes = free;
    live->memory_holders.clear();
  }
  return *live;
}

// A name sold with several memory sizes ("A100": 40 and 80 GB) names the catalogue's first; a
// warning says which and how to name another.
void warn_other_sizes(const std::string& typed, const GpuSpec& chosen, std::vector<std::string>& warnings) {
  const auto others = GpuCatalog::builtin().other_sizes_named(typed, chosen);
  if (others.empty()) return;
  std::vector<std::string> names;
  for (const auto& o : others) names.push_back(o.aliases.empty() ? o.name : o.aliases.front() + " (" + o.name + ")");
  warnings.push_back("'" + typed + "' is sold with more than one memory size: took " + chosen.name + " (" +
                     util::fixed(chosen.total_gib(), 2) + " GiB as CUDA reports it); for another, name it: " +
                     util::or_list(names));
}

}  // namespace

Result<GpuSetup> resolve_gpu_setup(const TargetRequest& given, int needed, std::vector<std::string>& warnings,
                                   const TargetFieldNames& names) {
  TargetRequest t = given;
  if (auto counted = apply_gpu_count(t, names); !counted) return tl::unexpected(counted.error());
  GpuSetup setup;
  setup.nodes = std::max(1, t.nodes);
  setup.count = t.gpus > 0 ? t.gpus : std::max(1, (needed + setup.nodes - 1) / setup.nodes);
  if (auto ok = validate_gpu_setup_size(setup); !ok) return tl::unexpected(ok.error());
  if (t.gpu_memory_gib) {
    if (*t.gpu_memory_gib <= 0)
      return make_error(ErrorCode::invalid_argument, "must be a positive number of GiB", names.gpu_memory_gib);
    setup.gpu = custom_gpu(*t.gpu_memory_gib);
  } else if (t.gpu == "auto" || t.gpu.empty()) {
    return live_gpu_setup(t, needed, setup.nodes, warnings, names);
  } else {
    auto gpu = GpuCatalog::builtin().find(t.gpu);
    if (!gpu) return tl::unexpected(gpu.error());
    setup.gpu = *gpu;
    warn_other_sizes(t.gpu, *gpu, warnings);
  }
  setup.count = t.gpus > 0 ? t.gpus : std::max(1, (needed + setup.nodes - 1) / setup.nodes);
  if (t.used_gib || t.free_gib) {
    Bytes free = t.free_gib ? from_gib(*t.free_gib) : setup.gpu.total_bytes - from_gib(*t.used_gib);
    if (free <= 0 || free > setup.gpu.total_bytes)
      return make_error(ErrorCode::invalid_argument,
                        "free memory must be between 0 and the GPU's " + std::to_string(setup.gpu.total_gib()) + " GiB",
                        t.free_gib ? names.free_gib : names.used_gib);
    setup.free_bytes = free;
    if (t.used_gib)
      setup.memory_holders.push_back("other processes hold " + std::to_string(*t.used_gib).substr(0, 4) + " GiB on each GPU (" +
                                     names.shown(names.used_gib) + ")");
  }
  return setup;
}

Result<VllmVersion> resolve_vllm_version(const TargetRequest& t) {
  if (t.vllm_version.empty()) return VllmVersion::newest_modelled();
  return VllmVersion::parse(t.vllm_version);
}

}  // namespace headroom
