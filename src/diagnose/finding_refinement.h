// Refinements of findings that need the whole log: a class that only the combination of two lines
// names (the v0.21+ CUDA-graph estimate behind a failed KV check).
#pragma once

#include <vector>

#include "headroom/diagnose.h"

namespace headroom {

// Replaces a no_kv_cache_memory or kv_cache_insufficient finding by
// cuda_graph_estimate_no_kv_cache when the logged CUDA-graph estimate covers the KV shortfall, and
// drops the estimate's own findings (the estimate line alone is no failure).
void refine_graph_estimate(std::vector<Finding>& findings, const KnowledgeBase& kb, const LoggedRun& run);

}  // namespace headroom
