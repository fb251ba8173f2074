// The JSON documents of `headroom gpus`: the live GPUs of this host and the built-in catalogue
// (also served by `headroom serve` at GET /v1/gpus).
#pragma once

#include <nlohmann/json.hpp>

#include "headroom/gpu.h"
#include "headroom/gpu_probe.h"

namespace headroom {

inline constexpr int k_gpus_schema_version = 1;

nlohmann::json gpu_inventory_to_json(const GpuInventory& inventory);
nlohmann::json gpu_catalog_to_json(const GpuCatalog& catalog);

}  // namespace headroom
