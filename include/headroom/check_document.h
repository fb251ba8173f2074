// The whole document of `headroom check --format json`: the prediction (report.h), the warnings
// about the command's flags, and what the run history contributed. The CLI and `headroom serve`
// both build it here, so the two cannot drift.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/history.h"
#include "headroom/model.h"
#include "headroom/vllm_engine.h"

namespace headroom {

// `history_location` is where the records came from (shown without its password); the "history"
// member is present only when `records` is not empty.
nlohmann::json check_document(const ModelSpec& model, const GpuSetup& gpus, const Prediction& prediction,
                              const std::vector<std::string>& command_warnings, const std::vector<RunRecord>& records,
                              const HistoryAdvice& advice, const std::string& history_location);

// `text` with the password of every URL in it ("postgresql://user:secret@host/db",
// "...?password=secret") replaced by "***".
std::string redact_location(std::string text);

}  // namespace headroom
