// ProcessHost: the one child process `headroom run` launches, behind a small interface so that the
// launcher's logic (parsing, recording, retries, signals) is tested with a scripted fake. The real
// host (make_posix_process_host) runs the program without a shell in a process group of its own,
// passes its output through unchanged and turns signals into events.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/error.h"

namespace headroom::run {

enum class StreamId { out, err };

// What a launch runs: the program and its arguments, unchanged, and VAR=value pairs added to (or
// replacing in) headroom's own environment.
struct LaunchSpec {
  std::vector<std::string> argv;
  std::vector<std::string> env;
  bool operator==(const LaunchSpec&) const = default;
};

struct ProcessEvent {
  enum class Kind { output, signal, exited };
  Kind kind = Kind::exited;
  StreamId stream = StreamId::out;  // output: which stream the bytes came on
  std::string_view bytes;           // output: valid until the next call to next()
  int signal = 0;                   // signal: SIGINT, SIGTERM or SIGHUP sent to headroom
  int exit_status = 0;              // exited: the exit code, or 128 + N when killed by signal N
};

class ProcessHost {
 public:
  virtual ~ProcessHost() = default;

  // Starts the program (argv[0], searched on PATH when it has no '/'). Errors: not_found when there
  // is no such executable, invalid_argument when it is not executable, unavailable when headroom was
  // interrupted since the last launch ended (a relaunch is then not wanted), io_error otherwise.
  virtual Result<void> start(const LaunchSpec& spec) = 0;

  // Waits for the next event. Output has already been written to headroom's own stdout or stderr
  // when it is reported; after pass_through() it is no longer reported. `exited` comes once, after
  // the output the child (and its workers) wrote before it exited has been passed on.
  virtual ProcessEvent next() = 0;

  // From now on, output is copied straight through and not reported.
  virtual void pass_through() = 0;

  // Sends `signal` to the child's process group.
  virtual void signal_group(int signal) = 0;

  // Ends what is left of the child's processes: its process group and any descendant orphaned to
  // headroom get SIGTERM, then SIGKILL after `grace`; all are reaped. Safe to call more than once.
  virtual void cleanup(std::chrono::milliseconds grace) = 0;
};

// The real host: fork/exec without a shell; the child's stdout and stderr are pseudo-terminals where
// headroom's are terminals (so vLLM keeps its colours and progress bars) and pipes elsewhere; its
// stdin is headroom's. headroom becomes a child subreaper, so vLLM's workers are never orphaned.
// SIGINT, SIGTERM and SIGHUP to headroom become events.
std::unique_ptr<ProcessHost> make_posix_process_host();

}  // namespace headroom::run
