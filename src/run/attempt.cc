#include "run/attempt.h"

#include <csignal>
#include <cstring>
#include <string>

namespace headroom::run {

namespace {

std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "signal " + std::to_string(signal);
  }
}

// The first signal is passed on as it came, so vLLM shuts down its own way; a second one means the
// person does not want to wait: the whole group is killed.
void on_signal(ProcessHost& host, int signal, AttemptResult& result, const AttemptHooks& hooks) {
  ++result.interrupts;
  if (result.interrupts == 1) {
    host.signal_group(signal);
    hooks.note("passed " + signal_name(signal) + " on to the command; interrupt again to stop it at once");
    return;
  }
  host.signal_group(SIGKILL);
  if (result.interrupts == 2) hooks.note("interrupted again: stopping the command now (SIGKILL to its process group)");
}

}  // namespace

Result<AttemptResult> run_attempt(ProcessHost& host, const LaunchSpec& spec, const AttemptHooks& hooks,
                                  std::chrono::milliseconds cleanup_grace) {
  if (auto started = host.start(spec); !started) return tl::unexpected(started.error());
  AttemptResult result;
  result.log = std::make_unique<LogFollower>();
  LogFollower& log = *result.log;
  for (;;) {
    ProcessEvent e = host.next();
    if (e.kind == ProcessEvent::Kind::exited) {
      result.exit_status = e.exit_status;
      break;
    }
    if (e.kind == ProcessEvent::Kind::signal) {
      on_signal(host, e.signal, result, hooks);
      continue;
    }
    log.feed(e.stream, e.bytes);
    if (!result.ready && log.ready()) {
      result.ready = true;
      if (hooks.on_ready) hooks.on_ready(log);
    }
    // Once vLLM serves, nothing in its log changes what headroom knows: plain copying from here on.
    if (log.serving()) host.pass_through();
  }
  log.finish();
  if (!result.ready && log.ready()) {  // the line that said so was the last, unterminated one
    result.ready = true;
    if (hooks.on_ready) hooks.on_ready(log);
  }
  host.cleanup(cleanup_grace);
  return result;
}

}  // namespace headroom::run
