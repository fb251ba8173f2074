// One launch of the command: output passed through and followed until vLLM serves, signals to
// headroom passed on to the command's process group, everything it left behind ended at the close.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "run/log_follower.h"
#include "run/process_host.h"

namespace headroom::run {

struct AttemptResult {
  int exit_status = 0;        // the child's exit code, or 128 + N
  bool ready = false;         // vLLM reported that it finished starting
  int interrupts = 0;         // signals headroom received and passed on
  std::unique_ptr<LogFollower> log;  // what was read of the output
};

struct AttemptHooks {
  std::function<void(const LogFollower&)> on_ready;  // once, when vLLM reports it finished starting
  std::function<void(const std::string&)> note;
};

// Launches `spec` on `host` and runs it to its end. Errors: those of ProcessHost::start (the
// command did not start).
Result<AttemptResult> run_attempt(ProcessHost& host, const LaunchSpec& spec, const AttemptHooks& hooks,
                                  std::chrono::milliseconds cleanup_grace);

}  // namespace headroom::run
