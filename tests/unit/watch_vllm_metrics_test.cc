#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "headroom/watch.h"
#include "support/fake_vllm_server/fake_vllm_server.h"

using namespace headroom::watch;
using headroom::prometheus::MalformedLines;
using headroom::prometheus::parse_text;

namespace {

VllmSnapshot read_fixture(const std::string& name, MalformedLines mode = MalformedLines::reject) {
  std::string text = headroom::testing::read_metrics_fixture(HEADROOM_TEST_DATA_DIR, name);
  auto page = parse_text(text, name, mode);
  EXPECT_TRUE(page) << page.error().to_string();
  return page ? read_vllm_metrics(*page, 0) : VllmSnapshot{};
}

Histogram hist(std::vector<double> bounds, std::vector<double> counts) {
  Histogram h;
  h.upper_bounds = std::move(bounds);
  h.cumulative_counts = std::move(counts);
  h.count = h.cumulative_counts.back();
  return h;
}

}  // namespace

TEST(VllmMetrics, OldV0PageReadsPreemptionsWithoutTotalSuffix) {
  VllmSnapshot s = read_fixture("vllm-0.4.3.txt");
  ASSERT_TRUE(s.preemptions_total);
  EXPECT_EQ(*s.preemptions_total, 2.0);
}

TEST(VllmMetrics, OldV0PageReadsCacheConfigInfo) {
  VllmSnapshot s = read_fixture("vllm-0.4.3.txt");
  ASSERT_TRUE(s.cache_config);
  EXPECT_EQ(s.cache_config->num_gpu_blocks, 27153);
  EXPECT_EQ(s.cache_config->block_size, 16);
  EXPECT_EQ(s.cache_config->gpu_memory_utilization, 0.9);
}

TEST(VllmMetrics, V0PageReadsGaugesAndSwappedRequests) {
  VllmSnapshot s = read_fixture("vllm-0.6.3.txt");
  EXPECT_EQ(s.requests_running, 12.0);
  EXPECT_EQ(s.requests_waiting, 3.0);
  EXPECT_EQ(s.requests_swapped, 0.0);
  EXPECT_EQ(s.kv_cache_usage, 0.4375);
  EXPECT_EQ(s.kv_cache_usage_metric, "vllm:gpu_cache_usage_perc");
  EXPECT_THAT(s.model_names, ::testing::ElementsAre("meta-llama/Llama-3.1-8B-Instruct"));
}

TEST(VllmMetrics, V0PageSumsFinishedRequestsOverReasons) {
  VllmSnapshot s = read_fixture("vllm-0.6.3.txt");
  EXPECT_EQ(s.requests_finished_total, 1500.0);
}

TEST(VllmMetrics, V0PageReadsServerThroughputAverages) {
  VllmSnapshot s = read_fixture("vllm-0.6.3.txt");
  EXPECT_EQ(s.avg_prompt_throughput_tokens_per_s, 2210.4);
  EXPECT_EQ(s.avg_generation_throughput_tokens_per_s, 498.7);
}

TEST(VllmMetrics, V0PageReadsTtftHistogramWithInfBucket) {
  VllmSnapshot s = read_fixture("vllm-0.6.3.txt");
  ASSERT_TRUE(s.ttft);
  EXPECT_EQ(s.ttft->upper_bounds.size(), 17u);
  EXPECT_TRUE(std::isinf(s.ttft->upper_bounds.back()));
  EXPECT_EQ(s.ttft->cumulative_counts.back(), 1500.0);
  EXPECT_EQ(s.ttft->count, 1500.0);
  EXPECT_EQ(s.tpot_metric, "vllm:time_per_output_token_seconds");
}

TEST(VllmMetrics, EarlyV1PageReadsGpuPrefixCacheCounters) {
  VllmSnapshot s = read_fixture("vllm-0.8.5.txt");
  EXPECT_EQ(s.prefix_cache_queries_total, 90000.0);
  EXPECT_EQ(s.prefix_cache_hits_total, 22500.0);
  EXPECT_FALSE(s.requests_swapped);
  EXPECT_EQ(s.kv_cache_usage, 0.9712);
}

TEST(VllmMetrics, NewV1PageReadsKvCacheUsageUnderItsNewName) {
  VllmSnapshot s = read_fixture("vllm-0.11.0.txt");
  EXPECT_EQ(s.kv_cache_usage_metric, "vllm:kv_cache_usage_perc");
  EXPECT_EQ(s.kv_cache_usage, 0.62);  // the fuller of the two engines
}

TEST(VllmMetrics, NewV1PageSumsRequestsOverEngines) {
  VllmSnapshot s = read_fixture("vllm-0.11.0.txt");
  EXPECT_EQ(s.engines, 2);
  EXPECT_EQ(s.requests_running, 78.0);
  EXPECT_EQ(s.requests_waiting, 2.0);
}

TEST(VllmMetrics, NewV1PagePrefersInterTokenLatency) {
  VllmSnapshot s = read_fixture("vllm-0.11.0.txt");
  EXPECT_EQ(s.tpot_metric, "vllm:inter_token_latency_seconds");
}

TEST(VllmMetrics, NewV1PageUnescapesModelName) {
  VllmSnapshot s = read_fixture("vllm-0.11.0.txt");
  EXPECT_THAT(s.model_names, ::testing::ElementsAre("team \"a\"\\llama-70b\nfp8"));
}

TEST(VllmMetrics, CacheConfigTakesTheSmallestEngine) {
  VllmSnapshot s = read_fixture("vllm-0.11.0.txt");
  ASSERT_TRUE(s.cache_config);
  EXPECT_EQ(s.cache_config->num_gpu_blocks, 19180);
  EXPECT_EQ(s.cache_config->cache_dtype, "fp8");
}

TEST(VllmMetrics, MalformedPageKeepsTheGoodLines) {
  VllmSnapshot s = read_fixture("vllm-malformed.txt", MalformedLines::skip);
  EXPECT_EQ(s.requests_waiting, 64.0);
  EXPECT_EQ(s.kv_cache_usage, 0.9712);
  EXPECT_FALSE(s.requests_swapped);
}

TEST(VllmMetrics, PageWithoutVllmMetricsSaysSo) {
  auto page = parse_text("process_cpu_seconds_total 4.5\n");
  ASSERT_TRUE(page);
  EXPECT_FALSE(read_vllm_metrics(*page, 0).has_vllm_metrics());
}

TEST(HistogramQuantile, InterpolatesInsideTheBucket) {
  auto q = histogram_quantile(0.99, hist({1, 2, INFINITY}, {10, 20, 20}));
  ASSERT_TRUE(q);
  EXPECT_DOUBLE_EQ(*q, 1.98);
}

TEST(HistogramQuantile, FirstBucketStartsAtZero) {
  auto q = histogram_quantile(0.25, hist({4, 8, INFINITY}, {10, 20, 20}));
  ASSERT_TRUE(q);
  EXPECT_DOUBLE_EQ(*q, 2.0);
}

TEST(HistogramQuantile, RankInInfBucketGivesLastFiniteBound) {
  auto q = histogram_quantile(0.99, hist({1, 2, INFINITY}, {10, 10, 20}));
  ASSERT_TRUE(q);
  EXPECT_DOUBLE_EQ(*q, 2.0);
}

TEST(HistogramQuantile, EmptyHistogramHasNoQuantile) {
  EXPECT_FALSE(histogram_quantile(0.5, hist({1, 2, INFINITY}, {0, 0, 0})));
}
