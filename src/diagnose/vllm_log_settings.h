// The settings lines of a vLLM log (engine config line, non-default args, argparse Namespace) as flags.
#pragma once

#include <string_view>

#include "headroom/vllm_log.h"

namespace headroom {

// Applies "key=value, key=value" (separator '=') or "'key': value" (separator ':', a Python dict
// body) to the run's model and flags. Values vLLM prints as None, and values that do not parse,
// leave the flag unset.
void apply_logged_settings(LoggedRun& run, std::string_view body, char separator);

}  // namespace headroom
