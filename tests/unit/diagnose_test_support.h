// The built-in knowledge base and one-call diagnosis of a log text or test log, for the diagnose,
// phase-evidence and history tests.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "headroom/diagnose.h"
#include "headroom/knowledge_base.h"

namespace headroom::test_support {

inline const KnowledgeBase& kb() {
  static const KnowledgeBase k = *KnowledgeBase::builtin();
  return k;
}

inline Diagnosis run_text(const std::string& text) {
  auto source = memory_source(text, "test.log");
  auto d = diagnose(*source, kb());
  EXPECT_TRUE(d) << d.error().to_string();
  return d ? *d : Diagnosis{};
}

// Like run_text, with one diagnoser for the whole test binary (patterns and the Hyperscan database
// built once), for tests that diagnose many logs.
inline Diagnosis run_shared(const std::string& text) {
  static const std::unique_ptr<LogDiagnoser> diagnoser = [] {
    auto d = LogDiagnoser::create(kb());
    EXPECT_TRUE(d) << d.error().to_string();
    return d ? std::move(*d) : nullptr;
  }();
  if (!diagnoser) return Diagnosis{};
  auto source = memory_source(text, "test.log");
  auto d = diagnoser->diagnose(*source);
  EXPECT_TRUE(d) << d.error().to_string();
  return d ? *d : Diagnosis{};
}

// A log of tests/data/logs/.
inline Diagnosis run_file(const std::string& name) {
  std::ifstream in(std::string(HEADROOM_TEST_DATA_DIR) + "/logs/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return run_text(ss.str());
}

}  // namespace headroom::test_support
