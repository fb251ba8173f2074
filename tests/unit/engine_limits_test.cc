// Sizes a user or client names are range-checked once, at the edge (engine_limits.h), and the
// searches that try sizes downwards stay bounded whatever size they start from.
#include <gtest/gtest.h>

#include <string>

#include "headroom/check_changes.h"
#include "headroom/engine_limits.h"
#include "headroom/plan.h"
#include "headroom/vllm_version.h"
#include "unit/engine_test_support.h"

namespace headroom {
namespace {

using test_support::gpus;
using test_support::model;
using test_support::run;

std::string error_of(const Result<void>& r) { return r ? "" : r.error().to_string(); }

TEST(EngineLimits, HugeTensorParallelSizeIsRefusedWithTheBound) {
  VllmFlags f;
  f.tensor_parallel_size = 65536;
  EXPECT_EQ(error_of(validate_engine_sizes(f)), "--tensor-parallel-size: must be between 1 and 1,024, got 65,536");
}

TEST(EngineLimits, HugePipelineParallelSizeIsRefused) {
  VllmFlags f;
  f.pipeline_parallel_size = 8192;
  EXPECT_EQ(error_of(validate_engine_sizes(f)), "--pipeline-parallel-size: must be between 1 and 1,024, got 8,192");
}

TEST(EngineLimits, WorldSizeAboveTheGpuLimitIsRefused) {
  VllmFlags f;
  f.tensor_parallel_size = 64;
  f.pipeline_parallel_size = 64;
  f.data_parallel_size = 2;
  EXPECT_EQ(error_of(validate_engine_sizes(f)),
            "--tensor-parallel-size: tensor x pipeline x data parallel size is 8,192 GPUs; headroom models at most 4,096");
}

TEST(EngineLimits, LengthsAndBatchSizesHaveUpperBounds) {
  VllmFlags len;
  len.max_model_len = (1LL << 30) + 1;
  EXPECT_EQ(error_of(validate_engine_sizes(len)),
            "--max-model-len: must be between 1 and 1,073,741,824, got 1,073,741,825");
  VllmFlags seqs;
  seqs.max_num_seqs = 2'000'000'000;
  EXPECT_EQ(error_of(validate_engine_sizes(seqs)), "--max-num-seqs: must be between 1 and 1,048,576, got 2,000,000,000");
  VllmFlags block;
  block.block_size = 1 << 20;
  EXPECT_EQ(error_of(validate_engine_sizes(block)), "--block-size: must be between 1 and 65,536, got 1,048,576");
}

TEST(EngineLimits, KvCacheMemoryAboveAPebibyteIsRefused) {
  VllmFlags f;
  f.kv_cache_memory_bytes = 9'000'000'000'000'000'000LL;
  EXPECT_EQ(error_of(validate_engine_sizes(f)),
            "--kv-cache-memory-bytes: the size (bytes) must be between 1 and 1,125,899,906,842,624, got 9,000,000,000,000,000,000");
}

TEST(EngineLimits, SizesWithinTheLimitsPass) {
  VllmFlags f;
  f.tensor_parallel_size = 8;
  f.pipeline_parallel_size = 4;
  f.max_model_len = 131072;
  f.max_num_seqs = 256;
  EXPECT_TRUE(validate_engine_sizes(f));
}

TEST(EngineLimits, PlanConcurrencyAndGpusAreBounded) {
  EXPECT_EQ(error_of(validate_plan_sizes(std::nullopt, 1'000'000'000, std::nullopt)),
            "--concurrency: the number of requests must be between 1 and 1,048,576, got 1,000,000,000");
  EXPECT_EQ(error_of(validate_plan_sizes(std::nullopt, 4, 100000)),
            "--max-gpus: the GPU count must be between 1 and 4,096, got 100,000");
  GpuSetup setup;
  setup.count = 8;
  setup.nodes = 1000;
  EXPECT_EQ(error_of(validate_gpu_setup_size(setup)),
            "--gpus: 1,000 nodes x 8 GPUs is 8,000 GPUs; headroom models at most 4,096");
}

TEST(EngineLimits, MostNegativeValueIsShownWithoutOverflow) {
  EXPECT_EQ(error_of(check_range(std::numeric_limits<std::int64_t>::min(), 1, 10, "--x")),
            "--x: must be between 1 and 10, got -9,223,372,036,854,775,808");
}

// 4294967296 wrapped to 0 and 99999999999999999999 to garbage; both are refused now.
TEST(VllmVersionLimits, OverflowingComponentsAreRefused) {
  auto wrapped = VllmVersion::parse("4294967296.0");
  ASSERT_FALSE(wrapped);
  EXPECT_EQ(wrapped.error().to_string(),
            "--vllm-version: version component 4294967296 in '4294967296.0' is out of range (each part is at most 99999); "
            "expected a vLLM version like 0.19.0");
  auto huge = VllmVersion::parse("99999999999999999999.1");
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("version component 99999999999999999999 "), std::string::npos);
  EXPECT_FALSE(VllmVersion::parse("0.1.post4294967296"));
  EXPECT_TRUE(VllmVersion::parse("0.19.0"));
}

// check's suggestions try smaller TP / PP sizes from the one given; each try is a prediction. Only
// sizes vLLM could accept are tried, at most 16 of them, so a huge size costs no more than a small one.
TEST(EngineLimits, ChangeSearchesTryABoundedNumberOfSizes) {
  auto m = model("Qwen/Qwen2.5-7B-Instruct");
  for (auto [tp, pp] : {std::pair{1000, 1}, std::pair{1, 1000}}) {
    auto g = gpus("H100", tp * pp);
    VllmFlags f;
    f.tensor_parallel_size = tp;
    f.pipeline_parallel_size = pp;
    Prediction failed = run(m, g, f);
    ASSERT_FALSE(failed.starts);
    int calls = 0;
    PredictFn counting = [&](const VllmFlags& fl, const GpuSetup& gs) {
      ++calls;
      return predict(m, gs, fl, test_support::k_v019);
    };
    auto changes = suggest_changes(m, g, f, failed, counting);
    EXPECT_LT(calls, 200) << "tp=" << tp << " pp=" << pp;
    EXPECT_FALSE(changes.empty());
  }
}

}  // namespace
}  // namespace headroom
