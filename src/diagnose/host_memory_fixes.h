// Host-side fixes for host memory failures (class host_memory_exhausted): each cause gets the
// change that acts on the host, with the numbers the log gave.
#pragma once

#include <vector>

#include "headroom/diagnose.h"

namespace headroom {

// Fixes for a host_memory_exhausted finding, by its cause; empty when the cause is unknown (the
// knowledge base's workarounds then apply).
std::vector<FixSuggestion> host_memory_fixes(const Finding& finding, const LoggedRun& run);

}  // namespace headroom
