// Using the history: measured terms of the same setup, calibration from other models, failed
// configurations and their citations.
#include <gtest/gtest.h>

#include "headroom/history.h"

namespace headroom {
namespace {

RunRecord llama_run(std::int64_t id) {
  RunRecord r;
  r.id = id;
  r.run_date = "2026-06-01";
  r.model = "meta-llama/Llama-3.1-8B-Instruct";
  r.gpu_key = "h100-sxm-80gb";
  r.total_gib = 79.19;
  r.vllm_version = "0.19.0";
  r.era = history_era(VllmVersion{0, 19});
  r.settings = {{"max_num_seqs", 1024}, {"max_num_batched_tokens", 8192}, {"dtype", "bfloat16"}, {"quantization", ""},
                {"enforce_eager", false}, {"gpu_memory_utilization", 0.95}, {"max_model_len", 8192}};
  r.measured.weights_gib = 14.99;
  r.measured.activation_peak_gib = 1.89;
  r.measured.non_torch_gib = 0.25;
  r.measured.cuda_graph_gib = 0.91;
  return r;
}

SetupKey llama_key() {
  SetupKey k;
  k.model = "meta-llama/Llama-3.1-8B-Instruct";
  k.gpu_key = "h100-sxm-80gb";
  k.total_gib = 79.19;
  k.version = VllmVersion{0, 19};
  k.settings.max_num_seqs = 1024;
  k.settings.max_num_batched_tokens = 8192;
  k.settings.dtype = "bfloat16";
  k.settings.gpu_memory_utilization = 0.95;
  k.settings.max_model_len = 8192;
  return k;
}

TEST(HistoryEra, BoundariesFollowTheProfilerChanges) {
  EXPECT_EQ(history_era(VllmVersion{0, 7, 3}), "v0");
  EXPECT_EQ(history_era(VllmVersion{0, 9, 0}), "v1-0.8");
  EXPECT_EQ(history_era(VllmVersion{0, 9, 1}), "v1-0.9.1");
  EXPECT_EQ(history_era(VllmVersion{0, 16, 0}), "v1-0.11");
  EXPECT_EQ(history_era(VllmVersion{0, 17, 0}), "v1-0.17");
  EXPECT_EQ(history_era(VllmVersion{0, 21, 0}), "v1-0.21");
}

TEST(HistoryMeasuredTerms, SameSetupGivesEveryTermWithItsSource) {
  auto t = measured_terms_for({llama_run(12)}, llama_key());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->terms.activation_peak, from_gib(1.89));
  EXPECT_EQ(t->terms.weights, from_gib(14.99));
  EXPECT_EQ(t->terms.non_torch, from_gib(0.25));
  EXPECT_EQ(t->terms.cuda_graph, from_gib(0.91));
  EXPECT_EQ(t->terms.source, "measured on 2026-06-01 (history #12)");
}

TEST(HistoryMeasuredTerms, ActivationIsNotTakenFromADifferentBatch) {
  auto r = llama_run(3);
  r.settings["max_num_batched_tokens"] = 2048;
  auto t = measured_terms_for({r}, llama_key());
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->terms.activation_peak);
  EXPECT_FALSE(t->terms.cuda_graph);
  EXPECT_EQ(t->terms.non_torch, from_gib(0.25));
}

TEST(HistoryMeasuredTerms, OtherEraIsNotUsed) {
  auto r = llama_run(3);
  r.era = history_era(VllmVersion{0, 15});
  EXPECT_FALSE(measured_terms_for({r}, llama_key()));
}

TEST(HistoryMeasuredTerms, OtherTensorParallelSizeIsNotUsed) {
  auto r = llama_run(3);
  r.tp = 2;
  EXPECT_FALSE(measured_terms_for({r}, llama_key()));
}

TEST(HistoryMeasuredTerms, OtherGpuIsNotUsed) {
  auto r = llama_run(3);
  r.gpu_key = "a100-sxm4-80gb";
  r.total_gib = 79.15;
  EXPECT_FALSE(measured_terms_for({r}, llama_key()));
}

TEST(HistoryMeasuredTerms, CustomGpuMatchesByTotalMemory) {
  auto key = llama_key();
  key.gpu_key = "custom";
  key.total_gib = 79.2;
  EXPECT_TRUE(measured_terms_for({llama_run(3)}, key));
  key.total_gib = 80.0;
  EXPECT_FALSE(measured_terms_for({llama_run(3)}, key));
}

TEST(HistoryMeasuredTerms, ConfigHashWinsOverTheName) {
  auto r = llama_run(3);
  r.model_config_hash = "aaa";
  auto key = llama_key();
  key.model_config_hash = "bbb";
  EXPECT_FALSE(measured_terms_for({r}, key));
  key.model = "/models/llama";
  key.model_config_hash = "aaa";
  EXPECT_TRUE(measured_terms_for({r}, key));
}

TEST(HistoryMeasuredTerms, SameVersionWinsOverANewerRecordOfTheEra) {
  auto same = llama_run(1);
  auto other = llama_run(2);
  other.vllm_version = "0.18.0";
  other.measured.activation_peak_gib = 2.5;
  auto t = measured_terms_for({same, other}, llama_key());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->terms.activation_peak, from_gib(1.89));
}

TEST(HistoryCalibration, MedianRatioOfOtherModels) {
  std::vector<RunRecord> runs;
  double ratios[] = {1.1, 1.2, 1.5};
  for (int i = 0; i < 3; ++i) {
    auto r = llama_run(i + 1);
    r.model = "other/model-" + std::to_string(i);
    r.measured.activation_peak_gib = 2.0 * ratios[i];
    r.estimated_activation_gib = 2.0;
    r.measured.non_torch_gib = 0.25;
    r.estimated_non_torch_gib = 0.25;
    runs.push_back(r);
  }
  auto c = calibration_for(runs, llama_key());
  EXPECT_NEAR(c.activation_factor, 1.2, 1e-9);
  EXPECT_NEAR(c.non_torch_factor, 1.0, 1e-9);
  EXPECT_EQ(c.activation_runs, 3);
}

TEST(HistoryCalibration, FewerThanThreeRunsLeaveTheFactorAtOne) {
  auto r = llama_run(1);
  r.model = "other/model";
  r.estimated_activation_gib = 1.0;
  auto c = calibration_for({r, r}, llama_key());
  EXPECT_EQ(c.activation_factor, 1.0);
}

TEST(HistoryCalibration, TheSameModelDoesNotCalibrateItself) {
  auto r = llama_run(1);
  r.estimated_activation_gib = 1.0;
  auto c = calibration_for({r, r, r}, llama_key());
  EXPECT_EQ(c.activation_runs, 0);
}

RunRecord failed_run(const std::string& failure_class, double utilization) {
  auto r = llama_run(7);
  r.outcome = RunOutcome::failed;
  r.failure_class = failure_class;
  r.settings["gpu_memory_utilization"] = utilization;
  r.settings["max_model_len"] = 32000;
  return r;
}

TEST(HistoryFailures, KvCacheFailureRulesOutLowerUtilizationAndLongerLengths) {
  auto f = failed_configurations({failed_run("kv_cache_insufficient", 0.90)}, llama_key());
  ASSERT_EQ(f.size(), 1u);
  ResolvedSettings s = llama_key().settings;
  s.max_model_len = 32000;
  s.gpu_memory_utilization = 0.90;
  EXPECT_TRUE(f[0].rules_out(1, 1, s));
  s.gpu_memory_utilization = 0.85;
  EXPECT_TRUE(f[0].rules_out(1, 1, s));
  s.max_model_len = 65536;
  EXPECT_TRUE(f[0].rules_out(1, 1, s));
  s.gpu_memory_utilization = 0.95;
  EXPECT_FALSE(f[0].rules_out(1, 1, s));
  s.gpu_memory_utilization = 0.90;
  s.max_model_len = 16000;
  EXPECT_FALSE(f[0].rules_out(1, 1, s));
  s.max_model_len = 32000;
  EXPECT_FALSE(f[0].rules_out(2, 1, s));
}

TEST(HistoryFailures, FreeMemoryFailureRulesOutHigherUtilization) {
  auto f = failed_configurations({failed_run("startup_free_memory_insufficient", 0.90)}, llama_key());
  ASSERT_EQ(f.size(), 1u);
  ResolvedSettings s = llama_key().settings;
  s.gpu_memory_utilization = 0.92;
  EXPECT_TRUE(f[0].rules_out(1, 1, s));
  s.gpu_memory_utilization = 0.85;
  EXPECT_FALSE(f[0].rules_out(1, 1, s));
}

TEST(HistoryFailures, CitationNamesTheSettingsTheClassAndTheRecord) {
  auto f = failed_configurations({failed_run("kv_cache_insufficient", 0.90)}, llama_key());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].citation(),
            "startup failed with gpu_memory_utilization=0.90, max_model_len=32000, max_num_seqs=1024, "
            "max_num_batched_tokens=8192 on this GPU (kv_cache_insufficient; history #7, 2026-06-01, vLLM 0.19.0)");
}

TEST(HistoryFailures, SuccessfulRunsAreNotFailures) {
  EXPECT_TRUE(failed_configurations({llama_run(1)}, llama_key()).empty());
}

}  // namespace
}  // namespace headroom
