// Building history records from vLLM logs and from JSON Lines rows, and the export round trip.
#include <gtest/gtest.h>

#include "headroom/history.h"
#include "headroom/knowledge_base.h"
#include "history/history_settings.h"
#include "unit/diagnose_test_support.h"
#include "unit/model_test_support.h"

namespace headroom {
namespace {

const std::string k_logs = std::string(HEADROOM_TEST_DATA_DIR) + "/logs/";

using test_support::kb;

TEST(HistoryRecordFromLog, StartedRunKeepsItsMeasuredTerms) {
  auto r = record_from_log(k_logs + "v1_startup_ok.log", kb());
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->outcome, RunOutcome::ok);
  EXPECT_EQ(r->model, "codellama/CodeLlama-7b-hf");
  EXPECT_EQ(r->era, "v1-0.17");
  EXPECT_DOUBLE_EQ(*r->measured.weights_gib, 12.56);
  EXPECT_DOUBLE_EQ(*r->measured.activation_peak_gib, 0.77);
  EXPECT_DOUBLE_EQ(*r->measured.kv_cache_gib, 61.66);
  EXPECT_EQ(*r->measured.kv_tokens, 126256);
  EXPECT_EQ(r->content_hash.size(), 64u);
}

// The sampler's path the log names (topk_topp_sampler.py) is kept with the record's settings, so
// the estimate recorded beside the measurement takes the same path; a log that does not name it
// leaves it unset.
TEST(HistoryRecordFromLog, KeepsTheSamplersPathTheLogNames) {
  std::ifstream in(k_logs + "v1_startup_ok.log");
  const std::string base((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  test_support::TempDir dir;
  const auto recorded = [&](const std::string& line) {
    std::string log = base;
    log.insert(log.find("(EngineCore pid=283) INFO 04-22 15:13:03"), line.empty() ? "" : line + "\n");
    test_support::write_bytes(dir.path() / "run.log", log);
    auto r = record_from_log((dir.path() / "run.log").string(), kb());
    EXPECT_TRUE(r) << r.error().to_string();
    return r ? r->settings.value("flashinfer_sampler", nlohmann::json()) : nlohmann::json();
  };
  EXPECT_EQ(recorded("(EngineCore pid=283) WARNING 04-22 15:12:30 [topk_topp_sampler.py:59] FlashInfer is not available. "
                     "Falling back to the PyTorch-native implementation of top-p & top-k sampling."),
            nlohmann::json(false));
  EXPECT_EQ(recorded("(EngineCore pid=283) INFO 04-22 15:12:30 [topk_topp_sampler.py:50] Using FlashInfer for top-p & top-k "
                     "sampling."),
            nlohmann::json(true));
  EXPECT_TRUE(recorded("").is_null());
}

// A recorded run keeps its --performance-mode (the non-default args line), and the estimate made
// again from the record's settings runs with it.
TEST(HistoryRecordFromLog, KeepsThePerformanceMode) {
  std::ifstream in(k_logs + "v1_startup_ok.log");
  std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  log.insert(log.find("(EngineCore pid=283) INFO 04-22 15:13:03"),
             "(APIServer pid=1) INFO 04-22 15:12:30 [utils.py:302] non-default args: {'performance_mode': 'throughput'}\n");
  test_support::TempDir dir;
  test_support::write_bytes(dir.path() / "run.log", log);
  auto r = record_from_log((dir.path() / "run.log").string(), kb());
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->settings.value("performance_mode", std::string()), "throughput");
  EXPECT_EQ(history_detail::flags_from_settings(r->settings, 1, 1, ModelSpec{}).performance_mode.value_or(""), "throughput");
}

TEST(HistoryRecordFromLog, FailedRunCarriesDiagnoseClass) {
  auto r = record_from_log(k_logs + "v1_kv_insufficient.log", kb());
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->outcome, RunOutcome::failed);
  EXPECT_EQ(r->failure_class, "kv_cache_insufficient");
  EXPECT_FALSE(r->failure_message.empty());
}

TEST(HistoryRecordFromLog, SameLogGivesTheSameHash) {
  auto a = record_from_log(k_logs + "v1_startup_ok.log", kb());
  auto b = record_from_log(k_logs + "v1_startup_ok.log", kb());
  auto c = record_from_log(k_logs + "v1_kv_insufficient.log", kb());
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->content_hash, b->content_hash);
  EXPECT_NE(a->content_hash, c->content_hash);
}

TEST(HistoryRecordFromLog, OutcomeOverrideWins) {
  auto r = record_from_log(k_logs + "v1_startup_ok.log", kb(), RunOutcome::failed);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->outcome, RunOutcome::failed);
  EXPECT_EQ(r->failure_class, "engine_failure_unexplained");
}

TEST(HistoryRecordFromLog, LogWithoutModelIsAnError) {
  auto r = record_from_log(k_logs + "illegal_access.log", kb());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            k_logs + "illegal_access.log: expected a vLLM startup log naming its model, found none in 4 lines");
}

nlohmann::json row() {
  return nlohmann::json::parse(R"J({"id": "r1", "model": "Qwen/Qwen2.5-7B-Instruct", "vllm_version": "v0.19.0",
    "gpu_name": "NVIDIA H100 80GB (H100-80GB per source sweep config)", "total_gpu_memory_gib": 79.19, "tp": 1, "pp": 1,
    "dp": 1, "dtype": "bfloat16", "quantization": null, "max_model_len": 8192, "gpu_memory_utilization": 0.95,
    "observed_weights_gib": 14.25, "observed_activation_peak_gib": 2.21, "observed_non_torch_gib": 0.24,
    "observed_kv_cache_gib": 58.53, "observed_outcome": "ok", "source_date": "2026-04-22", "notes": "a note"})J");
}

TEST(HistoryJsonlRow, RowBecomesARecord) {
  auto r = record_from_jsonl_row(row(), "f.jsonl:1");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->model, "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(r->run_date, "2026-04-22");
  EXPECT_EQ(r->settings["max_model_len"], 8192);
  EXPECT_DOUBLE_EQ(*r->measured.activation_peak_gib, 2.21);
  EXPECT_EQ(r->extra["notes"], "a note");
  EXPECT_EQ(r->outcome, RunOutcome::ok);
}

TEST(HistoryJsonlRow, WrongTypeNamesTheField) {
  auto j = row();
  j["tp"] = "2";
  auto r = record_from_jsonl_row(j, "f.jsonl:3");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), "f.jsonl:3: expected number \"tp\", got string");
}

TEST(HistoryJsonlRow, MissingModelIsAnError) {
  auto j = row();
  j.erase("model");
  auto r = record_from_jsonl_row(j, "f.jsonl:2");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), "f.jsonl:2: expected string \"model\", found none");
}

TEST(HistoryJsonlRow, OomOutcomeIsAFailure) {
  auto j = row();
  j["observed_outcome"] = "oom";
  auto r = record_from_jsonl_row(j, "f.jsonl:1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->outcome, RunOutcome::failed);
  EXPECT_EQ(r->failure_class, "out_of_memory");
}

TEST(HistoryJsonlRow, ExportedRowImportsAsTheSameRecord) {
  auto r = record_from_jsonl_row(row(), "f.jsonl:1");
  ASSERT_TRUE(r);
  enrich_record(*r);
  r->id = 5;
  auto exported = record_to_jsonl_row(*r);
  auto again = record_from_jsonl_row(exported, "export.jsonl:1");
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(again->content_hash, r->content_hash);
  EXPECT_EQ(again->source_id, "r1");
  EXPECT_DOUBLE_EQ(*again->measured.kv_cache_gib, 58.53);
  EXPECT_EQ(again->extra["notes"], "a note");
}

TEST(HistoryJsonlRow, EnrichResolvesTheSetup) {
  auto r = record_from_jsonl_row(row(), "f.jsonl:1");
  ASSERT_TRUE(r);
  enrich_record(*r);
  EXPECT_EQ(r->era, "v1-0.17");
  EXPECT_EQ(r->gpu_key, "h100-sxm-80gb");
  EXPECT_EQ(r->model_config_hash.size(), 64u);
  EXPECT_TRUE(r->settings.contains("max_num_seqs"));
  ASSERT_TRUE(r->estimated_activation_gib);
  EXPECT_GT(*r->estimated_activation_gib, 0.5);
}

}  // namespace
}  // namespace headroom
