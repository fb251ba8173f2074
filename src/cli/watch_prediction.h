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

// The expectation from a vLLM startup log of the server (--from-log): the blocks vLLM logged
// ("GPU KV cache size" / num_gpu_blocks), else a prediction for the model, flags and GPU memory the
// log names, with the terms it measured. Errors: not_found for a missing file; invalid_argument
// when the log names neither its KV cache nor the model and GPU memory.
Result<watch::KvCapacityExpectation> watch_expectation_from_log(const std::string& path, std::vector<std::string>& warnings);

}  // namespace headroom::cli
