#include "cli/target_options.h"

#include <algorithm>

#include "headroom/gpu.h"
#include "headroom/gpu_probe.h"

namespace headroom::cli {

void split_args(const Args& args, const std::vector<std::string>& own_value_flags,
                const std::vector<std::string>& own_bool_flags, Args& own, Args& vllm) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      vllm.insert(vllm.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      return;
    }
    std::string name = a.substr(0, a.find('='));
    if (std::find(own_value_flags.begin(), own_value_flags.end(), name) != own_value_flags.end()) {
      own.push_back(a);
      if (name == a && i + 1 < args.size()) own.push_back(args[++i]);
    } else if (std::find(own_bool_flags.begin(), own_bool_flags.end(), name) != own_bool_flags.end()) {
      own.push_back(a);
    } else {
      vllm.push_back(a);
    }
  }
}

Result<GpuSetup> resolve_gpu_setup(const TargetOptions& o, int needed, std::vector<std::string>& warnings) {
  GpuSetup setup;
  setup.nodes = std::max(1, o.nodes);
  if (o.gpu_memory_gib) {
    if (*o.gpu_memory_gib <= 0)
      return make_error(ErrorCode::invalid_argument, "must be a positive number of GiB", "--gpu-memory-gib");
    setup.gpu = custom_gpu(*o.gpu_memory_gib);
  } else if (o.gpu == "auto" || o.gpu.empty()) {
    // The live GPUs of this host: total memory for the budget, free memory for the startup check.
    auto inventory = probe_gpus();
    if (!inventory)
      return make_error(ErrorCode::invalid_argument,
                        inventory.error().message +
                            "; to plan for a GPU that is not here, name it with --gpu NAME (see 'headroom gpus --catalog') "
                            "or give its memory with --gpu-memory-gib X",
                        "--gpu auto");
    for (const auto& w : inventory->warnings) warnings.push_back(w);
    int count = o.gpus > 0 ? o.gpus : std::max(1, needed);
    auto live = gpu_setup_from_inventory(*inventory, count, &warnings);
    if (!live) return tl::unexpected(live.error());
    if (o.used_gib || o.free_gib)
      warnings.push_back("--used-gib/--free-gib override the free memory measured on the live GPUs");
    setup = *live;
    setup.nodes = std::max(1, o.nodes);
    if (!o.used_gib && !o.free_gib) return setup;
  } else {
    auto gpu = GpuCatalog::builtin().find(o.gpu);
    if (!gpu) return tl::unexpected(gpu.error());
    setup.gpu = *gpu;
  }
  if (setup.count <= 1 || !(o.gpu == "auto" || o.gpu.empty()) || o.gpu_memory_gib)
    setup.count = o.gpus > 0 ? o.gpus : std::max(1, (needed + setup.nodes - 1) / setup.nodes);
  if (o.used_gib || o.free_gib) {
    Bytes free = o.free_gib ? from_gib(*o.free_gib) : setup.gpu.total_bytes - from_gib(*o.used_gib);
    if (free <= 0 || free > setup.gpu.total_bytes)
      return make_error(ErrorCode::invalid_argument,
                        "free memory must be between 0 and the GPU's " + std::to_string(setup.gpu.total_gib()) + " GiB",
                        o.free_gib ? "--free-gib" : "--used-gib");
    setup.free_bytes = free;
    if (o.used_gib)
      setup.memory_holders.push_back("other processes hold " + std::to_string(*o.used_gib).substr(0, 4) + " GiB on each GPU (--used-gib)");
  }
  return setup;
}

Result<VllmVersion> resolve_version(const TargetOptions& o) {
  if (o.vllm_version.empty()) return VllmVersion::newest_modelled();
  return VllmVersion::parse(o.vllm_version);
}

}  // namespace headroom::cli
