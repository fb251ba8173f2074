// What `headroom run` learns from one launch: the start recorded in the run history (with the line
// comparing prediction and measurement), or the failure diagnosed from the output it kept, recorded,
// and the fix that a relaunch would use.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "headroom/diagnose.h"
#include "headroom/history.h"
#include "run/launcher.h"
#include "run/log_follower.h"

namespace headroom::run {

// The history that launches are recorded in, opened once; when it cannot be opened, that is said
// once and nothing is recorded.
class RunHistory {
 public:
  RunHistory(const std::string& location, RunDependencies& deps);
  bool usable() const { return m_store != nullptr; }
  // Stores `record`; returns the line's ending: "recorded as run #12", "already recorded as run #12",
  // "not recorded: WHY".
  std::string add(const RunRecord& record);

 private:
  std::unique_ptr<HistoryStore> m_store;
  std::string m_unusable_reason;
};

// Records a start that reached ready and returns run's line about it: "KV cache 449,408 tokens
// (predicted 450,272, -0.2 %); recorded as run #12".
std::string learn_from_start(const LogFollower& log, const std::string& source, std::optional<std::int64_t> predicted_kv_tokens,
                             RunHistory& history);

// A failure before ready: the kept output diagnosed (with the engine's fixes), the failure
// recorded when the command exited non-zero. nullopt when the output could not be diagnosed
// (`why` says so).
struct LearnedFailure {
  std::optional<Diagnosis> diagnosis;
  std::string why_not_diagnosed;
  std::string recorded;  // "recorded as run #N" / "not recorded: ..."
};
LearnedFailure learn_from_failure(const LogFollower& log, const std::string& source, int exit_status, int gpus,
                                  const KnowledgeBase& kb, RunHistory& history);

// The first computed fix that changes flags or environment, when the failure is one that flags fix
// (the knowledge base's gpu_memory and configuration categories); otherwise nullptr and `why` says
// why not.
const FixSuggestion* retry_fix(const Diagnosis& diagnosis, const KnowledgeBase& kb, std::string& why);

}  // namespace headroom::run
