// Allocation arithmetic for the profile run's encoder pass and for CUDA graph capture. Expected
// sizes are worked out here from vLLM's and torch's code and the catalogue's configs, not taken
// from headroom's output.
#include <gtest/gtest.h>

#include "diagnose/allocation_match.h"
#include "diagnose_test_support.h"
#include "headroom/model.h"

namespace headroom {
namespace {

constexpr double k_mib = 1.0 / 1024.0;  // in GiB

Finding oom(double tried_gib) {
  Finding f;
  f.out_of_memory = true;
  f.phase = "unknown";
  f.facts["tried_gib"] = tried_gib;
  return f;
}

ModelSpec catalogue(const char* id) {
  auto m = load_model(id);
  EXPECT_TRUE(m) << id;
  return m ? *m : ModelSpec{};
}

TEST(AllocationSizes, OneDummyImagesAttentionWeightsInTheVisionEncoder) {
  // Qwen3-VL-8B: the processor's largest image is 16,777,216 pixels (size.longest_edge), a
  // 4,096 × 4,096 square (qwen2_vl.py get_image_size_with_most_features), 65,536 patches of 16 × 16.
  // Torch SDPA's math path (torch >= 2.5 computes half inputs in float32) holds 16 heads ×
  // 65,536² × 4 B = 256 GiB of attention weights for that one item. (From v0.13: before it vLLM
  // profiled Qwen3-VL with a video, whose attention spans one frame pair.)
  ModelSpec model = catalogue("Qwen/Qwen3-VL-8B-Instruct");
  LoggedRun run;
  run.version = VllmVersion{0, 13};
  auto m = match_allocation(256.0, oom(256.0), run, &model);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->phase, "profile-run");
  EXPECT_EQ(m->basis.rfind("256.00 GiB = 16 heads × 65,536² patches × 4 B: one dummy item's attention weights", 0), 0u) << m->basis;
  EXPECT_DOUBLE_EQ(m->confidence, 0.7);
}

TEST(AllocationSizes, AfterStartupTheEncoderBatchIsNotTheCause) {
  ModelSpec model = catalogue("Qwen/Qwen3-VL-8B-Instruct");
  LoggedRun run;
  run.engine_started = true;
  auto m = match_allocation(256.0, oom(256.0), run, &model);
  EXPECT_FALSE(m && m->phase == "profile-run");
}

TEST(AllocationSizes, GraphCaptureActivationOfACaptureSize) {
  // Llama-3.1-8B: the fused QKV projection is (32 + 2 × 8) heads × 128 = 6,144 wide; capturing
  // batch size 512 (the largest size for max_num_seqs 256: min(2 × 256, 512), config/vllm.py
  // _set_cudagraph_sizes) allocates 512 × 6,144 × 2 B = 6.00 MiB.
  ModelSpec model = catalogue("meta-llama/Llama-3.1-8B-Instruct");
  LoggedRun run;
  run.flags.max_num_seqs = 256;
  run.version = VllmVersion{0, 11};
  auto m = match_allocation(6.00 * k_mib, oom(6.00 * k_mib), run, &model);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->phase, "cuda-graph-capture");
  EXPECT_EQ(m->basis, "6.00 MiB = 512 tokens (a CUDA graph capture size) × 6,144 QKV width × 2 B: capturing the graph for batch size 512");
  EXPECT_DOUBLE_EQ(m->confidence, 0.55);
}

TEST(AllocationSizes, TheProfileRunsBatchIsNotAGraphSize) {
  // With max_num_batched_tokens 512 the profile run's dummy batch has 512 tokens too: the same
  // tensor, so the size says nothing about capture.
  ModelSpec model = catalogue("meta-llama/Llama-3.1-8B-Instruct");
  LoggedRun run;
  run.flags.max_num_seqs = 256;
  run.flags.max_num_batched_tokens = 512;
  run.version = VllmVersion{0, 11};
  EXPECT_FALSE(match_allocation(6.00 * k_mib, oom(6.00 * k_mib), run, &model));
}

TEST(AllocationSizes, EagerModeCapturesNoGraphs) {
  ModelSpec model = catalogue("meta-llama/Llama-3.1-8B-Instruct");
  LoggedRun run;
  run.flags.max_num_seqs = 256;
  run.flags.enforce_eager = true;
  run.version = VllmVersion{0, 11};
  EXPECT_FALSE(match_allocation(6.00 * k_mib, oom(6.00 * k_mib), run, &model));
}

TEST(AllocationSizes, DiagnosePlacesABareOomAtGraphCaptureWithItsEvidence) {
  std::string log =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 MiB. GPU 0 has a total capacity of 79.19 GiB of "
      "which 3.31 MiB is free.\n";
  auto source = memory_source(log, "bare.log");
  DiagnoseOptions options;
  options.context.model = "meta-llama/Llama-3.1-8B-Instruct";
  options.context.flags.max_num_seqs = 256;
  auto d = diagnose(*source, test_support::kb(), options);
  ASSERT_TRUE(d && d->primary);
  EXPECT_EQ(reported_class(*d->primary), "cuda_graph_capture_oom");
  EXPECT_EQ(d->primary->phase_evidence, "allocation");
  ASSERT_TRUE(d->primary->phase_confidence);
  EXPECT_DOUBLE_EQ(*d->primary->phase_confidence, 0.55);
}

}  // namespace
}  // namespace headroom
