// A smaller stand-in for a model's weights inventory that gives predict() the same per-rank
// weight bytes for one pipeline-parallel size: tensors of the same role within one pipeline stage
// (every layer of the stage, every routed expert) are merged into one. The search calls predict()
// hundreds of times; per-tensor work dominates its cost for MoE checkpoints with 10^4-10^5 tensors.
#pragma once

#include "headroom/model.h"

namespace headroom::plan {

// `inventory` merged for `pipeline_parallel_size` stages of `model`. Merged tensors keep the name
// of a layer in their stage, the dtype, the total bytes and element count, and whether they are
// matrices (rank ≥ 2) or not, which is what weight sharding looks at.
WeightsInventory compact_inventory(const ModelSpec& model, const WeightsInventory& inventory, int pipeline_parallel_size);

}  // namespace headroom::plan
