// Page sizes and per-request needs of the 2026 KV layouts. Every expected number is worked out
// by hand from vLLM's formulas, named with the file they come from.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/kv_layers.h"
#include "headroom/kv_cache_spec.h"
#include "headroom/model.h"

namespace headroom {
namespace {

ModelSpec model(const std::string& id) {
  auto m = catalog_model(id);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().to_string());
  return m ? *m : ModelSpec{};
}

// vllm/v1/kv_cache_interface.py (main 2026-08, 001cabc) MLAAttentionSpec.real_page_size_bytes:
// "if self.cache_dtype_str == 'fp8_ds_mla': return self.block_size * 656".
TEST(KvSpecs2026, Fp8DsMlaPageIs656BytesPerToken) {
  LayerKvSpec s;
  s.type = KvSpecType::mla;
  s.block_size = 64;
  s.head_size = 576;
  s.element_bytes = 1;
  s.state_content_bytes = 656;
  EXPECT_EQ(s.page_bytes(), 64 * 656);
}

// vllm/model_executor/models/deepseek_v2.py Indexer: k_cache head_dim = 128 + 128 // 128 * 4 = 132
// bytes (uint8), one vector per token (MLAAttentionSpec).
TEST(KvSpecs2026, IndexerCacheHolds132BytesPerToken) {
  ModelSpec m = model("deepseek-ai/DeepSeek-V3.2");
  LayerKvSpec idx = engine::indexer_spec(m, 64);
  EXPECT_EQ(idx.head_size, 132);
  EXPECT_EQ(idx.page_bytes(), 64 * 132);
}

// vllm/models/deepseek_v4/attention.py (main 2026-08): block 256, 584 bytes per stored token,
// page rounded up to a multiple of 576: ratio 4 → 64 × 584 = 37376 → 37440; ratio 128 →
// 2 × 584 = 1168 → 1728.
TEST(KvSpecs2026, DeepSeekV4CompressedPagesAreAlignedTo576) {
  LayerKvSpec s;
  s.type = KvSpecType::mla;
  s.latent = true;
  s.block_size = 256;
  s.head_size = 512;
  s.state_content_bytes = 584;
  s.alignment = 576;
  s.compress_ratio = 4;
  EXPECT_EQ(s.page_bytes(), 37440);
  s.compress_ratio = 128;
  EXPECT_EQ(s.page_bytes(), 1728);
}

// vllm/model_executor/models/gemma4.py: "Per-token-head quantization adds 4 bytes of scale per
// head. Local: (256*1)*2 + 8 = 520 bytes; Global: (512*1)*2 + 8 = 1032 bytes" per token and head
// (AttentionSpec.page_size_bytes adds 2 × block × heads × 4).
TEST(KvSpecs2026, PerTokenHeadScalesAdd8BytesPerTokenAndHead) {
  LayerKvSpec s;
  s.block_size = 16;
  s.num_kv_heads = 1;
  s.head_size = 256;
  s.element_bytes = 1;
  s.quant = KvQuant::per_token_head;
  EXPECT_EQ(s.page_bytes(), 16 * 520);
  s.head_size = 512;
  EXPECT_EQ(s.page_bytes(), 16 * 1032);
}

// kv_cache_interface.py FullAttentionSpec.real_page_size_bytes with NVFP4: per head
// nvfp4_kv_cache_full_dim(d) = d/2 + d/16 bytes for K and for V: 128 → 72 + 72.
TEST(KvSpecs2026, Nvfp4PacksDataAndBlockScales) {
  LayerKvSpec s;
  s.block_size = 16;
  s.num_kv_heads = 8;
  s.head_size = 128;
  s.element_bytes = 0.5625;
  s.quant = KvQuant::nvfp4;
  EXPECT_EQ(s.page_bytes(), 16 * 8 * 144);
}

// kv_cache_interface.py MambaSpec.max_memory_usage_bytes: "align" mode holds
// page × (2 + num_speculative_blocks), mode "none" page × (1 + ...).
TEST(KvSpecs2026, AlignModeHoldsTwoStatePagesPerRequest) {
  LayerKvSpec s;
  s.type = KvSpecType::mamba;
  s.mamba_state_bytes = 1 << 20;
  EXPECT_EQ(s.max_memory_usage_bytes(8192, 0), 1 << 20);
  s.mamba_pages_per_request = 2;
  EXPECT_EQ(s.max_memory_usage_bytes(8192, 0), 2 << 20);
}

// kv_cache_utils.py (#48317, v0.26): concurrency divides by Σ_groups cdiv(need_g, page) instead
// of cdiv(Σ need, page). Once pages are unified every group's need is whole pages, so both forms
// give the same count for these layouts.
TEST(KvSpecs2026, PerGroupRoundingCountsEachGroupsPartialPage) {
  LayerKvSpec full;
  full.block_size = 16;
  full.num_kv_heads = 1;
  full.head_size = 64;
  LayerKvSpec swa = full;
  swa.type = KvSpecType::sliding_window;
  swa.sliding_window = 1024;
  KvCacheConfig c = group_kv_cache_specs({full, swa});
  ASSERT_EQ(c.groups.size(), 2u);
  // full: ceil(24 / 16) = 2 pages; sliding: min(1023 + 0, 24) → ceil(24/16) + 1 = 3 pages.
  EXPECT_EQ(blocks_per_request(c, 24, 0), 5);
  c.per_group_rounding = true;
  EXPECT_EQ(blocks_per_request(c, 24, 0), 5);
  // A need that is not whole pages per group: 8 tokens → full 1 page, sliding 1 + 1 pages.
  EXPECT_EQ(blocks_per_request(c, 8, 0), 3);
}

// Qwen3.5 Gated DeltaNet state (mamba_utils.py gated_delta_net_state_shape, memory model §3.1):
// conv ((2·16·128 + 48·128)/tp, K−1 = 3) in bf16 and ssm (48/tp, 128, 128) in float32, the dtype the
// config's mamba_ssm_dtype selects (models/config.py Qwen3_5ForConditionalGenerationConfig).
TEST(KvSpecs2026, Qwen35GatedDeltaNetStateUsesFloat32Ssm) {
  ModelSpec m = model("Qwen/Qwen3.5-27B");
  ASSERT_TRUE(m.hybrid);
  EXPECT_EQ(m.hybrid->mamba_ssm_cache_dtype, "float32");
  const Bytes conv = (2 * 16 * 128 + 48 * 128) * 3 * 2;
  const Bytes ssm = 48LL * 128 * 128 * 4;
  EXPECT_EQ(engine::mamba_state_bytes(m, LayerKind::linear_attention, 1, 2.0), conv + ssm);
  EXPECT_EQ(engine::mamba_state_bytes(m, LayerKind::linear_attention, 2, 2.0), (conv + ssm) / 2);
}

// Kimi Delta Attention (mamba_utils.py kda_state_shape / kda_state_dtype): conv states for q, k
// and v ((H·d)/tp, K−1) each in the model dtype, recurrent (H/tp, d, d) in float32.
TEST(KvSpecs2026, KimiDeltaAttentionState) {
  ModelSpec m;
  m.num_layers = 4;
  m.hybrid = HybridConfig{};
  m.hybrid->kda_num_heads = 32;
  m.hybrid->kda_head_dim = 128;
  m.hybrid->kda_conv_kernel = 4;
  const Bytes conv = 3LL * 32 * 128 * 3 * 2;
  const Bytes recurrent = 32LL * 128 * 128 * 4;
  EXPECT_EQ(engine::mamba_state_bytes(m, LayerKind::kda_attention, 1, 2.0), conv + recurrent);
}

// gemma4.py: full-attention layers use global_head_dim (512) and num_global_key_value_heads (4,
// with attention_k_eq_v) and still cache K and V; sliding layers 16 heads × 256.
TEST(KvSpecs2026, Gemma4GlobalLayersUseTheirOwnHeads) {
  ModelSpec m = model("nvidia/Gemma-4-31B-IT-NVFP4");
  ASSERT_TRUE(m.full_attention_shape);
  EXPECT_EQ(m.full_attention_shape->num_kv_heads, 4);
  EXPECT_EQ(m.full_attention_shape->head_dim, 512);
  engine::KvLayerInputs in;
  in.end_layer = m.num_layers;
  auto layers = engine::build_kv_layers(m, in);
  ASSERT_EQ(layers.specs.size(), 60u);
  EXPECT_EQ(layers.specs[0].type, KvSpecType::sliding_window);
  EXPECT_EQ(layers.specs[0].page_bytes(), 16 * 16 * (256 + 256) * 2);
  EXPECT_EQ(layers.specs[5].type, KvSpecType::full_attention);
  EXPECT_EQ(layers.specs[5].page_bytes(), 16 * 4 * (512 + 512) * 2);
}

// gemma4.py KV sharing: the last num_kv_shared_layers layers read an earlier layer's cache.
TEST(KvSpecs2026, KvSharedLayersHaveNoCacheOfTheirOwn) {
  ModelSpec m = model("nvidia/Gemma-4-31B-IT-NVFP4");
  m.num_kv_shared_layers = 20;
  engine::KvLayerInputs in;
  in.end_layer = m.num_layers;
  EXPECT_EQ(engine::build_kv_layers(m, in).specs.size(), 40u);
}

// DeepSeek-V3.2: one MLA spec and one indexer spec per layer, both MLA specs with block 64 — one
// UniformType group whose block holds every layer's page (kv_cache_utils.py).
TEST(KvSpecs2026, DeepSeekV32HasLatentAndIndexerPerLayer) {
  ModelSpec m = model("deepseek-ai/DeepSeek-V3.2");
  ASSERT_TRUE(m.mla);
  EXPECT_EQ(m.mla->index_head_dim, 128);
  engine::KvLayerInputs in;
  in.block_size = 64;
  in.kv_element_bytes = 1;
  in.kv_cache_dtype = "fp8_ds_mla";
  in.end_layer = m.num_layers;
  auto layers = engine::build_kv_layers(m, in);
  ASSERT_EQ(layers.specs.size(), 2u * 61);
  KvCacheConfig c = group_kv_cache_specs(layers.specs);
  EXPECT_TRUE(c.uniform_type);
  EXPECT_EQ(c.uniform_page_sum, 61LL * 64 * 656 + 61LL * 64 * 132);
}

// GLM-5.2 indexer_types: 21 "full" layers keep an indexer cache, 57 "shared" layers do not.
TEST(KvSpecs2026, Glm52SharedIndexerLayersKeepNoIndexerCache) {
  ModelSpec m = model("zai-org/GLM-5.2");
  ASSERT_TRUE(m.mla);
  engine::KvLayerInputs in;
  in.block_size = 64;
  in.end_layer = m.num_layers;
  EXPECT_EQ(engine::build_kv_layers(m, in).specs.size(), 78u + 21u);
}

// DeepSeek-V4-Flash: 43 layers with a sliding-window cache each, 21 ratio-4 layers with a
// compressed cache and an indexer, 20 ratio-128 layers with a compressed cache (the catalogue's
// compress_ratios counts 3 / 21 / 20 over 44 entries, the last being the MTP layer).
TEST(KvSpecs2026, DeepSeekV4LayerTuple) {
  ModelSpec m = model("deepseek-ai/DeepSeek-V4-Flash");
  ASSERT_TRUE(m.mla);
  ASSERT_EQ(m.mla->compress_ratios.size(), 43u);
  engine::KvLayerInputs in;
  in.end_layer = m.num_layers;
  auto layers = engine::build_kv_layers(m, in);
  EXPECT_TRUE(layers.layer_tuples);
  int r4 = 0, r128 = 0;
  for (int r : m.mla->compress_ratios) r4 += r == 4, r128 += r == 128;
  // The MTP entry is dropped from whichever count the catalogue order puts last.
  EXPECT_EQ(r4 + r128 + 3, 43);
  KvCacheConfig c = group_layer_tuples(layers.specs);
  // SWA rows: 64 × 584 = 37376 → 37440 per 64-token block on every layer.
  const Bytes expected = 43LL * 37440 + r4 * (37440LL + 64 * 132) + r128 * 1728LL;
  EXPECT_EQ(c.uniform_page_sum, expected);
  // One request of 8192 tokens needs 32 blocks of the 256-token groups (the sliding window needs
  // fewer), so 32 layer tuples.
  EXPECT_EQ(blocks_per_request(c, 8192, 0), 32);
}

// An architecture whose caches headroom does not size yet is an error that names them, never a
// prediction without them.
TEST(KvSpecs2026, UnmodelledCachesAreNamed) {
  auto m = parse_model_config_text(R"({"architectures": ["MiniMaxM3SparseForCausalLM"], "model_type": "minimax_m3",
    "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 1,
    "vocab_size": 100, "sparse_attention_config": {"sparse_block_size": 128}})",
                                   "config.json");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::unsupported);
  EXPECT_EQ(m.error().message, "not modelled yet: MiniMax M3 sparse attention (MSA) index caches");
}

// kimi_linear.py: linear_attn_config.kda_layers lists 1-based layer numbers of KDA layers; the
// others are MLA full attention.
TEST(KvSpecs2026, KimiLinearConfigMarksKdaLayers) {
  auto m = parse_model_config_text(R"({"architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear",
    "num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 4, "vocab_size": 1000,
    "kv_lora_rank": 64, "qk_rope_head_dim": 16, "qk_nope_head_dim": 32, "v_head_dim": 32,
    "linear_attn_config": {"kda_layers": [1, 2, 3], "full_attn_layers": [4], "num_heads": 4, "head_dim": 32,
                           "short_conv_kernel_size": 4}})",
                                   "config.json");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->layer_kind(0), LayerKind::kda_attention);
  EXPECT_EQ(m->layer_kind(2), LayerKind::kda_attention);
  EXPECT_EQ(m->layer_kind(3), LayerKind::full_attention);
  ASSERT_TRUE(m->hybrid);
  EXPECT_EQ(m->hybrid->kda_num_heads, 4);
}

// Nemotron-3 Ultra writes layers_block_type (108 entries: 48 mamba, 48 moe, 12 attention) and no
// num_hidden_layers; vLLM takes the layer count from the list.
TEST(KvSpecs2026, NemotronUltraLayersComeFromTheBlockTypes) {
  ModelSpec m = model("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-FP8");
  EXPECT_EQ(m.num_layers, 108);
  EXPECT_EQ(std::count(m.layer_kinds.begin(), m.layer_kinds.end(), LayerKind::full_attention), 12);
  EXPECT_EQ(std::count(m.layer_kinds.begin(), m.layer_kinds.end(), LayerKind::mamba), 48);
}

// A hybrid whose layer layout is not written would otherwise be sized as all attention.
TEST(KvSpecs2026, HybridWithoutLayoutIsNotModelled) {
  auto m = parse_model_config_text(R"({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
    "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100,
    "mamba_num_heads": 8, "mamba_head_dim": 16, "ssm_state_size": 16})",
                                   "config.json");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::unsupported);
  EXPECT_EQ(m.error().message.rfind("not modelled yet: the layer layout of this hybrid model", 0), 0u);
}

}  // namespace
}  // namespace headroom
