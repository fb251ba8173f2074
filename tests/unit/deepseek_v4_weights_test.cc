// DeepSeek-V4's routed experts: the checkpoint ships them as MXFP4 (config expert_dtype "fp4")
// and vLLM keeps them 4-bit. vllm/models/deepseek_v4/fp4_dequant.py (main 2026): "DeepSeek-V4
// Instruct checkpoints ship MXFP4 (e2m1 + e8m0 microscale) routed experts"; one expert weight is
// uint8 [out, in // 2] with a uint8 e8m0 scale [out, in // 32]. Only VLLM_DSV4_FP4_DEQUANT=1
// re-encodes them to block-fp8 ("FP8 is 2x MXFP4").
#include <gtest/gtest.h>

#include "headroom/model.h"

namespace headroom {
namespace {

TEST(DeepSeekV4Weights, RoutedExpertsAreMxfp4NotFp8) {
  auto m = catalog_model("deepseek-ai/DeepSeek-V4-Flash");
  ASSERT_TRUE(m) << m.error().to_string();
  ASSERT_TRUE(m->moe);
  EXPECT_TRUE(m->moe->routed_experts_fp4);
  const WeightsInventory inv = synthesize_weights(*m);
  // DeepSeek-V4-Flash: 43 MoE layers × 256 experts × (w1, w3: 2048 × 4096; w2: 4096 × 2048).
  const Bytes per_matrix = 2048LL * 4096 / 2 + 2048LL * 4096 / 32;
  const Bytes expected = 43LL * 256 * 3 * per_matrix;
  Bytes routed = 0;
  for (const auto& t : inv.tensors) {
    if (t.name.find(".experts.w") == std::string::npos) continue;
    EXPECT_EQ(t.dtype, "U8") << t.name;
    routed += t.bytes;
  }
  EXPECT_EQ(routed, expected);
  // The shared expert keeps the checkpoint's fp8 blocks.
  bool shared_fp8 = false;
  for (const auto& t : inv.tensors)
    if (t.name.find("shared_experts.") != std::string::npos && t.dtype == "F8_E4M3") shared_fp8 = true;
  EXPECT_TRUE(shared_fp8);
}

TEST(DeepSeekV4Weights, OtherMoeCheckpointsKeepTheirScheme) {
  auto m = catalog_model("deepseek-ai/DeepSeek-V3.2");
  ASSERT_TRUE(m) << m.error().to_string();
  ASSERT_TRUE(m->moe);
  EXPECT_FALSE(m->moe->routed_experts_fp4);
  const WeightsInventory inv = synthesize_weights(*m);
  bool fp8_experts = false;
  for (const auto& t : inv.tensors)
    if (t.name.find(".experts.") != std::string::npos && t.dtype == "F8_E4M3") fp8_experts = true;
  EXPECT_TRUE(fp8_experts);
}

}  // namespace
}  // namespace headroom
