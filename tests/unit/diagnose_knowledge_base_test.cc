#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "headroom/knowledge_base.h"

using namespace headroom;

namespace {

const char* k_minimal = R"J({"id": "my_error", "signature": "mine", "regex": "my error (\\d+)"})J";

std::string temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("headroom_kb_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace

TEST(KnowledgeBase, BuiltinCoversTheTaxonomy) {
  auto kb = KnowledgeBase::builtin();
  ASSERT_TRUE(kb) << kb.error().to_string();
  for (const char* id : {"kv_cache_insufficient", "no_kv_cache_memory", "startup_free_memory_insufficient",
                         "memory_profiling_error", "weights_load_oom", "profile_run_oom", "cuda_graph_capture_oom",
                         "sampler_warmup_oom", "runtime_oom", "oom_phase_unknown", "host_memory_exhausted",
                         "kv_cache_exhausted_runtime", "prompt_too_long", "max_model_len_exceeds_model_limit",
                         "nccl_error", "cuda_driver_mismatch", "illegal_memory_access", "model_not_found",
                         "unsupported_dtype_on_gpu", "tp_size_not_divisible", "quantization_mismatch",
                         "quantization_config_missing", "pp_layer_partition_invalid"})
    EXPECT_NE(kb->find(id), nullptr) << id;
}

TEST(KnowledgeBase, LookAlikesAreNotOutOfMemory) {
  auto kb = KnowledgeBase::builtin();
  ASSERT_TRUE(kb);
  for (const auto& r : kb->records()) {
    if (r.look_alike) {
      EXPECT_FALSE(r.out_of_memory) << r.id;
    }
  }
  EXPECT_TRUE(kb->find("nccl_error")->look_alike);
}

TEST(KnowledgeBase, RecordWithoutExtensionIsADirectSignature) {
  auto rec = KnowledgeBase::parse_record(k_minimal, "mine.json");
  ASSERT_TRUE(rec) << rec.error().to_string();
  ASSERT_EQ(rec->patterns.size(), 1u);
  EXPECT_EQ(rec->patterns[0].match, MatchRule::direct);
  EXPECT_EQ(rec->phases, std::vector<std::string>{"unknown"});
}

TEST(KnowledgeBase, MissingFieldNamesFileAndField) {
  auto rec = KnowledgeBase::parse_record(R"J({"id": "x", "signature": "s"})J", "x.json");
  ASSERT_FALSE(rec);
  EXPECT_EQ(rec.error().to_string(), "x.json: field 'regex': missing (expected a string)");
}

TEST(KnowledgeBase, BadRegexIsReportedWithRe2Reason) {
  auto rec = KnowledgeBase::parse_record(R"J({"id": "x", "signature": "s", "regex": "a(b"})J", "x.json");
  ASSERT_FALSE(rec);
  EXPECT_EQ(rec.error().to_string(),
            "x.json: field 'regex': expected a regular expression RE2 accepts, got \"a(b\" (missing ): a(b)");
}

TEST(KnowledgeBase, BadRateNamesTheNestedField) {
  auto rec = KnowledgeBase::parse_record(
      R"J({"id": "x", "signature": "s", "regex": "a", "dead_ends": [{"action": "a", "why_fails": "b", "fail_rate": 3}]})J",
      "x.json");
  ASSERT_FALSE(rec);
  EXPECT_EQ(rec.error().to_string(), "x.json: field 'dead_ends[0].fail_rate': expected a number from 0 to 1 or null, got integer");
}

TEST(KnowledgeBase, UnknownPhaseSuggestsTheClosest) {
  auto rec = KnowledgeBase::parse_record(R"J({"id": "x", "signature": "s", "regex": "a", "headroom": {"phase": "weight-load"}})J",
                                         "x.json");
  ASSERT_FALSE(rec);
  EXPECT_NE(rec.error().message.find("did you mean weights-load?"), std::string::npos) << rec.error().message;
}

TEST(KnowledgeBase, ValidateDirReportsEachBrokenFile) {
  std::string dir = temp_dir("validate");
  std::ofstream(dir + "/good.json") << k_minimal;
  std::ofstream(dir + "/bad.json") << R"J({"id": "b", "signature": "s", "regex": 5})J";
  auto errors = KnowledgeBase::validate_dir(dir);
  ASSERT_TRUE(errors);
  ASSERT_EQ(errors->size(), 1u);
  EXPECT_EQ((*errors)[0].to_string(), dir + "/bad.json: field 'regex': expected a string, got integer");
  std::filesystem::remove_all(dir);
}

TEST(KnowledgeBase, ExtraDirectoryAddsAndReplacesRecords) {
  std::string dir = temp_dir("extra");
  std::ofstream(dir + "/mine.json") << k_minimal;
  auto kb = KnowledgeBase::load({dir});
  ASSERT_TRUE(kb) << kb.error().to_string();
  ASSERT_NE(kb->find("my_error"), nullptr);
  EXPECT_EQ(kb->find("my_error")->origin, dir + "/mine.json");
  std::filesystem::remove_all(dir);
}

TEST(KnowledgeBase, MissingDirectoryIsNotFound) {
  auto errors = KnowledgeBase::validate_dir("/nonexistent/kb");
  ASSERT_FALSE(errors);
  EXPECT_EQ(errors.error().code, ErrorCode::not_found);
}
