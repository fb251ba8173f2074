// Allocation arithmetic: the size of a failed allocation ("Tried to allocate X") compared with the
// tensors vLLM allocates in each startup phase, computed for the run's setup (flags from the log
// or the command line, the model's config). It places an out-of-memory error whose log shows no
// frame, message or startup line.
#pragma once

#include <optional>
#include <string>

#include "headroom/diagnose.h"
#include "headroom/model.h"

namespace headroom {

struct AllocationMatch {
  std::string phase;  // taxonomy phase
  std::string basis;  // "501.00 MiB = 1,024 sequences × 128,256 vocabulary × 4 B: the sampler warm-up"
  double confidence = 0.5;
};

// The phase whose allocation has the size `tried_gib`, for this run and model (model may be null:
// only the rules that need no model then apply). nullopt when no size matches.
std::optional<AllocationMatch> match_allocation(double tried_gib, const Finding& finding, const LoggedRun& run,
                                                const ModelSpec* model);

// Places the primary finding of `diagnosis` by its allocation size when no evidence placed it
// (phase "unknown"): its class becomes the out-of-memory record of that phase in `kb`.
void place_by_allocation(Diagnosis& diagnosis, const KnowledgeBase& kb, const ModelSpec* model);

}  // namespace headroom
