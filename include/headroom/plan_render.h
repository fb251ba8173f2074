// Renderings of a plan: the `vllm serve` command, Python `LLM(...)` code, a vLLM YAML config
// file, the Ray cluster commands of multi-node plans, the JSON document of `headroom plan
// --format json` (schema in docs/plan.md) and the text report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "headroom/plan.h"
#include "headroom/report.h"

namespace headroom {

inline constexpr int k_plan_schema_version = 1;

enum class CommandStyle { one_line, multi_line };

// `vllm serve MODEL --flag value ...` with every flag the configuration sets.
std::string render_vllm_serve(const std::string& model_id, const PlannedConfig& config, const GpuSetup& gpus, CommandStyle style);

// Python code that builds the same engine with vllm.LLM.
std::string render_python(const std::string& model_id, const PlannedConfig& config, const GpuSetup& gpus);

// A YAML file for `vllm serve MODEL --config FILE` (keys are the long flag names).
std::string render_yaml(const std::string& model_id, const PlannedConfig& config, const GpuSetup& gpus);

// The Ray cluster commands (head node, worker nodes, then vllm serve) when the configuration
// spans more than one node; "" otherwise.
std::string render_ray(const std::string& model_id, const PlannedConfig& config, const GpuSetup& gpus);

// The `plan --format json` document (includes "schema_version").
nlohmann::json plan_to_json(const ModelSpec& model, const Plan& plan);

// The text report: request, recommended choices, prediction (as `check` prints it), the
// utilization story, alternatives and the renderings; or why nothing fits and what would.
std::string render_plan_text(const ModelSpec& model, const Plan& plan, TextStyle style);

}  // namespace headroom
