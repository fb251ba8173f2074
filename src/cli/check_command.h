// check's steps from a pasted vLLM command and the GPU/history options to the prediction and the
// changes that would make it start: shared by `check` and `run`, so both predict a command alike.
#pragma once

#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/hub_options.h"
#include "cli/target_options.h"
#include "headroom/check_changes.h"
#include "headroom/history.h"
#include "headroom/model.h"
#include "headroom/vllm_engine.h"

namespace headroom::cli {

struct CheckInputs {
  TargetOptions target;
  EntrypointOptions entry;
  HubOptions hub;
  std::string db;
  bool no_history = false;
};

struct CheckedPrediction {
  VllmCommand command;
  ModelSpec model;
  GpuSetup gpus;
  std::vector<RunRecord> records;
  HistoryAdvice advice;
  std::string history_location;
  Prediction prediction;
  std::vector<FlagChange> changes;
};

struct CheckFailure {
  Error error;
  int exit_code = k_exit_failure;
};

enum class CheckWarnings { print, quiet };

// Resolves the command, loads the model, finds the GPUs, reads the history, predicts and, when it
// would not start, computes the changes. Warnings go to stderr unless quiet.
tl::expected<CheckedPrediction, CheckFailure> predict_checked(const Args& vllm_args, CheckInputs inputs, CheckWarnings warnings);

// check's text output for a prediction (the report, then what to change).
std::string render_check_text(const CheckedPrediction& checked, ColorMode color);

}  // namespace headroom::cli
