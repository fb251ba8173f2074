// headroom record LOG... [--outcome ok|failed] [--db URL]: stores what real vLLM starts measured.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/cli_common.h"
#include "cli/cli_parse.h"
#include "cli/commands.h"
#include "headroom/history.h"
#include "headroom/knowledge_base.h"
#include "util/strings.h"

namespace headroom::cli {

int run_record(const Args& args) {
  CLI::App app{"Records vLLM startup logs in the run history: the run (model, GPU, vLLM version, settings), what vLLM "
               "measured (weights, activation peak, non-torch memory, CUDA graphs, KV cache, concurrency) and the "
               "outcome (started, or diagnose's failure class). A log already recorded is stored once. The history is "
               "--db, else $HEADROOM_DB (a SQLite path or a postgresql:// URL), else "
               "$XDG_DATA_HOME/headroom/history.db.",
               "headroom record"};
  std::vector<std::string> logs;
  std::string outcome_text, db, format_text = "text";
  app.add_option("LOG", logs, "vLLM log files, plain or gzip ('-' = standard input)")->required();
  app.add_option("--outcome", outcome_text, "ok or failed (default: from the log)");
  app.add_option("--db", db, "history database: SQLite file or postgresql:// URL");
  app.add_option("--format", format_text, "text or json");
  if (auto rc = parse_or_exit(app, args, "record")) return *rc;
  auto format = parse_format(format_text);
  if (!format) return print_error(format.error()), k_exit_usage;
  std::optional<RunOutcome> outcome;
  if (outcome_text == "ok") outcome = RunOutcome::ok;
  else if (outcome_text == "failed") outcome = RunOutcome::failed;
  else if (!outcome_text.empty())
    return print_error(Error{ErrorCode::invalid_argument, "expected ok or failed, got '" + outcome_text + "'", "--outcome"}),
           k_exit_usage;

  auto kb = KnowledgeBase::builtin();
  if (!kb) return print_error(kb.error()), k_exit_failure;
  // Parse every log before opening the database: a bad log stores nothing.
  std::vector<RunRecord> records;
  for (const auto& log : logs) {
    auto r = record_from_log(log, *kb, outcome);
    if (!r) return print_error(r.error()), exit_code_for(r.error());
    records.push_back(std::move(*r));
  }
  auto store = open_history(default_history_location(db), OpenMode::create);
  if (!store) return print_error(store.error()), k_exit_failure;
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    auto added = (*store)->add(r);
    if (!added) return print_error(added.error()), k_exit_failure;
    if (*format == Format::json) {
      out.push_back({{"log", logs[i]}, {"id", added->id}, {"inserted", added->inserted}, {"outcome", to_string(r.outcome)},
                     {"failure_class", r.failure_class}, {"model", r.model}, {"gpu_name", r.gpu_name},
                     {"vllm_version", r.vllm_version}});
      continue;
    }
    std::string what = std::string(to_string(r.outcome)) + (r.failure_class.empty() ? "" : " (" + r.failure_class + ")") +
                       "; " + r.model + (r.gpu_name.empty() ? "" : ", " + r.gpu_name) +
                       (r.vllm_version.empty() ? "" : ", vLLM " + r.vllm_version) + ", tp=" + std::to_string(r.tp);
    if (added->inserted)
      std::printf("recorded %s as history #%lld: %s\n", logs[i].c_str(), static_cast<long long>(added->id), what.c_str());
    else
      std::printf("already recorded: %s is history #%lld\n", logs[i].c_str(), static_cast<long long>(added->id));
  }
  if (*format == Format::json)
    std::printf("%s\n", nlohmann::json{{"schema_version", 1}, {"database", (*store)->description()}, {"records", out}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  return k_exit_ok;
}

}  // namespace headroom::cli
