// The run loop: classify the command, predict it with check's code, launch it, learn from it, and
// relaunch it with the computed fix while retries are left.
#include "run/launcher.h"

#include <algorithm>

#include "engine/container_command.h"
#include "headroom/knowledge_base.h"
#include "run/attempt.h"
#include "run/command_edit.h"
#include "run/run_learning.h"
#include "util/strings.h"

namespace headroom::run {

namespace {

bool is_env_word(const std::string& s) {
  auto eq = s.find('=');
  return eq != std::string::npos && eq > 0 && s[0] != '-';
}

bool is_program(const std::string& word, const std::string& name) {
  return word == name || word.ends_with("/" + name);
}

std::string cut(const std::string& text, std::size_t limit) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > limit ? line.substr(0, limit) + "..." : line;
}

// What the launch is predicted to do, and the command that will be launched.
struct Preflight {
  LaunchSpec spec;
  std::optional<std::int64_t> kv_tokens;  // predicted, for the line after the start
  int gpus = 0;
  std::optional<int> exit_code;  // set when run stops before launching
};

Preflight preflight(const LaunchSpec& spec, const RunOptions& options, RunDependencies& deps, bool vllm) {
  Preflight out{spec, std::nullopt, 0, std::nullopt};
  if (!vllm || !options.check) return out;
  auto checked = deps.check(spec, CheckNotes::print);
  if (!checked) {
    deps.out.warning("cannot predict this command: " + (checked.error().where.empty() ? "" : checked.error().where + ": ") +
                     checked.error().message + "; launching it without a prediction");
    return out;
  }
  out.gpus = checked->gpus;
  if (checked->prediction.starts) {
    out.kv_tokens = checked->prediction.kv_cache_tokens;
    return out;
  }
  const std::string failure = checked->prediction.failure ? checked->prediction.failure->message : "predicted not to start";
  if (options.predicted_failure == PredictedFailure::fix && !checked->changes.empty()) {
    const FlagChange& change = checked->changes.front();
    out.spec = edit_command(spec, change.set, change.removed);
    out.kv_tokens = change.prediction.kv_cache_tokens;
    deps.out.note("predicted to fail (" + cut(failure, 200) + "); launching the first change check computed instead:");
    deps.out.note("  " + display_command(out.spec));
    return out;
  }
  if (options.predicted_failure == PredictedFailure::force) {
    deps.out.warning("predicted to fail (" + cut(failure, 200) + "); launching anyway (--force)");
    return out;
  }
  deps.out.report(checked->report);
  deps.out.note(std::string("not launched: vLLM is predicted to fail; ") +
                (checked->changes.empty() ? "--force launches it anyway" : "--fix launches the first change above, --force the command as it is"));
  out.exit_code = k_run_predicted_failure;
  return out;
}

std::optional<std::int64_t> predicted_kv_tokens(const LaunchSpec& spec, const RunOptions& options, RunDependencies& deps, bool vllm) {
  if (!vllm || !options.check) return std::nullopt;
  auto checked = deps.check(spec, CheckNotes::quiet);
  if (!checked || !checked->prediction.starts) return std::nullopt;
  return checked->prediction.kv_cache_tokens;
}

// Says what failed and what would fix it.
void report_failure(const LearnedFailure& learned, int exit_status, RunDependencies& deps) {
  const std::string status = exit_status > 128 ? "the command was killed by signal " + std::to_string(exit_status - 128) +
                                                     " (status " + std::to_string(exit_status) + ") before vLLM was ready"
                                               : "the command exited with status " + std::to_string(exit_status) + " before vLLM was ready";
  if (!learned.diagnosis) {
    deps.out.note(status + "; its output could not be diagnosed: " + learned.why_not_diagnosed + "; " + learned.recorded);
    return;
  }
  const Diagnosis& d = *learned.diagnosis;
  if (!d.primary) {
    deps.out.note(status + "; its output names no failure headroom knows; " + learned.recorded);
    return;
  }
  deps.out.note(status + ": " + d.primary->error_class + " in phase " + d.primary->phase + "; " + learned.recorded);
  deps.out.note("  " + cut(d.primary->message, 300));
  for (const auto& fix : d.fixes) {
    if (fix.changes.empty() && fix.action.empty()) continue;
    std::string what;
    for (const auto& [flag, value] : fix.changes) what += (what.empty() ? "" : " ") + (flag == "ENV" ? value : flag + (value.empty() ? "" : " " + value));
    deps.out.note("fix: " + (what.empty() ? fix.action : what) + (fix.why.empty() ? "" : " (" + fix.why + ")"));
    break;
  }
}

}  // namespace

bool is_vllm_command(const std::vector<std::string>& argv) {
  auto words = unwrap_container_command(argv);
  if (!words) return false;
  std::size_t i = 0;
  while (i < words->size() && is_env_word((*words)[i])) ++i;
  if (i < words->size() && (*words)[i] == "env") ++i;
  while (i < words->size() && is_env_word((*words)[i])) ++i;
  if (i >= words->size()) return false;
  const std::string& program = (*words)[i];
  if (is_program(program, "vllm")) return true;
  const std::string base = program.substr(program.rfind('/') + 1);
  return base.starts_with("python") && i + 2 < words->size() && (*words)[i + 1] == "-m" &&
         (*words)[i + 2].starts_with("vllm.");
}

int run_command(const LaunchSpec& first, const RunOptions& options, RunDependencies& deps) {
  const bool vllm = is_vllm_command(first.argv);
  if (!vllm) {
    if (options.not_vllm == NotVllm::refuse) {
      deps.out.warning("'" + cut(display_command(first), 200) +
                       "' is not a vLLM command (vllm serve, python -m vllm.entrypoints.openai.api_server, docker or "
                       "podman run of vllm/vllm-openai); not launched (--strict)");
      return k_run_refused;
    }
    deps.out.warning("'" + (first.argv.empty() ? std::string() : first.argv[0]) +
                     "' is not a vLLM command: running it without a prediction (--strict refuses)");
  }
  // The history first: when it cannot be opened that is said once, before anything else happens.
  RunHistory history(options.history, deps);
  Preflight pre = preflight(first, options, deps, vllm);
  if (pre.exit_code) return *pre.exit_code;

  LaunchSpec spec = pre.spec;
  std::vector<LaunchSpec> tried;
  std::optional<std::int64_t> predicted = pre.kv_tokens;
  for (int attempt = 0;; ++attempt) {
    tried.push_back(spec);
    const std::string source = "headroom run: " + display_command(spec);
    AttemptHooks hooks;
    hooks.note = deps.out.note;
    hooks.on_ready = [&](const LogFollower& log) { deps.out.note(learn_from_start(log, source, predicted, history)); };
    auto result = run_attempt(*deps.host, spec, hooks, options.cleanup_grace);
    if (!result && result.error().code == ErrorCode::unavailable) {
      deps.out.note("not relaunched: " + result.error().message);
      return k_run_interrupted;
    }
    if (!result) {
      deps.out.error("cannot run " + result.error().where + ": " + result.error().message);
      return result.error().code == ErrorCode::not_found ? k_run_not_found : k_run_cannot_start;
    }
    if (result->log->cut_lines() > 0)
      deps.out.note(std::to_string(result->log->cut_lines()) + " output lines longer than " +
                    util::with_commas(static_cast<long long>(FollowerLimits{}.max_line_bytes)) +
                    " bytes were passed on whole but read only in part");
    if (result->ready || result->interrupts > 0) return result->exit_status;
    if (result->exit_status == 0) {
      if (vllm) deps.out.note("the command exited with status 0 before vLLM reported that it was ready; nothing recorded");
      return 0;
    }

    LearnedFailure learned = learn_from_failure(*result->log, source, result->exit_status, pre.gpus, *deps.kb, history);
    report_failure(learned, result->exit_status, deps);
    if (attempt >= options.retries || !learned.diagnosis) return result->exit_status;
    std::string why;
    const FixSuggestion* fix = retry_fix(*learned.diagnosis, *deps.kb, why);
    if (!fix) {
      deps.out.note("not retried: " + why);
      return result->exit_status;
    }
    LaunchSpec next = edit_command(spec, fix->changes);
    if (std::find(tried.begin(), tried.end(), next) != tried.end()) {
      deps.out.note("not retried: the computed fix gives a command already tried");
      return result->exit_status;
    }
    spec = std::move(next);
    deps.out.note("retry " + std::to_string(attempt + 1) + " of " + std::to_string(options.retries) + ": " + display_command(spec));
    predicted = predicted_kv_tokens(spec, options, deps, vllm);
  }
}

}  // namespace headroom::run
