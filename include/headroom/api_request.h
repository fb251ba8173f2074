// The request bodies of `headroom serve`'s HTTP API, parsed into what the CLI's options would
// give: vLLM's flag names ({"model": ..., "gpu": ..., "flags": {"max_model_len": 4096}}) or a
// pasted command line ({"command": "vllm serve MODEL --max-model-len 4096"}).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/error.h"
#include "headroom/plan.h"
#include "headroom/vllm_config.h"

namespace headroom {

// Which GPUs and which vLLM version, as `check` and `plan` take them (--gpu, --gpus, --nodes,
// --gpu-memory-gib, --used-gib, --free-gib, --vllm-version).
struct TargetRequest {
  std::string gpu;  // catalogue name; "" or "auto": the live GPUs (only where the server allows it)
  int gpus = 0;     // 0: as many as the flags need
  int nodes = 1;
  std::optional<double> gpu_memory_gib;
  std::optional<double> used_gib;
  std::optional<double> free_gib;
  std::string vllm_version;  // "": newest modelled
};

// POST /v1/check.
struct CheckApiRequest {
  VllmCommand command;  // model and flags, from "model"+"flags" or from "command"
  TargetRequest target;
};

// POST /v1/plan: `plan`'s options under their CLI names (context, concurrency, goal, ...).
struct PlanApiRequest {
  std::string model;
  TargetRequest target;
  std::optional<std::int64_t> context;
  int concurrency = 1;
  std::string goal = "throughput";
  std::optional<int> max_gpus;
  std::optional<int> gpus_per_node;
  bool allow_fp8_kv = false;
  bool allow_eager = false;
  KeptFlags kept;  // a "command"'s flags every configuration keeps (plan_hints)
  std::optional<double> margin_gib;
  std::vector<std::string> from_command;  // what a "command" contributed, in words (plan_hints)
};

// A parsed body and its canonical form (keys sorted, no spaces), the key of the response cache.
template <class T>
struct ParsedRequest {
  T request;
  std::string canonical;
};

// Parse a JSON body. Errors: parse_error for text that is not a JSON object (where = "body:line:col"),
// invalid_argument for unknown keys, wrong types and bad flag values (where = the key path, e.g.
// "flags.max_model_len"). Never throws.
Result<ParsedRequest<CheckApiRequest>> parse_check_request(std::string_view body);
Result<ParsedRequest<PlanApiRequest>> parse_plan_request(std::string_view body);

// Splits a command line into words as a POSIX shell would, without expanding anything: single
// and double quotes, backslash escapes, backslash-newline continuations. Errors: parse_error
// for an unterminated quote.
Result<std::vector<std::string>> split_shell_words(std::string_view text);

}  // namespace headroom
