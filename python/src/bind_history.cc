// headroom/history.h for Python: record() and the run history, as `headroom record --format json`
// and `headroom history list --format json` render them.
#include <pybind11/stl.h>

#include "binding.h"
#include "headroom/history.h"
#include "headroom/knowledge_base.h"

namespace headroom::python {

namespace {

std::optional<RunOutcome> parse_outcome(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if (text == "ok") return RunOutcome::ok;
  if (text == "failed") return RunOutcome::failed;
  throw LibraryError({ErrorCode::invalid_argument, "expected ok or failed, got '" + text + "'", "outcome"}, Step::request);
}

// Every log is read before the database is opened: a bad log stores nothing (as `record`).
std::string run_record(const std::vector<std::string>& logs, const std::string& outcome_text, const std::string& db) {
  const auto outcome = parse_outcome(outcome_text);
  auto kb = take(KnowledgeBase::builtin(), Step::request);
  std::vector<RunRecord> records;
  for (const auto& log : logs) records.push_back(take(record_from_log(log, kb, outcome), Step::log));
  auto store = take(open_history(default_history_location(db), OpenMode::create), Step::history);
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    auto added = take(store->add(r), Step::history);
    out.push_back({{"log", logs[i]}, {"id", added.id}, {"inserted", added.inserted}, {"outcome", to_string(r.outcome)},
                   {"failure_class", r.failure_class}, {"model", r.model}, {"gpu_name", r.gpu_name},
                   {"vllm_version", r.vllm_version}});
  }
  return dump(nlohmann::json{{"schema_version", 1}, {"database", store->description()}, {"records", out}});
}

// `history list --format json`; a database that does not exist is an empty history (never created).
std::string run_history(const std::string& db) {
  auto store = take(open_history(default_history_location(db), OpenMode::existing_only), Step::history);
  if (!store) return dump(nlohmann::json{{"schema_version", 1}, {"records", nlohmann::json::array()}});
  auto records = take(store->list(), Step::history);
  nlohmann::json all = nlohmann::json::array();
  for (const auto& r : records) all.push_back(to_json(r));
  return dump(nlohmann::json{{"schema_version", 1}, {"database", store->description()}, {"records", all}});
}

}  // namespace

void bind_history(py::module_& m) {
  m.def(
      "record",
      [](const std::vector<py::bytes>& logs, const std::string& outcome, const std::string& db) {
        std::vector<std::string> paths(logs.begin(), logs.end());
        py::gil_scoped_release nogil;
        return run_record(paths, outcome, db);
      },
      py::arg("logs"), py::arg("outcome"), py::arg("db"), "record --format json: the logs' runs added to the history.");
  m.def(
      "history",
      [](const std::string& db) {
        py::gil_scoped_release nogil;
        return run_history(db);
      },
      py::arg("db"), "history list --format json.");
}

}  // namespace headroom::python
