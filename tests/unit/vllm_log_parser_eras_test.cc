// The startup lines of vLLM v0.26 to v0.31 (templates quoted in ../shared/spec/vllm-v026-v033.md
// §2.2, §2.3, §2.5, §2.6 and §2.9), one fixture per new line format.
#include <gtest/gtest.h>

#include <fstream>

#include "headroom/vllm_log.h"

namespace headroom {
namespace {

LoggedRun parse_file(const std::string& name) {
  std::ifstream in(std::string(HEADROOM_TEST_DATA_DIR) + "/logs/" + name);
  EXPECT_TRUE(in.good()) << name;
  VllmLogParser parser;
  std::string line;
  while (std::getline(in, line)) parser.feed(line);
  return parser.run();
}

// #49208 (v0.26): "total consumed (from mem_get_info)" takes the place of the non-torch figure;
// non-torch is what the free-memory drop holds beyond the weights. The --kv-cache-memory
// suggestion reports consumed memory (weights + non-torch).
TEST(VllmLogParserEras, NonKvBreakdownOfV026) {
  LoggedRun run = parse_file("v026_non_kv_breakdown.log");
  ASSERT_TRUE(run.version);
  EXPECT_EQ(run.version->minor, 26);
  EXPECT_DOUBLE_EQ(*run.non_kv_total_gib, 17.32);
  EXPECT_DOUBLE_EQ(*run.weights_gib, 14.99);
  EXPECT_DOUBLE_EQ(*run.non_torch_gib, 0.75);  // 15.74 − 14.99
  EXPECT_DOUBLE_EQ(*run.activation_peak_gib, 2.01);
  EXPECT_DOUBLE_EQ(*run.cuda_graph_gib, 0.43);
  EXPECT_EQ(*run.kv_cache_memory_fit_bytes, 58261209088);
  EXPECT_DOUBLE_EQ(*run.kv_cache_gib, 54.41);
}

// The single capacity line (tokens and concurrency together) and the align-mode notice (#50991).
TEST(VllmLogParserEras, CombinedCapacityLineAndAlignMode) {
  LoggedRun run = parse_file("v028_combined_capacity.log");
  EXPECT_EQ(*run.kv_tokens, 296960);
  EXPECT_EQ(*run.concurrency_len, 32768);
  EXPECT_DOUBLE_EQ(*run.max_concurrency, 9.06);
  ASSERT_TRUE(run.flags.enable_prefix_caching);
  EXPECT_TRUE(*run.flags.enable_prefix_caching);
}

// v0.29 model runner v2 graph estimate and the profiling notice with the utilization.
TEST(VllmLogParserEras, ModelRunnerV2GraphLines) {
  LoggedRun run = parse_file("v029_mrv2_graphs.log");
  EXPECT_DOUBLE_EQ(*run.cuda_graph_estimated_gib, 0.62);
  EXPECT_DOUBLE_EQ(*run.cuda_graph_gib, 0.66);
  ASSERT_TRUE(run.flags.gpu_memory_utilization);
  EXPECT_DOUBLE_EQ(*run.flags.gpu_memory_utilization, 0.9);
}

// v0.31: --device-memory-utilization (#56547), --max-num-active-seqs (#56758); v0.28's old name
// --cache-dtype.
TEST(VllmLogParserEras, RenamedFlagsOfV031) {
  LoggedRun run = parse_file("v031_renamed_flags.log");
  EXPECT_DOUBLE_EQ(*run.flags.gpu_memory_utilization, 0.85);
  EXPECT_EQ(*run.flags.max_num_active_seqs, 64);
  EXPECT_EQ(*run.flags.kv_cache_dtype, "fp8");
  EXPECT_EQ(*run.flags.max_model_len, 16384);
}

}  // namespace
}  // namespace headroom
