// `headroom run`: predict a vLLM command as `check` would, launch it, learn from its log while it
// streams (record the start in the run history), and when it fails before it is ready, diagnose it,
// record the failure and, with retries left, relaunch it with the computed fix.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "headroom/check_changes.h"
#include "headroom/history.h"
#include "headroom/vllm_engine.h"
#include "run/process_host.h"

namespace headroom {
class KnowledgeBase;
}

namespace headroom::run {

// What `check -- COMMAND` says of a command (computed by check's own code, see src/cli).
struct CheckedCommand {
  Prediction prediction;
  std::vector<FlagChange> changes;  // when it is predicted to fail: single changes that start
  int gpus = 0;                     // GPUs available, for diagnose's tensor-parallel fixes
  std::string report;               // check's text output, shown when vLLM is predicted to fail
};
enum class CheckNotes { print, quiet };  // quiet: no warnings again for a relaunch's check
using CheckFn = std::function<Result<CheckedCommand>(const LaunchSpec&, CheckNotes)>;

enum class NotVllm { warn, refuse };            // --strict refuses a command that is not vLLM
enum class PredictedFailure { refuse, force, fix };  // default, --force, --fix

struct RunOptions {
  int retries = 0;  // --retry N
  NotVllm not_vllm = NotVllm::warn;
  PredictedFailure predicted_failure = PredictedFailure::refuse;
  bool check = true;          // false: launch without predicting (--no-check)
  std::string history;        // where to record ("" = no recording: --no-history)
  std::chrono::milliseconds cleanup_grace{5000};
};

// Where run's own messages and the check report go (stderr and stdout in the CLI).
struct RunOutput {
  std::function<void(const std::string&)> note;     // one line, without "headroom: "
  std::function<void(const std::string&)> warning;  // one line, without "headroom: warning: "
  std::function<void(const std::string&)> error;    // one line, without "headroom: error: "
  std::function<void(const std::string&)> report;   // check's report (stdout)
};

struct RunDependencies {
  ProcessHost* host = nullptr;
  CheckFn check;
  const KnowledgeBase* kb = nullptr;
  // Opens the history for recording (open_history(location, create) in the CLI).
  std::function<Result<std::unique_ptr<HistoryStore>>(const std::string&)> open_history;
  RunOutput out;
};

// Exit codes of run itself; otherwise run exits with the child's status (128 + N for signal N).
constexpr int k_run_predicted_failure = 3;  // not launched: predicted to fail (no --force/--fix)
constexpr int k_run_refused = 2;            // not launched: not a vLLM command with --strict
constexpr int k_run_not_found = 127;        // not launched: no such executable (as shells say it)
constexpr int k_run_cannot_start = 126;     // not launched: not executable
constexpr int k_run_interrupted = 130;      // not relaunched: interrupted between attempts (128 + SIGINT)

// Runs the whole loop for `spec`; returns the exit status for `headroom run`.
int run_command(const LaunchSpec& spec, const RunOptions& options, RunDependencies& deps);

// Whether `argv` starts vLLM: `vllm serve`, `python -m vllm.entrypoints...`, or a docker/podman run
// of a vLLM image or command; VAR=value and `env` prefixes allowed.
bool is_vllm_command(const std::vector<std::string>& argv);

}  // namespace headroom::run
