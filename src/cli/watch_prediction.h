// The prediction `headroom watch` compares the live KV cache with: --model MODEL --gpu NAME and
// vLLM flags (or `-- vllm serve MODEL ...`), run through load_model() and predict().
#pragma once

#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/target_options.h"
#include "headroom/watch.h"

namespace headroom::cli {

// nullopt when neither a model nor vLLM flags were given. Errors: those of the vLLM command
// parser, the model loader, the GPU catalogue and predict(); invalid_argument for --gpu auto
// (the server's GPUs are busy, so the GPU must be named).
Result<std::optional<watch::KvCapacityExpectation>> watch_expectation(const std::string& model, const TargetOptions& target,
                                                                      const Args& vllm_args,
                                                                      std::vector<std::string>& warnings);

}  // namespace headroom::cli
