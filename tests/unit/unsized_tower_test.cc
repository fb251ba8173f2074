// A tower whose processor headroom does not size (InternVL here: fixed 448-pixel tiles, but as many
// as max_dynamic_patch per image) still runs its profile pass in vLLM: the range must allow for
// it even though the vision config has an image_size.
#include <gtest/gtest.h>

#include <string>

#include "headroom/model.h"
#include "unit/engine_test_support.h"

namespace headroom {
namespace {

// InternVL3-8B's config.json shape: llm_config for the language model, an InternViT tower.
constexpr const char* k_internvl = R"({"architectures": ["InternVLChatModel"], "model_type": "internvl_chat",
  "downsample_ratio": 0.5, "force_image_size": 448, "max_dynamic_patch": 12, "use_thumbnail": true, "torch_dtype": "bfloat16",
  "llm_config": {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
    "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 28, "vocab_size": 151674,
    "max_position_embeddings": 32768, "rope_theta": 1000000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16"},
  "vision_config": {"architectures": ["InternVisionModel"], "model_type": "intern_vit_6b", "hidden_size": 1024, "image_size": 448,
    "intermediate_size": 4096, "num_attention_heads": 16, "num_hidden_layers": 24, "patch_size": 14, "qkv_bias": true}})";

bool names(const Prediction& p, const std::string& part) {
  if (!p.uncertainty) return false;
  for (const auto& r : p.uncertainty->reasons)
    if (r.find(part) != std::string::npos) return true;
  return false;
}

TEST(UnsizedTower, RangeAllowsThePassVllmRuns) {
  auto m = parse_model_config_text(k_internvl, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->vision);
  EXPECT_GT(m->vision->image_size, 0);
  const Prediction p = test_support::run(*m, test_support::gpus("H100"), VllmFlags{});
  ASSERT_TRUE(p.uncertainty);
  EXPECT_TRUE(names(p, "the largest input of InternVLChatModel's processor unsized"));
  // 3 GiB on the low side (the allowance for a pass that is not modelled).
  EXPECT_GE(p.memory.kv_cache - p.uncertainty->kv_cache_low, from_gib(3.0));
  // Text-only (every modality at 0): vLLM runs no pass, so nothing is allowed for it.
  VllmFlags text_only;
  text_only.limit_mm_per_prompt["image"] = 0;
  text_only.limit_mm_per_prompt["video"] = 0;
  EXPECT_FALSE(names(test_support::run(*m, test_support::gpus("H100"), text_only), "processor unsized"));
}

}  // namespace
}  // namespace headroom
