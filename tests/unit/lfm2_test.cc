// LFM2 and LFM2-MoE (Liquid AI): short-convolution layers among attention layers. Every expected
// number is worked out from vLLM's lfm2.py / lfm2_moe.py module shapes and mamba_utils.py's
// short-convolution state, named in each test.
#include <gtest/gtest.h>

#include <string>

#include "engine/kv_layers.h"
#include "headroom/model.h"
#include "unit/engine_test_support.h"

namespace headroom {
namespace {

// LiquidAI/LFM2-1.2B's config.json (the fields vLLM reads).
constexpr const char* k_lfm2 = R"({"architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2", "hidden_size": 2048,
  "intermediate_size": 12288, "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 16, "vocab_size": 65536,
  "max_position_embeddings": 128000, "conv_L_cache": 3, "conv_bias": false, "block_multiple_of": 256,
  "block_ffn_dim_multiplier": 1.0, "block_auto_adjust_ff_dim": true, "tie_embedding": true, "torch_dtype": "bfloat16",
  "layer_types": ["conv", "conv", "full_attention", "conv", "conv", "full_attention", "conv", "conv", "full_attention", "conv",
    "full_attention", "conv", "full_attention", "conv", "full_attention", "conv"]})";

std::int64_t parameters(const WeightsInventory& inv) {
  std::int64_t n = 0;
  for (const auto& t : inv.tensors) {
    std::int64_t e = 1;
    for (auto d : t.shape) e *= d;
    n += e;
  }
  return n;
}

// lfm2.py: Lfm2MLP with block_auto_adjust_ff_dim: int(2 × 12,288 / 3) = 8,192, × 1.0, a multiple
// of 256: 8,192; w13 and w2 are 3 × 2,048 × 8,192 = 50,331,648 per layer (16 layers). ShortConv
// (10 layers): in_proj 2,048 → 3 × 2,048, the [2,048, 3] kernel and out_proj: 16,783,360.
// Attention (6 layers): q and out 2,048², k and v 2,048 × 512 (8 KV heads of 64), q/k layernorms
// of 64: 10,485,888. Two RMSNorms per layer, embedding_norm, and the embedding shared with the
// LM head (tie_embedding): 1,170,340,608 parameters, the release's 1.17 B.
TEST(Lfm2, WeightsFollowLfm2MlpAndShortConv) {
  auto m = parse_model_config_text(k_lfm2, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->intermediate_size, 8192);
  ASSERT_TRUE(m->hybrid);
  EXPECT_TRUE(m->hybrid->short_conv);
  EXPECT_EQ(m->layer_kind(0), LayerKind::mamba);
  EXPECT_EQ(m->layer_kind(2), LayerKind::full_attention);
  EXPECT_TRUE(m->tie_word_embeddings);
  const std::int64_t expected = 16LL * 50331648 + 10LL * 16783360 + 6LL * (10485760 + 2 * 64) + 16LL * 2 * 2048 + 2048 +
                                65536LL * 2048;
  EXPECT_NEAR(static_cast<double>(parameters(synthesize_weights(*m))), static_cast<double>(expected), 6LL * 128);
}

// mamba_utils.py short_conv_state_shape: (conv_L_cache − 1, conv_dim / tp) in the model dtype
// (short_conv_state_dtype): 2 × 2,048 × 2 bytes = 8,192 per conv layer, 4,096 at TP 2. It is
// smaller than an attention page (16 tokens × 8 heads × 64 × 2 (K, V) × 2 bytes = 32,768), so
// the block size stays 16.
TEST(Lfm2, ShortConvStateIsTheKernelsHistory) {
  auto m = parse_model_config_text(k_lfm2, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(engine::mamba_state_bytes(*m, LayerKind::mamba, 1, 2.0), 8192);
  EXPECT_EQ(engine::mamba_state_bytes(*m, LayerKind::mamba, 2, 2.0), 4096);
  const Prediction p = test_support::run(*m, test_support::gpus("RTX 4090"), VllmFlags{});
  EXPECT_TRUE(p.starts);
  EXPECT_GT(p.kv_cache_tokens, 0);
  // Before, "unknown layer type \"conv\"" refused the model.
}

// A config that lists only full_attn_idxs (transformers' Lfm2Config derives layer_types from it)
// reads the same: the listed layers attend, the others are short convolutions.
TEST(Lfm2, FullAttnIdxsAloneGiveTheSameLayers) {
  std::string cfg = k_lfm2;
  const auto start = cfg.find("\"layer_types\"");
  cfg = cfg.substr(0, start) + "\"full_attn_idxs\": [2, 5, 8, 10, 12, 14]}";
  auto from_idxs = parse_model_config_text(cfg, "config.json");
  auto from_types = parse_model_config_text(k_lfm2, "config.json");
  ASSERT_TRUE(from_idxs) << from_idxs.error().message;
  ASSERT_TRUE(from_types) << from_types.error().message;
  for (int i = 0; i < 16; ++i) EXPECT_EQ(from_idxs->layer_kind(i), from_types->layer_kind(i)) << i;
  std::string bad = cfg;
  bad.replace(bad.find("14]"), 3, "99]");
  EXPECT_FALSE(parse_model_config_text(bad, "config.json"));
}

// LiquidAI/LFM2-8B-A1B (lfm2_moe.py): the first num_dense_layers (2) keep Lfm2MoeMLP at
// intermediate_size as written (3 × 2,048 × 7,168), the other 22 route over 32 experts of 1,792
// (3 × 2,048 × 1,792 each) with a 2,048 × 32 gate: 8.3 B parameters in all.
TEST(Lfm2, MoeKeepsItsFirstLayersDense) {
  std::string cfg = R"({"architectures": ["Lfm2MoeForCausalLM"], "model_type": "lfm2_moe", "hidden_size": 2048,
    "intermediate_size": 7168, "moe_intermediate_size": 1792, "num_attention_heads": 32, "num_key_value_heads": 8,
    "num_hidden_layers": 24, "num_experts": 32, "num_experts_per_tok": 4, "num_dense_layers": 2, "vocab_size": 65536,
    "max_position_embeddings": 128000, "conv_L_cache": 3, "torch_dtype": "bfloat16", "layer_types": [)";
  for (int i = 0; i < 24; ++i) cfg += std::string(i ? ", " : "") + (i % 4 == 2 ? "\"full_attention\"" : "\"conv\"");
  cfg += "]}";
  auto m = parse_model_config_text(cfg, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->moe);
  EXPECT_EQ(m->moe->first_k_dense_replace, 2);
  EXPECT_EQ(m->intermediate_size, 7168);
  const double billions = static_cast<double>(parameters(synthesize_weights(*m))) / 1e9;
  EXPECT_NEAR(billions, 2 * 3 * 2048 * 7168e-9 + 22 * (32 * 3 * 2048 * 1792e-9 + 2048 * 32e-9) + 18 * 16783360e-9 +
                            6 * 10485760e-9 + 65536 * 2048e-9,
              0.001);
}

}  // namespace
}  // namespace headroom
