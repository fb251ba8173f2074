// headroom kb list|show ID|validate DIR|patterns: the failure knowledge base.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/cli_common.h"
#include "cli/cli_parse.h"
#include "cli/commands.h"
#include "headroom/diagnose.h"
#include "headroom/knowledge_base.h"
#include "util/strings.h"

namespace headroom::cli {

namespace {

nlohmann::json record_json(const KbRecord& r) {
  nlohmann::json patterns = nlohmann::json::array();
  for (const auto& p : r.patterns)
    patterns.push_back({{"regex", p.regex}, {"match", p.match == MatchRule::direct ? "direct" : "by_phase"},
                        {"priority", p.priority}, {"severity", std::string(to_string(p.severity))}});
  nlohmann::json dead = nlohmann::json::array();
  auto rate = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  for (const auto& d : r.dead_ends)
    dead.push_back({{"action", d.action}, {"why_fails", d.why_fails}, {"fail_rate", rate(d.fail_rate)}, {"rate_source", d.rate_source}});
  nlohmann::json work = nlohmann::json::array();
  for (const auto& w : r.workarounds)
    work.push_back({{"action", w.action}, {"how", w.how}, {"condition", w.condition}, {"success_rate", rate(w.success_rate)},
                    {"rate_source", w.rate_source}});
  return {{"id", r.id}, {"class", r.taxonomy_class.empty() ? r.id : r.taxonomy_class},
          {"cause", r.cause.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.cause)},
          {"signature", r.signature}, {"category", r.category}, {"phases", r.phases},
          {"out_of_memory", r.out_of_memory}, {"look_alike", r.look_alike}, {"root_cause", r.root_cause},
          {"patterns", patterns}, {"fact_patterns", r.fact_patterns}, {"phase_evidence", r.phase_evidence},
          {"workarounds", work}, {"dead_ends", dead}, {"official_doc_url", r.official_doc_url},
          {"confidence", r.confidence}, {"origin", r.origin}};
}

}  // namespace

int run_kb(const Args& args) {
  CLI::App app{"The failure knowledge base: one JSON record per failure class (built in, --kb DIR, HEADROOM_KB_PATH).",
               "headroom kb"};
  app.require_subcommand(1);
  std::vector<std::string> kb_dirs;
  std::string format_text = "text";
  std::string id, dir;
  app.add_option("--kb", kb_dirs, "extra knowledge-base directory")->expected(1);
  app.add_option("--format", format_text, "text or json");
  auto* list = app.add_subcommand("list", "list the failure classes");
  auto* show = app.add_subcommand("show", "show one record");
  show->add_option("ID", id, "class id")->required();
  auto* validate = app.add_subcommand("validate", "check every record of a directory");
  validate->add_option("DIR", dir, "directory of *.json records")->required();
  auto* patterns = app.add_subcommand("patterns", "print every regex the log scanner matches, one per line");
  if (auto rc = parse_or_exit(app, args, "kb")) return *rc;
  auto format = parse_format(format_text);
  if (!format) return print_error(format.error()), k_exit_usage;

  if (validate->parsed()) {
    auto errors = KnowledgeBase::validate_dir(dir);
    if (!errors) return print_error(errors.error()), k_exit_failure;
    for (const auto& e : *errors) print_error(e);
    if (*format == Format::json) {
      nlohmann::json j = {{"schema_version", 1}, {"directory", dir}, {"errors", nlohmann::json::array()}};
      for (const auto& e : *errors) j["errors"].push_back({{"where", e.where}, {"message", e.message}});
      std::printf("%s\n", j.dump(2).c_str());
    } else if (errors->empty()) {
      std::printf("%s: all records are valid\n", dir.c_str());
    }
    return errors->empty() ? k_exit_ok : k_exit_failure;
  }
  auto kb = KnowledgeBase::load(kb_dirs);
  if (!kb) return print_error(kb.error()), k_exit_failure;
  if (patterns->parsed()) {
    Diagnoser diagnoser(*kb);
    for (const auto& p : diagnoser.patterns()) std::printf("%s\n", p.c_str());
    return k_exit_ok;
  }
  if (show->parsed()) {
    const KbRecord* r = kb->find(id);
    if (!r) {
      std::vector<std::string> ids;
      for (const auto& rec : kb->records()) ids.push_back(rec.id);
      auto close = util::closest_matches(id, ids);
      print_error("kb show: no failure class '" + id + "'" + (close.empty() ? "" : "; did you mean " + util::or_list(close) + "?"));
      return k_exit_usage;
    }
    if (*format == Format::json) {
      nlohmann::json j = record_json(*r);
      j["schema_version"] = 1;
      std::printf("%s\n", j.dump(2).c_str());
      return k_exit_ok;
    }
    std::printf("%s: %s\n", r->id.c_str(), r->signature.c_str());
    if (!r->taxonomy_class.empty() || !r->cause.empty())
      std::printf("  reported as: %s%s\n", (r->taxonomy_class.empty() ? r->id : r->taxonomy_class).c_str(),
                  r->cause.empty() ? "" : (", cause " + r->cause).c_str());
    std::printf("  phases: %s; %s%s\n", util::join(r->phases, ", ").c_str(),
                r->out_of_memory ? "out of memory" : "not out of memory", r->look_alike ? " (look-alike)" : "");
    std::printf("  root cause: %s\n", r->root_cause.c_str());
    std::printf("  patterns:\n");
    for (const auto& p : r->patterns) std::printf("    %s\n", p.regex.c_str());
    std::printf("  workarounds:\n");
    auto rate_text = [](const std::optional<double>& v, const std::string& source, const char* what) {
      if (!v) return std::string();
      return " (" + std::string(what) + " " + std::to_string(static_cast<int>(*v * 100 + 0.5)) + "%, " + source + ")";
    };
    for (const auto& w : r->workarounds)
      std::printf("    - %s%s%s\n", w.action.c_str(), w.how.empty() ? "" : (": " + w.how).c_str(),
                  rate_text(w.success_rate, w.rate_source, "worked in").c_str());
    std::printf("  dead ends:\n");
    for (const auto& d : r->dead_ends)
      std::printf("    - %s: %s%s\n", d.action.c_str(), d.why_fails.c_str(), rate_text(d.fail_rate, d.rate_source, "failed in").c_str());
    std::printf("  origin: %s\n", r->origin.c_str());
    return k_exit_ok;
  }
  (void)list;
  if (*format == Format::json) {
    nlohmann::json j = {{"schema_version", 1}, {"records", nlohmann::json::array()}};
    for (const auto& r : kb->records()) j["records"].push_back(record_json(r));
    std::printf("%s\n", j.dump(2).c_str());
    return k_exit_ok;
  }
  for (const auto& r : kb->records())
    std::printf("%-34s %-26s %s\n", r.id.c_str(), r.phases.front().c_str(), r.signature.c_str());
  return k_exit_ok;
}

}  // namespace headroom::cli
