#include "run/run_learning.h"

#include <cmath>
#include <cstdio>

#include "headroom/knowledge_base.h"
#include "util/strings.h"

namespace headroom::run {

namespace {

// Failure categories (data/kb/*.json "category") a change of vLLM's flags can fix: memory that does
// not fit, and settings vLLM rejects. Driver and environment problems, NCCL, kernels, the host's
// memory and unknown failures need something else, so they are never relaunched.
constexpr const char* k_retryable_categories[] = {"gpu_memory", "configuration"};

std::string percent(std::int64_t measured, std::int64_t predicted) {
  double p = 100.0 * static_cast<double>(measured - predicted) / static_cast<double>(predicted);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f %%", std::abs(p) < 0.05 ? 0.0 : p);
  return buf;
}

}  // namespace

RunHistory::RunHistory(const std::string& location, RunDependencies& deps) {
  if (location.empty()) {
    m_unusable_reason = "--no-history";
    return;
  }
  auto store = deps.open_history(location);
  if (store) {
    m_store = std::move(*store);
    return;
  }
  m_unusable_reason = "the run history could not be opened";
  deps.out.warning("cannot open the run history at " + location + ": " + store.error().message +
                   "; launching anyway, nothing will be recorded");
}

std::string RunHistory::add(const RunRecord& record) {
  if (!m_store) return "not recorded (" + m_unusable_reason + ")";
  auto added = m_store->add(record);
  if (!added) return "not recorded: " + added.error().message;
  const std::string id = std::to_string(added->id);
  return added->inserted ? "recorded as run #" + id : "already recorded as run #" + id;
}

std::string learn_from_start(const LogFollower& log, const std::string& source, std::optional<std::int64_t> predicted_kv_tokens,
                             RunHistory& history) {
  Diagnosis d;
  d.run = log.run();
  d.lines = log.lines();
  d.bytes = log.bytes();
  std::string recorded;
  if (auto record = record_from_diagnosis(d, source, RunOutcome::ok)) {
    record->content_hash = log.content_hash();
    recorded = history.add(*record);
  } else {
    recorded = "not recorded: " + record.error().message;
  }
  const auto& measured = log.run().kv_tokens;
  if (!measured) return "vLLM is ready, but its log showed no KV cache size (no startup numbers); " + recorded;
  std::string line = "KV cache " + util::with_commas(*measured) + " tokens";
  if (predicted_kv_tokens && *predicted_kv_tokens > 0)
    line += " (predicted " + util::with_commas(*predicted_kv_tokens) + ", " + percent(*measured, *predicted_kv_tokens) + ")";
  return line + "; " + recorded;
}

LearnedFailure learn_from_failure(const LogFollower& log, const std::string& source, int exit_status, int gpus,
                                  const KnowledgeBase& kb, RunHistory& history) {
  LearnedFailure out;
  auto bytes = memory_source(log.kept_log(), source);
  DiagnoseOptions options;
  auto engine = prediction_fix_engine();
  options.fix.engine = engine.get();
  if (gpus > 0) options.fix.gpus = gpus;
  auto d = diagnose(*bytes, kb, options);
  if (!d) {
    out.why_not_diagnosed = d.error().message;
    out.recorded = "not recorded";
    return out;
  }
  out.diagnosis = std::move(*d);
  if (exit_status == 0) {
    out.recorded = "not recorded (it exited with status 0)";
    return out;
  }
  auto record = record_from_diagnosis(*out.diagnosis, source, RunOutcome::failed);
  if (!record) {
    out.recorded = "not recorded: " + record.error().message;
    return out;
  }
  record->content_hash = log.content_hash();
  out.recorded = history.add(*record);
  return out;
}

const FixSuggestion* retry_fix(const Diagnosis& diagnosis, const KnowledgeBase& kb, std::string& why) {
  if (!diagnosis.primary) {
    why = "the output names no failure headroom knows";
    return nullptr;
  }
  const std::string& cls = diagnosis.primary->error_class;
  const KbRecord* record = kb.find(cls);
  const std::string category = record ? record->category : "";
  bool retryable = false;
  for (const char* c : k_retryable_categories) retryable = retryable || category == c;
  if (!retryable) {
    why = cls + " (" + (category.empty() ? "unknown" : category) + ") is not fixed by changing vLLM's flags";
    return nullptr;
  }
  for (const auto& fix : diagnosis.fixes)
    if (!fix.changes.empty()) return &fix;
  why = "no change of flags was computed for " + cls;
  return nullptr;
}


}  // namespace headroom::run
