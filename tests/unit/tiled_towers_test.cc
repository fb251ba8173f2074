// Towers with tiled inputs: InternVL's profile pass as internvl.py builds it, and a tower headroom
// does not size (Llama 3.2 Vision), whose pass vLLM still runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

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

bool notes(const Prediction& p, const std::string& part) {
  for (const auto& n : p.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

bool names(const Prediction& p, const std::string& part) {
  if (!p.uncertainty) return false;
  for (const auto& r : p.uncertainty->reasons)
    if (r.find(part) != std::string::npos) return true;
  return false;
}

// Llama 3.2 Vision's tiles (mllama.py) are not sized: its config has a fixed 560-pixel tile, but
// the range must still allow for the pass vLLM runs.
TEST(UnsizedTower, RangeAllowsThePassVllmRuns) {
  const ModelSpec m = test_support::model("meta-llama/Llama-3.2-11B-Vision-Instruct");
  ASSERT_TRUE(m.vision);
  EXPECT_GT(m.vision->image_size, 0);
  const Prediction p = test_support::run(m, test_support::gpus("H100"), VllmFlags{});
  ASSERT_TRUE(p.uncertainty);
  EXPECT_TRUE(names(p, "the largest input of MllamaForConditionalGeneration's processor unsized"));
  // 3 GiB on the low side (the allowance for a pass that is not sized).
  EXPECT_GE(p.memory.kv_cache - p.uncertainty->kv_cache_low, from_gib(3.0));
  // Text-only (every modality at 0): vLLM runs no pass, so nothing is allowed for it.
  VllmFlags text_only;
  text_only.limit_mm_per_prompt["image"] = 0;
  EXPECT_FALSE(names(test_support::run(m, test_support::gpus("H100"), text_only), "processor unsized"));
}

// InternVL (internvl.py): get_image_size_with_most_features picks max_dynamic_patch tiles (12 in
// the config) plus the thumbnail: 13 tiles of 448 pixels, each 32 x 32 patches and a class token in
// InternViT and num_image_token = 32² × 0.5² = 256 embeddings, so 3,328 per image. The encoder
// budget is max(max_num_batched_tokens, 3328): 2 images at the H100's 8192, 1 at the L4's 2048.
TEST(InternVl, ProfilesThirteenTilesPerImage) {
  auto m = parse_model_config_text(k_internvl, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->vision);
  EXPECT_EQ(m->vision->max_tiles, 12);
  EXPECT_TRUE(m->vision->thumbnail_tile);
  const Prediction h100 = test_support::run(*m, test_support::gpus("H100"), VllmFlags{});
  EXPECT_TRUE(notes(h100, "2 dummy image(s) of 3,328 embeddings"));
  EXPECT_TRUE(notes(h100, "budget of 8192 tokens, and profiled with 2 image items"));
  const Prediction l4 = test_support::run(*m, test_support::gpus("L4"), VllmFlags{});
  EXPECT_TRUE(notes(l4, "budget of 3328 tokens, and profiled with 1 image items"));
  // --mm-processor-kwargs max_dynamic_patch 6: 7 tiles, 1,792 embeddings, 4 images in 8192.
  VllmFlags six;
  six.mm_processor_kwargs = R"({"max_dynamic_patch": 6})";
  EXPECT_TRUE(notes(test_support::run(*m, test_support::gpus("H100"), six), "4 dummy image(s) of 1,792 embeddings"));
  EXPECT_FALSE(h100.uncertainty && names(h100, "processor unsized"));
}

// internvl.py's projector mlp1 (LayerNorm over 4 x 1024 pixel-shuffled features, 4096 -> 3584 ->
// 3584) and intern_vit.py's embeddings (class token, 1,025 learned positions).
TEST(InternVl, WeightsHaveTheProjectorAndTheClassToken) {
  auto m = parse_model_config_text(k_internvl, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  const WeightsInventory inv = synthesize_weights(*m);
  auto shape_of = [&](const std::string& name) {
    for (const auto& t : inv.tensors)
      if (t.name == name) return t.shape;
    return std::vector<std::int64_t>{};
  };
  EXPECT_EQ(shape_of("mlp1.0.weight"), (std::vector<std::int64_t>{4096}));
  EXPECT_EQ(shape_of("mlp1.1.weight"), (std::vector<std::int64_t>{3584, 4096}));
  EXPECT_EQ(shape_of("mlp1.3.weight"), (std::vector<std::int64_t>{3584, 3584}));
  EXPECT_EQ(shape_of("vision_model.embeddings.position_embedding"), (std::vector<std::int64_t>{1, 1025, 1024}));
  EXPECT_EQ(shape_of("vision_model.encoder.layers.23.attn.qkv.weight"), (std::vector<std::int64_t>{3072, 1024}));
  EXPECT_EQ(shape_of("vision_model.encoder.layers.23.ls2"), (std::vector<std::int64_t>{1024}));
  EXPECT_TRUE(shape_of("vision_model.encoder.layers.24.attn.qkv.weight").empty());
}

}  // namespace
}  // namespace headroom
