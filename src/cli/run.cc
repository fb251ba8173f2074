// headroom run [options] -- COMMAND: check, launch, learn and fix in one command (src/run/).
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/check_command.h"
#include "cli/cli_common.h"
#include "cli/cli_parse.h"
#include "cli/commands.h"
#include "headroom/knowledge_base.h"
#include "run/launcher.h"

namespace headroom::cli {

namespace {

constexpr const char* k_run_help = R"(usage: headroom run [options] -- COMMAND...

Predicts COMMAND as 'headroom check -- COMMAND' does, launches it, follows its log, records the
start in the run history (so the next check and plan of the same setup use what vLLM measured),
and when vLLM fails before it is ready, diagnoses the failure, records it and says what to change.

COMMAND: vllm serve MODEL [flags], python -m vllm.entrypoints.openai.api_server --model MODEL
[flags], or docker/podman run [options] vllm/vllm-openai[:TAG] [vLLM flags], with VAR=value
assignments before it if needed. It runs without a shell, with its arguments unchanged; its
output passes through unchanged (on a terminal it gets a terminal, so colours and progress bars
stay); SIGINT, SIGTERM and SIGHUP go to its process group (twice: it is killed); its worker
processes are ended with it.

options:
  --retry N             relaunch at most N times with the computed fix when vLLM fails before it
                        is ready (only failures a flag fixes; never the same command twice)
  --fix                 when vLLM is predicted to fail, launch check's first change instead
  --force               launch even when vLLM is predicted to fail
  --strict              refuse a command that is not vLLM (default: run it with a warning)
  --no-check            launch without predicting
  --gpu NAME, --gpus N, --nodes N, --gpu-memory-gib X, --used-gib X, --free-gib X,
  --vllm-version V, --entrypoint llm|serve
                        as for check (default: the live GPUs)
  --env VAR=value       an environment variable for the prediction and the command (repeatable)
  --db URL              run history to consult and record in: SQLite file or postgresql:// URL
                        (default: $HEADROOM_DB, else $XDG_DATA_HOME/headroom/history.db)
  --no-history          neither consult nor record the run history
  --color auto|always|never  colour of the check report
  --offline, --hub-timeout S, --hub-connect-timeout S, --quiet   as for check
exit: the command's status (128+N when killed by signal N); 3 predicted to fail and not launched;
      2 bad usage or refused (--strict); 127 no such executable; 126 not executable; 1 error
)";

struct RunFlags {
  CheckInputs check;
  std::string color_text = "auto";
  int retries = 0;
  bool fix = false, force = false, strict = false, no_check = false;
};

std::optional<int> parse_run_flags(const Args& own, RunFlags& f) {
  CLI::App app{"headroom run"};
  add_target_options(app, f.check.target);
  add_entrypoint_options(app, f.check.entry);
  add_hub_options(app, f.check.hub, RevisionOption::omit);
  app.add_option("--db", f.check.db);
  app.add_flag("--no-history", f.check.no_history);
  app.add_option("--color", f.color_text);
  app.add_option("--retry", f.retries)->check(CLI::Range(0, 100));
  app.add_flag("--fix", f.fix);
  app.add_flag("--force", f.force);
  app.add_flag("--strict", f.strict);
  app.add_flag("--no-check", f.no_check);
  return parse_or_exit(app, own, "run");
}

}  // namespace

int run_run(const Args& args) {
  auto dash = std::find(args.begin(), args.end(), "--");
  if (std::find(args.begin(), dash, "--help") != dash || std::find(args.begin(), dash, "-h") != dash) {
    std::fputs(k_run_help, stdout);
    return k_exit_ok;
  }
  Args own(args.begin(), dash);
  run::LaunchSpec spec;
  if (dash != args.end()) spec.argv.assign(dash + 1, args.end());
  RunFlags flags;
  if (auto rc = parse_run_flags(own, flags)) return *rc;
  if (spec.argv.empty()) {
    print_error("expected the command after --: headroom run [options] -- vllm serve MODEL [flags] (see 'headroom run --help')");
    return k_exit_usage;
  }
  if (flags.fix && flags.force) return print_error("--fix and --force: choose one"), k_exit_usage;
  auto color = parse_color(flags.color_text);
  if (!color) return print_error(color.error()), k_exit_usage;
  auto kb = KnowledgeBase::builtin();
  if (!kb) return print_error(kb.error()), k_exit_failure;

  spec.env = flags.check.entry.env;  // --env: for the prediction, and set for the command too
  run::RunOptions options;
  options.retries = flags.retries;
  options.not_vllm = flags.strict ? run::NotVllm::refuse : run::NotVllm::warn;
  options.predicted_failure = flags.fix ? run::PredictedFailure::fix : flags.force ? run::PredictedFailure::force : run::PredictedFailure::refuse;
  options.check = !flags.no_check;
  options.history = flags.check.no_history ? "" : default_history_location(flags.check.db);

  bool history_opened = true;  // an unusable history is said once, by the launcher, not again by check
  auto host = run::make_posix_process_host();
  run::RunDependencies deps;
  deps.host = host.get();
  deps.kb = &*kb;
  deps.open_history = [&](const std::string& location) {
    auto store = open_history(location, OpenMode::create);
    history_opened = store.has_value();
    return store;
  };
  deps.check = [&](const run::LaunchSpec& s, run::CheckNotes notes) -> Result<run::CheckedCommand> {
    Args words = s.env;
    words.insert(words.end(), s.argv.begin(), s.argv.end());
    CheckInputs in = flags.check;
    in.no_history = in.no_history || !history_opened;
    auto checked = predict_checked(words, in, notes == run::CheckNotes::print ? CheckWarnings::print : CheckWarnings::quiet);
    if (!checked) return tl::unexpected(checked.error().error);
    return run::CheckedCommand{checked->prediction, checked->changes, checked->gpus.count, render_check_text(*checked, *color)};
  };
  deps.out.note = [](const std::string& m) { std::fprintf(stderr, "headroom: %s\n", m.c_str()); };
  deps.out.warning = [](const std::string& m) { print_warning(m); };
  deps.out.error = [](const std::string& m) { print_error(m); };
  deps.out.report = [](const std::string& m) { std::fputs(m.c_str(), stdout); std::fflush(stdout); };
  std::fflush(stdout);
  return run::run_command(spec, options, deps);
}

}  // namespace headroom::cli
