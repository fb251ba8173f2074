// Accuracy of `headroom diagnose` on labelled failure reports (errors.jsonl): the primary class
// (the taxonomy class it is reported as) must equal the label on at least 95% of the reports whose
// excerpt is a log, in every harvest of the file, and no look-alike may be called out-of-memory.
// Prints every miss, top-1 by harvest, excerpt kind, vLLM era and source project, the phase
// agreement, the failures diagnosed with no fix, the reports read from an error line cut short,
// and the confusion (label -> predicted).
//   bench_diagnose_accuracy [errors.jsonl]
#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "headroom/diagnose.h"
#include "headroom/vllm_log.h"
#include "util/json_file.h"
#include "util/strings.h"

using namespace headroom;

namespace {

// The vLLM era of a report from its free-text version ("~0.7.2 (V0)", "0.15.2rc1.dev93", "main (Jun 2025)").
std::string era_of(const std::string& version_text) {
  auto v = parse_logged_version(version_text);
  if (!v) return "unknown";
  if (v->major == 0 && v->minor < 8) return "V0 (< 0.8)";
  if (v->major == 0 && v->minor < 11) return "0.8-0.10";
  if (v->major == 0 && v->minor < 21) return "0.11-0.20";
  return "0.21+";
}

// The project a report comes from: its id up to the issue number ("gpustack-4963-x" -> "gpustack").
std::string project_of(const std::string& id) {
  static const std::regex number(R"(^(.*?)-(?:pr)?\d+(?:-|$))");
  std::smatch m;
  if (std::regex_search(id, m, number)) return m[1];
  return id;
}

// The harvests of errors.jsonl, in file order (calibration/README.md: the first 36 lines, the 29
// after them, the rest).
std::string harvest_of(std::size_t index) {
  if (index < 36) return "1 (lines 1-36)";
  if (index < 65) return "2 (lines 37-65)";
  return "3 (lines 66-)";
}

// The report's phase and headroom's agree: "runtime" covers both runtime phases, and the labels'
// "other" covers headroom's "config" (checks of the settings) and the runtime phases.
bool same_phase(const std::string& label, const std::string& got) {
  if (label == got) return true;
  auto runtime = [](const std::string& p) { return p.rfind("runtime", 0) == 0 || p == "other"; };
  if (label == "other" && got == "config") return true;
  return runtime(label) && runtime(got);
}

struct Tally {
  int total = 0, correct = 0, look_alike_called_oom = 0, phase_right = 0, no_fix = 0;
  std::map<std::string, std::map<std::string, int>> confusion;
};

}  // namespace

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : std::string(HEADROOM_SHARED_DIR) + "/calibration/errors.jsonl";
  auto text = util::read_file(path);
  if (!text) {
    std::fprintf(stderr, "bench_diagnose_accuracy: %s\n", text.error().to_string().c_str());
    return 1;
  }
  auto records = util::parse_jsonl(*text, path);
  if (!records) {
    std::fprintf(stderr, "bench_diagnose_accuracy: %s\n", records.error().to_string().c_str());
    return 1;
  }
  auto kb = KnowledgeBase::builtin();
  if (!kb) {
    std::fprintf(stderr, "bench_diagnose_accuracy: %s\n", kb.error().to_string().c_str());
    return 1;
  }
  auto diagnoser = LogDiagnoser::create(*kb);
  if (!diagnoser) {
    std::fprintf(stderr, "bench_diagnose_accuracy: %s\n", diagnoser.error().to_string().c_str());
    return 1;
  }
  std::set<std::string> look_alikes;
  for (const auto& r : kb->records())
    if (r.look_alike) look_alikes.insert(r.taxonomy_class.empty() ? r.id : r.taxonomy_class);

  Tally strict, all;
  std::map<std::string, Tally> by_kind, by_era, by_project, by_harvest_log, by_harvest;
  std::map<std::string, int> evidence;  // which evidence decided the phase of correct log reports
  std::vector<std::string> cut;         // reports whose class was read from an error line cut short
  for (std::size_t index = 0; index < records->size(); ++index) {
    const auto& rec = (*records)[index];
    std::string id = rec.value("id", "");
    std::string label = rec.value("label", "");
    std::string kind = rec.value("excerpt_kind", "");
    std::string excerpt = rec.value("log_excerpt", "");
    std::string version = rec.contains("vllm_version") && rec["vllm_version"].is_string() ? rec["vllm_version"].get<std::string>() : "";
    auto source = memory_source(excerpt + "\n", id);
    auto d = (*diagnoser)->diagnose(*source);
    std::string predicted = "(error)";
    std::string phase;
    bool oom = false;
    bool no_fix = false;
    if (d) {
      predicted = !d->primary ? "(none)" : d->primary->unclassified ? "(no class)" : reported_class(*d->primary);
      phase = d->primary ? d->primary->phase : "";
      oom = d->primary && d->primary->out_of_memory;
      no_fix = d->primary && d->fixes.empty();
    }
    bool ok = predicted == label;
    if (d && d->primary && d->primary->title_cut) cut.push_back(id + (ok ? "" : " (wrong)"));
    std::string label_phase = rec.value("phase", "");
    for (Tally* t : {&all, kind == "log" ? &strict : nullptr, &by_kind[kind], &by_era[era_of(version)], &by_project[project_of(id)],
                     kind == "log" ? &by_harvest_log[harvest_of(index)] : nullptr, &by_harvest[harvest_of(index)]}) {
      if (!t) continue;
      t->total++;
      if (ok) t->correct++;
      if (ok && same_phase(label_phase, phase)) t->phase_right++;
      if (no_fix) t->no_fix++;
      if (look_alikes.count(label) && oom) t->look_alike_called_oom++;
      t->confusion[label][predicted]++;
    }
    if (ok && kind == "log" && d && d->primary) evidence[d->primary->phase_evidence]++;
    if (!ok)
      std::printf("miss %-12s %-40s label %-34s got %s%s\n", kind.c_str(), id.c_str(), label.c_str(), predicted.c_str(),
                  d && d->primary ? (" (" + d->primary->phase + ")").c_str() : "");
    else if (!same_phase(label_phase, phase))
      std::printf("phase %-11s %-40s label %-34s phase %s, got %s\n", kind.c_str(), id.c_str(), label.c_str(), label_phase.c_str(),
                  phase.c_str());
  }
  auto report = [](const char* name, const Tally& t) {
    std::printf("\n%s: %d/%d correct (%.1f%%), look-alikes called out-of-memory: %d\n", name, t.correct, t.total,
                t.total ? 100.0 * t.correct / t.total : 0.0, t.look_alike_called_oom);
    std::printf("phase agrees with the report on %d of the %d correct; a failure with no fix: %d\n", t.phase_right, t.correct,
                t.no_fix);
    std::printf("confusion (label -> predicted: count)\n");
    for (const auto& [label, row] : t.confusion) {
      std::printf("  %-34s", label.c_str());
      for (const auto& [pred, n] : row) std::printf(" %s%s:%d", pred == label ? "" : "*", pred.c_str(), n);
      std::printf("\n");
    }
  };
  auto table = [](const char* name, const std::map<std::string, Tally>& groups) {
    std::printf("\ntop-1 by %s\n", name);
    for (const auto& [group, t] : groups)
      std::printf("  %-28s %3d/%-3d %6.1f%%%s\n", group.c_str(), t.correct, t.total, t.total ? 100.0 * t.correct / t.total : 0.0,
                  t.look_alike_called_oom ? "  (look-alike called out-of-memory)" : "");
  };
  table("harvest, excerpt_kind == log", by_harvest_log);
  table("harvest, all reports", by_harvest);
  table("excerpt_kind", by_kind);
  table("vLLM era", by_era);
  table("source project", by_project);
  std::printf("\nphase decided by (correct log reports):");
  for (const auto& [kind, n] : evidence) std::printf(" %s %d", kind.c_str(), n);
  std::printf("\n");
  std::printf("class read from an error line cut short: %zu%s%s\n", cut.size(), cut.empty() ? "" : ": ", util::join(cut, ", ").c_str());
  report("excerpt_kind == log (strict)", strict);
  report("all reports", all);
  bool pass = strict.total > 0 && strict.correct * 100 >= 95 * strict.total && strict.look_alike_called_oom == 0 &&
              all.look_alike_called_oom == 0;
  for (const auto& [harvest, t] : by_harvest_log) pass = pass && t.correct * 100 >= 95 * t.total;
  std::printf("\n%s\n", pass ? "PASS: >= 95% on log excerpts of every harvest, no look-alike called out-of-memory" : "FAIL");
  return pass ? 0 : 1;
}
