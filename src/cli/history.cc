// headroom history list|show ID|export --format jsonl|import FILE|forget ID [--db URL]
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>

#include "cli/cli_common.h"
#include "cli/cli_parse.h"
#include "cli/commands.h"
#include "headroom/history.h"
#include "util/strings.h"

namespace headroom::cli {

namespace {

constexpr const char* k_history_help = R"(usage: headroom history list [--format text|json]
       headroom history show ID [--format text|json]
       headroom history export [--format jsonl] [-o FILE]
       headroom history import FILE
       headroom history forget ID

The run history: vLLM starts recorded with 'headroom record' or imported from JSON Lines (the
fields of startup measurements: model, vllm_version, gpu_name, total_gpu_memory_gib, tp, flags,
observed_*, observed_outcome). 'check' and 'plan' use it: a measured term replaces the estimate
for the same model, GPU, TP and vLLM era, and configurations that failed are cited.

options:
  --db URL     history database: a SQLite file or a postgresql:// URL
               (default: $HEADROOM_DB, else $XDG_DATA_HOME/headroom/history.db)
)";

std::string opt_gib(const std::optional<double>& v) { return v ? util::fixed(*v, 2) : "-"; }

void print_record_text(const RunRecord& r) {
  auto line = [](const std::string& k, const std::string& v) {
    if (!v.empty()) std::printf("%-22s %s\n", k.c_str(), v.c_str());
  };
  line("history", "#" + std::to_string(r.id));
  line("recorded at", r.recorded_at);
  line("run date", r.run_date);
  line("source", r.source);
  line("model", r.model);
  line("model config sha256", r.model_config_hash);
  line("gpu", r.gpu_name + (r.gpu_key.empty() ? "" : " [" + r.gpu_key + "]") +
                  (r.total_gib ? " (" + util::fixed(*r.total_gib, 2) + " GiB)" : ""));
  line("vllm", r.vllm_version + (r.era.empty() ? "" : " (era " + r.era + ")"));
  line("parallel", "tp=" + std::to_string(r.tp) + " pp=" + std::to_string(r.pp) + " dp=" + std::to_string(r.dp));
  std::vector<std::string> settings;
  for (const auto& [k, v] : r.settings.items()) settings.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
  line("settings", util::join(settings, " "));
  line("outcome", std::string(to_string(r.outcome)) + (r.failure_class.empty() ? "" : " (" + r.failure_class + ")"));
  line("failure message", r.failure_message);
  const auto& m = r.measured;
  line("weights GiB", opt_gib(m.weights_gib));
  line("activation peak GiB", opt_gib(m.activation_peak_gib) +
                                  (r.estimated_activation_gib ? "  (estimate " + util::fixed(*r.estimated_activation_gib, 2) + ")" : ""));
  line("non-torch GiB", opt_gib(m.non_torch_gib) +
                            (r.estimated_non_torch_gib ? "  (estimate " + util::fixed(*r.estimated_non_torch_gib, 2) + ")" : ""));
  line("cuda graphs GiB", opt_gib(m.cuda_graph_gib));
  line("kv cache GiB", opt_gib(m.kv_cache_gib));
  line("kv cache tokens", m.kv_tokens ? util::with_commas(*m.kv_tokens) : "-");
  line("gpu blocks", m.gpu_blocks ? util::with_commas(*m.gpu_blocks) : "-");
  line("max concurrency", m.max_concurrency ? util::fixed(*m.max_concurrency, 2) + "x" +
                                                  (m.concurrency_len ? " at " + util::with_commas(*m.concurrency_len) + " tokens" : "")
                                            : "-");
}

Result<long long> parse_id(const std::string& text) {
  std::string t = text.rfind('#', 0) == 0 ? text.substr(1) : text;
  try {
    std::size_t used = 0;
    long long id = std::stoll(t, &used);
    if (used == t.size() && id > 0) return id;
  } catch (const std::exception&) {
  }
  return make_error(ErrorCode::invalid_argument, "expected a record id (a positive integer), got '" + text + "'", "ID");
}

}  // namespace

int run_history(const Args& args) {
  for (const auto& a : args)
    if (a == "--help" || a == "-h" || a == "help") return std::fputs(k_history_help, stdout), k_exit_ok;
  if (args.empty()) {
    print_error("history: expected an action: list, show ID, export, import FILE or forget ID");
    return k_exit_usage;
  }
  const std::string action = args[0];
  CLI::App app{"headroom history"};
  std::string db, format_text, output;
  std::vector<std::string> positional;
  app.add_option("--db", db);
  app.add_option("--format", format_text);
  app.add_option("-o,--output", output);
  app.add_option("ARGS", positional);
  if (auto rc = parse_or_exit(app, Args(args.begin() + 1, args.end()), "history")) return *rc;
  const std::vector<std::string> actions = {"list", "show", "export", "import", "forget"};
  if (std::find(actions.begin(), actions.end(), action) == actions.end()) {
    auto close = util::closest_matches(action, actions);
    print_error("history: unknown action '" + action + "'" + (close.empty() ? "" : "; did you mean " + util::or_list(close) + "?") +
                " (expected list, show, export, import or forget)");
    return k_exit_usage;
  }
  std::size_t want_args = action == "list" || action == "export" ? 0 : 1;
  if (positional.size() != want_args) {
    print_error("history " + action + ": expected " + (want_args ? "one argument" : "no argument") + ", got " +
                std::to_string(positional.size()));
    return k_exit_usage;
  }
  Format format = Format::text;
  if (action == "export") {
    if (!format_text.empty() && format_text != "jsonl")
      return print_error(Error{ErrorCode::invalid_argument, "expected jsonl, got '" + format_text + "'", "--format"}), k_exit_usage;
  } else if (!format_text.empty()) {
    auto f = parse_format(format_text);
    if (!f) return print_error(f.error()), k_exit_usage;
    format = *f;
  }

  const std::string location = default_history_location(db);
  // Reading actions never create a database; import does.
  auto store = open_history(location, action == "import" ? OpenMode::create : OpenMode::existing_only);
  if (!store) return print_error(store.error()), k_exit_failure;
  if (!*store) {
    if (action == "list" || action == "export") {
      if (format == Format::json) std::printf("%s\n", nlohmann::json{{"schema_version", 1}, {"records", nlohmann::json::array()}}.dump(2).c_str());
      else if (action == "list") std::fprintf(stderr, "headroom: no history yet at %s\n", location.c_str());
      return k_exit_ok;
    }
    print_error(Error{ErrorCode::not_found, "no history database", location});
    return k_exit_failure;
  }
  HistoryStore& h = **store;

  if (action == "import") {
    auto s = import_jsonl(h, positional[0]);
    if (!s) return print_error(s.error()), exit_code_for(s.error());
    if (format == Format::json)
      std::printf("%s\n", nlohmann::json{{"schema_version", 1}, {"rows", s->rows}, {"added", s->added}, {"duplicates", s->duplicates}}
                              .dump(2)
                              .c_str());
    else
      std::printf("imported %d rows from %s: %d added, %d already recorded\n", s->rows, positional[0].c_str(), s->added,
                  s->duplicates);
    return k_exit_ok;
  }
  if (action == "show" || action == "forget") {
    auto id = parse_id(positional[0]);
    if (!id) return print_error(id.error()), k_exit_usage;
    if (action == "forget") {
      auto gone = h.forget(*id);
      if (!gone) return print_error(gone.error()), k_exit_failure;
      if (!*gone) return print_error(Error{ErrorCode::not_found, "no history record #" + std::to_string(*id), location}), k_exit_failure;
      std::printf("forgot history #%lld\n", *id);
      return k_exit_ok;
    }
    auto r = h.get(*id);
    if (!r) return print_error(r.error()), k_exit_failure;
    if (!*r) return print_error(Error{ErrorCode::not_found, "no history record #" + std::to_string(*id), location}), k_exit_failure;
    if (format == Format::json) {
      auto j = to_json(**r);
      j["schema_version"] = 1;
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      print_record_text(**r);
    }
    return k_exit_ok;
  }
  auto records = h.list();
  if (!records) return print_error(records.error()), k_exit_failure;
  if (action == "export") {
    std::FILE* out = stdout;
    if (!output.empty()) {
      out = std::fopen(output.c_str(), "w");
      if (!out) return print_error(Error{ErrorCode::io_error, "cannot write the file", output}), k_exit_failure;
    }
    for (const auto& r : *records) std::fprintf(out, "%s\n", record_to_jsonl_row(r).dump().c_str());
    if (out != stdout && std::fclose(out) != 0)
      return print_error(Error{ErrorCode::io_error, "cannot write the file", output}), k_exit_failure;
    return k_exit_ok;
  }
  // list
  if (format == Format::json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& r : *records) all.push_back(to_json(r));
    std::printf("%s\n", nlohmann::json{{"schema_version", 1}, {"database", h.description()}, {"records", all}}.dump(2).c_str());
    return k_exit_ok;
  }
  std::printf("%5s  %-10s  %-28s  %-40s  %-24s  %3s  %-10s  %8s\n", "id", "date", "outcome", "model", "gpu", "tp", "vllm",
              "kv GiB");
  for (const auto& r : *records) {
    std::string outcome = std::string(to_string(r.outcome)) + (r.failure_class.empty() ? "" : " " + r.failure_class);
    std::string gpu = r.gpu_key.empty() ? r.gpu_name.substr(0, 24) : r.gpu_key;
    std::printf("%5lld  %-10s  %-28s  %-40s  %-24s  %3d  %-10s  %8s\n", static_cast<long long>(r.id), r.run_date.c_str(),
                outcome.substr(0, 28).c_str(), r.model.substr(0, 40).c_str(), gpu.c_str(), r.tp, r.vllm_version.substr(0, 10).c_str(),
                opt_gib(r.measured.kv_cache_gib).c_str());
  }
  return k_exit_ok;
}

}  // namespace headroom::cli
