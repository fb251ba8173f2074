// Renderings of a prediction: the JSON document of `headroom check --format json` (schema in
// docs/check-json.md; keys are stable) and the text report with the memory bar.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "headroom/model.h"
#include "headroom/vllm_engine.h"

namespace headroom {

inline constexpr int k_check_schema_version = 1;

// The `check` JSON document (includes "schema_version").
nlohmann::json prediction_to_json(const ModelSpec& model, const GpuSetup& gpus, const Prediction& prediction);

// The `settings` object alone (shared with `plan`'s recommended.settings).
nlohmann::json settings_to_json(const ResolvedSettings& settings);

enum class TextStyle { plain, color };

// The text report: header, memory table, bar, KV capacity, verdict.
std::string render_prediction_text(const ModelSpec& model, const GpuSetup& gpus, const Prediction& prediction,
                                   TextStyle style);

// The bar alone: how one GPU's memory splits, `width` characters wide.
std::string render_memory_bar(const MemoryBreakdown& memory, int width, TextStyle style);

}  // namespace headroom
