// Internal: a record's settings (JSON keyed by vLLM's flag names) to flags and back, and how a
// recorded setting compares with a prediction's resolved one.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_engine.h"

namespace headroom::history_detail {

// The flags that reproduce a recorded run. A "quantization" setting is passed to vLLM only for
// online quantisation (fp8 on a checkpoint without a quantization config); a checkpoint's own
// quantization is read from the model.
VllmFlags flags_from_settings(const nlohmann::json& settings, int tp, int pp, const ModelSpec& model);

// Adds the keys that `resolved` knows and `settings` does not (defaults vLLM applied); the
// quantization becomes the resolved one.
void add_resolved_settings(nlohmann::json& settings, const ResolvedSettings& resolved);

// The resolved settings as a settings object (every key present).
nlohmann::json settings_json(const ResolvedSettings& resolved);

// Whether the recorded value of `key` equals the candidate's; true when the record does not know it
// (or recorded "auto" for a dtype).
bool same_setting(const nlohmann::json& recorded, const nlohmann::json& candidate, const std::string& key);

// The recorded value of a numeric key compared with the candidate's: -1 smaller, 0 equal or
// unknown, 1 larger (recorded vs candidate).
int compare_setting(const nlohmann::json& recorded, const nlohmann::json& candidate, const std::string& key);

}  // namespace headroom::history_detail
