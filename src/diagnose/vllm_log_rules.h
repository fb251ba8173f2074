// The line rules of the vLLM startup-log parser: one row per vLLM message, each with the literal
// that selects its lines (the scanner matches these as anchors) and the function that reads it.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "headroom/vllm_log.h"

namespace headroom {

struct LogLineRule {
  // Reads the message into the run; returns the startup stage the line proves was reached, if any.
  using Reader = std::optional<StartupStage> (*)(LoggedRun& run, std::string_view clean_line);
  const char* literal;  // a line that does not contain it is not this message
  Reader read;
};

// The rules, one per literal, in the order the parser tries them on a line (every rule whose
// literal is present runs); vllm_log_rules.cc writes them one row per message.
const std::vector<LogLineRule>& log_line_rules();

}  // namespace headroom
