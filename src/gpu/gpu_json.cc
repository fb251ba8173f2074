// The documents of `headroom gpus --format json` (live GPUs) and `headroom gpus --catalog --format json`.
#include "headroom/gpu_json.h"

#include "headroom/units.h"

namespace headroom {

using nlohmann::json;

json gpu_inventory_to_json(const GpuInventory& inv) {
  json gpus = json::array();
  for (const auto& g : inv.gpus) {
    json procs = json::array();
    for (const auto& p : g.processes) {
      procs.push_back({{"pid", p.pid},
                       {"name", p.name},
                       {"used_bytes", p.used_bytes_known ? json(p.used_bytes) : json(nullptr)}});
    }
    gpus.push_back({
        {"index", g.index},
        {"label", g.label()},
        {"name", g.name},
        {"uuid", g.uuid},
        {"is_mig", g.is_mig},
        {"parent_index", g.is_mig ? json(g.parent_index) : json(nullptr)},
        {"mig_enabled", g.mig_enabled},
        {"total_bytes", g.total_bytes},
        {"used_bytes", g.used_bytes},
        {"free_bytes", g.free_bytes},
        {"reserved_bytes", g.reserved_bytes ? json(*g.reserved_bytes) : json(nullptr)},
        {"cuda_total_bytes", g.cuda_total_bytes},
        {"cuda_total_source", g.cuda_total_source},
        {"cuda_free_bytes", cuda_free_bytes(g)},
        {"utilization_percent", g.utilization_percent < 0 ? json(nullptr) : json(g.utilization_percent)},
        {"catalog_key", g.catalog_match ? json(g.catalog_match->key) : json(nullptr)},
        {"processes_known", g.processes_known},
        {"processes", procs},
    });
  }
  return {{"schema_version", k_gpus_schema_version},
          {"source", inv.source},
          {"driver_version", inv.driver_version},
          {"gpus", gpus},
          {"warnings", inv.warnings}};
}

json gpu_catalog_to_json(const GpuCatalog& catalog) {
  json gpus = json::array();
  for (const auto& g : catalog.all()) {
    gpus.push_back({{"key", g.key},
                    {"name", g.name},
                    {"vendor", g.vendor},
                    {"architecture", g.architecture},
                    {"compute_capability", g.compute_capability},
                    {"cuda_total_bytes", g.total_bytes},
                    {"nvidia_smi_total_mib", g.nvml_total_bytes ? json(*g.nvml_total_bytes / k_mib) : json(nullptr)},
                    {"memory_marketing_gb", g.memory_marketing_gb},
                    {"bf16_supported", g.bf16_supported},
                    {"fp8_supported", g.fp8_supported},
                    {"aliases", g.aliases},
                    {"nvml_names", g.nvml_names}});
  }
  return {{"schema_version", k_gpus_schema_version}, {"gpus", gpus}};
}

}  // namespace headroom
