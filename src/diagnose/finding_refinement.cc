#include "diagnose/finding_refinement.h"

#include <algorithm>
#include <string>

namespace headroom {

// From v0.21 vLLM subtracts its CUDA-graph estimate from the KV budget. The estimate line alone is
// no failure; when a KV check fails and the estimate covers what the KV cache lacks, the estimate
// is the cause (and the message's advice, a higher utilization, is not the fix).
void refine_graph_estimate(std::vector<Finding>& findings, const KnowledgeBase& kb, const LoggedRun& run) {
  const std::string k_class = "cuda_graph_estimate_no_kv_cache";
  double estimate = run.cuda_graph_estimated_gib.value_or(0);
  for (const auto& f : findings)
    if (f.error_class == k_class)
      if (auto e = f.facts.find("cuda_graph_estimated_gib"); e != f.facts.end()) estimate = std::max(estimate, e->second);
  findings.erase(std::remove_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.error_class == k_class; }),
                 findings.end());
  const KbRecord* rec = kb.find(k_class);
  if (!rec || estimate <= 0) return;
  for (auto& f : findings) {
    bool covered = false;
    if (f.error_class == "no_kv_cache_memory") {
      double deficit = 0;
      if (auto d = f.facts.find("kv_cache_deficit_gib"); d != f.facts.end()) deficit = d->second;
      covered = deficit < estimate;
    } else if (f.error_class == "kv_cache_insufficient") {
      auto needed = f.facts.find("needed_gib");
      auto available = f.facts.find("available_gib");
      covered = needed != f.facts.end() && available != f.facts.end() && needed->second - available->second <= estimate;
    }
    if (!covered) continue;
    // Reported under the taxonomy class of the KV check that failed; the estimate is its cause.
    f.taxonomy_class = reported_class(f);
    f.cause = rec->cause.empty() ? "cuda_graph_estimate" : rec->cause;
    f.error_class = k_class;
    f.facts["cuda_graph_estimated_gib"] = estimate;
    f.phase_basis = "the KV check failed by less than the CUDA-graph estimate (" + std::to_string(estimate).substr(0, 5) +
                    " GiB) that v0.21+ subtracts from the budget";
    f.phase_evidence = "message";
  }
}

}  // namespace headroom
