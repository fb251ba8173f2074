#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "headroom/vllm_engine.h"
#include "headroom/watch.h"

using namespace headroom::watch;

namespace {

std::vector<std::string> ids(const std::vector<Alert>& alerts) {
  std::vector<std::string> out;
  for (const auto& a : alerts) out.push_back(a.id);
  return out;
}

// One file per test: ctest runs the tests of this binary in parallel processes.
std::string temp_file(const std::string& text) {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::string path = std::string(HEADROOM_BINARY_DIR) + "/watch_thresholds_" + test + ".json";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST(Alerts, QuietServerRaisesNothing) {
  VllmSnapshot s;
  s.requests_waiting = 50;
  s.kv_cache_usage = 0.95;
  DerivedFigures d;
  d.ttft_p99_s = 5;
  d.tpot_p99_s = 0.1;
  d.preemptions_per_s = 0;
  EXPECT_TRUE(evaluate_alerts(s, d, AlertThresholds{}, std::nullopt).empty());
}

TEST(Alerts, WaitingAboveThresholdSaysToScaleOut) {
  VllmSnapshot s;
  s.requests_waiting = 64;
  auto alerts = evaluate_alerts(s, DerivedFigures{}, AlertThresholds{}, std::nullopt);
  ASSERT_EQ(ids(alerts), std::vector<std::string>{"requests_waiting"});
  EXPECT_EQ(alerts[0].summary, "64 requests waiting (threshold 50)");
  EXPECT_NE(alerts[0].action.find("scale out"), std::string::npos);
}

TEST(Alerts, KvCacheFullNamesTheFlags) {
  VllmSnapshot s;
  s.kv_cache_usage = 0.9712;
  auto alerts = evaluate_alerts(s, DerivedFigures{}, AlertThresholds{}, std::nullopt);
  ASSERT_EQ(ids(alerts), std::vector<std::string>{"kv_cache_full"});
  EXPECT_EQ(alerts[0].summary, "KV cache 97.1% full (threshold 95%)");
  EXPECT_NE(alerts[0].action.find("--kv-cache-dtype fp8"), std::string::npos);
  EXPECT_NE(alerts[0].action.find("--max-model-len"), std::string::npos);
}

TEST(Alerts, TtftP99AboveThresholdSuggestsChunkedPrefill) {
  DerivedFigures d;
  d.ttft_p99_s = 6.2;
  d.window_s = 60;
  d.quantile_basis = QuantileBasis::window;
  auto alerts = evaluate_alerts(VllmSnapshot{}, d, AlertThresholds{}, std::nullopt);
  ASSERT_EQ(ids(alerts), std::vector<std::string>{"ttft_p99_high"});
  EXPECT_EQ(alerts[0].summary, "time to first token p99 6.20 s over the last 60 s (threshold 5 s)");
  EXPECT_NE(alerts[0].action.find("--enable-chunked-prefill"), std::string::npos);
}

TEST(Alerts, TpotP99AboveThreshold) {
  DerivedFigures d;
  d.tpot_p99_s = 0.14;
  d.quantile_basis = QuantileBasis::since_start;
  auto alerts = evaluate_alerts(VllmSnapshot{}, d, AlertThresholds{}, std::nullopt);
  ASSERT_EQ(ids(alerts), std::vector<std::string>{"tpot_p99_high"});
  EXPECT_EQ(alerts[0].summary, "time per output token p99 140 ms since the server started (threshold 100 ms)");
}

TEST(Alerts, AnyPreemptionRateIsRising) {
  DerivedFigures d;
  d.preemptions_per_s = 0.05;
  d.window_s = 60;
  auto alerts = evaluate_alerts(VllmSnapshot{}, d, AlertThresholds{}, std::nullopt);
  ASSERT_EQ(ids(alerts), std::vector<std::string>{"preemptions_rising"});
  EXPECT_EQ(alerts[0].severity, Severity::critical);
}

TEST(Alerts, ThresholdsAreConfigurable) {
  VllmSnapshot s;
  s.requests_waiting = 64;
  AlertThresholds t;
  t.max_waiting = 100;
  EXPECT_TRUE(evaluate_alerts(s, DerivedFigures{}, t, std::nullopt).empty());
}

TEST(KvCapacity, LiveBlocksFarFromPredictionIsAMismatch) {
  VllmSnapshot s;
  s.cache_config = CacheConfigInfo{25000, 16, 0.9, "auto"};
  KvCapacityCheck c = compare_kv_capacity(KvCapacityExpectation{29067, 16, ""}, s, 0.05);
  ASSERT_TRUE(c.relative_difference);
  EXPECT_NEAR(*c.relative_difference, -0.1399, 1e-4);
  EXPECT_TRUE(c.mismatch);
  auto alerts = evaluate_alerts(s, DerivedFigures{}, AlertThresholds{}, c);
  ASSERT_EQ(ids(alerts), std::vector<std::string>{"kv_capacity_mismatch"});
  EXPECT_EQ(alerts[0].summary, "the server has 25,000 KV cache blocks, headroom predicted 29,067 (-14.0%)");
}

TEST(KvCapacity, CloseToPredictionIsNoMismatch) {
  VllmSnapshot s;
  s.cache_config = CacheConfigInfo{29000, 16, 0.9, "auto"};
  EXPECT_FALSE(compare_kv_capacity(KvCapacityExpectation{29067, 16, ""}, s, 0.05).mismatch);
}

TEST(KvCapacity, ServerWithoutCacheConfigCannotBeCompared) {
  KvCapacityCheck c = compare_kv_capacity(KvCapacityExpectation{29067, 16, ""}, VllmSnapshot{}, 0.05);
  EXPECT_FALSE(c.live_blocks);
  EXPECT_FALSE(c.mismatch);
}

TEST(KvCapacity, ExpectationComesFromThePrediction) {
  headroom::Prediction p;
  p.num_gpu_blocks = 12345;
  p.settings.block_size = 32;
  KvCapacityExpectation e = expectation_from(p, "x");
  EXPECT_EQ(e.num_gpu_blocks, 12345);
  EXPECT_EQ(e.block_size, 32);
}

TEST(Thresholds, ValidationNamesTheFlag) {
  AlertThresholds t;
  t.max_kv_usage = 1.5;
  auto r = validate_thresholds(t);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), "--max-kv-usage: expected a fraction in (0, 1], got 1.5");
}

TEST(Thresholds, FileOverridesDefaults) {
  auto r = read_thresholds_file(temp_file("{\"max_waiting\": 80, \"max_ttft_p99\": 3}"), AlertThresholds{});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->max_waiting, 80);
  EXPECT_EQ(r->max_ttft_p99_s, 3);
  EXPECT_EQ(r->max_kv_usage, 0.95);
}

TEST(Thresholds, FileWithUnknownKeySuggestsTheClosest) {
  std::string path = temp_file("{\"max_wating\": 80}");
  auto r = read_thresholds_file(path, AlertThresholds{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), path + ": unknown threshold \"max_wating\"; did you mean max_waiting?");
}

TEST(Thresholds, FileWithStringValueIsRejected) {
  std::string path = temp_file("{\"max_waiting\": \"80\"}");
  auto r = read_thresholds_file(path, AlertThresholds{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), path + ": expected a number for \"max_waiting\", got string");
}
