// Page sizes and per-request needs of the 2026 KV layouts. Every expected number is worked out
// by hand from vLLM's formulas, named with the file they come from.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

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

// DeepSeek-V4-Flash's published config.json: "first 2 layers SWA-only (0), then alternating
// CSA(4) / HCA(128), trailing 0 is the MTP placeholder" — 44 entries for 43 layers.
TEST(KvSpecs2026, DeepSeekV4FlashRatiosFollowThePublishedOrder) {
  ModelSpec m = model("deepseek-ai/DeepSeek-V4-Flash");
  ASSERT_TRUE(m.mla);
  const auto& r = m.mla->compress_ratios;
  ASSERT_EQ(r.size(), 43u);
  EXPECT_EQ(r[0], 0);
  EXPECT_EQ(r[1], 0);
  EXPECT_EQ(r[2], 4);
  EXPECT_EQ(r[3], 128);
  EXPECT_EQ(r[42], 4);
  EXPECT_EQ(std::count(r.begin(), r.end(), 4), 21);
  EXPECT_EQ(std::count(r.begin(), r.end(), 128), 20);
}

// The V4 report: "DeepSeek-V4-Pro: first 2 layers = HCA; remaining layers interleave CSA/HCA";
// its config counts 30 × 4, 31 × 128 and one 0 (the MTP placeholder) over 62 entries.
TEST(KvSpecs2026, DeepSeekV4ProStartsWithTwoHeavilyCompressedLayers) {
  ModelSpec m = model("deepseek-ai/DeepSeek-V4-Pro");
  ASSERT_TRUE(m.mla);
  const auto& r = m.mla->compress_ratios;
  ASSERT_EQ(r.size(), 61u);
  EXPECT_EQ(r[0], 128);
  EXPECT_EQ(r[1], 128);
  EXPECT_EQ(r[2], 4);
  EXPECT_EQ(std::count(r.begin(), r.end(), 0), 0);
}

// Pages of every cache a V4 layer owns with fp8_ds_mla (vllm/models/deepseek_v4):
// - sliding window: 64 tokens × 584 B = 37376 → 576-aligned 37440;
// - ratio-4 compressed MLA: 256 / 4 = 64 stored tokens × 584 B → 37440;
// - ratio-128 compressed MLA: 2 × 584 = 1168 → 1728;
// - indexer: 64 × (128 + 4) B = 8448 → 8640;
// - compressor.py CompressorStateCache, float32 [block, 2 × coff × head_dim]: ratio 4 (coff 2)
//   4 × 2048 × 4 = 32768 → 32832; its indexer's 4 × 512 × 4 = 8192 → 8640; ratio 128 (coff 1)
//   8 × 1024 × 4 = 32768 → 32832.
TEST(KvSpecs2026, DeepSeekV4CachePagesIncludeTheCompressorStates) {
  ModelSpec m = model("deepseek-ai/DeepSeek-V4-Flash");
  engine::KvLayerInputs in;
  in.kv_cache_dtype = "fp8_ds_mla";
  in.first_layer = 2;  // layer 2 is ratio 4, layer 3 ratio 128
  in.end_layer = 4;
  auto layers = engine::build_kv_layers(m, in);
  EXPECT_TRUE(layers.layer_tuples);
  std::vector<std::tuple<KvSpecType, int, int, Bytes>> got;
  for (const auto& s : layers.specs) got.emplace_back(s.type, s.block_size, s.sliding_window, s.page_bytes());
  const std::vector<std::tuple<KvSpecType, int, int, Bytes>> want{
      {KvSpecType::sliding_window, 64, 128, 37440},  // layer 2: SWA cache
      {KvSpecType::mla, 256, 0, 37440},              // compressed MLA, ratio 4
      {KvSpecType::sliding_window, 4, 8, 32832},     // its compressor state
      {KvSpecType::mla, 256, 0, 8640},               // indexer keys
      {KvSpecType::sliding_window, 4, 8, 8640},      // the indexer's compressor state
      {KvSpecType::sliding_window, 64, 128, 37440},  // layer 3: SWA cache
      {KvSpecType::mla, 256, 0, 1728},               // compressed MLA, ratio 128
      {KvSpecType::sliding_window, 8, 128, 32832},   // its compressor state
  };
  EXPECT_EQ(got, want);
}

// Hand-built layers of a V4 model, one entry per layer: 0 sliding only, 4 or 128 compressed.
// Row bytes are given per cache so that the layouts PR #48993 measured can be rebuilt.
struct V4Rows {
  int row = 584;          // bytes per stored token of the SWA and compressed MLA caches
  int indexer_row = 132;  // fp8 keys + fp32 scale; 68 with MXFP4 keys
  int alignment = 576;    // MLA pages; 512 without fp8_ds_mla
  int state_alignment = 576;
};

std::vector<LayerKvSpec> v4_layers(const std::vector<int>& ratios, const V4Rows& rows) {
  auto spec = [&](KvSpecType type, int block, int window, int ratio, int head, double elem, int align) {
    LayerKvSpec s;
    s.type = type;
    s.latent = true;
    s.block_size = block;
    s.sliding_window = window;
    s.compress_ratio = ratio;
    s.head_size = head;
    s.element_bytes = elem;
    s.alignment = align;
    return s;
  };
  std::vector<LayerKvSpec> out;
  for (int r : ratios) {
    out.push_back(spec(KvSpecType::sliding_window, 64, 128, 1, rows.row, 1, rows.alignment));
    if (r <= 1) continue;
    out.push_back(spec(KvSpecType::mla, 256, 0, r, rows.row, 1, rows.alignment));
    const int coff = r == 4 ? 2 : 1;
    out.push_back(spec(KvSpecType::sliding_window, r == 4 ? 4 : 8, coff * r, 1, 2 * coff * 512, 4, rows.state_alignment));
    if (r == 4) {
      out.push_back(spec(KvSpecType::mla, 256, 0, 4, rows.indexer_row, 1, rows.alignment));
      out.push_back(spec(KvSpecType::sliding_window, 4, 8, 1, 2 * coff * 128, 4, rows.state_alignment));
    }
  }
  return out;
}

// DeepSeek-V4-Pro's 61 layers: two ratio-128 layers, then 4, 128, …, 4.
std::vector<int> v4_pro_ratios() {
  std::vector<int> r{128, 128};
  for (int i = 0; i < 59; ++i) r.push_back(i % 2 == 0 ? 4 : 128);
  return r;
}

// PR #48993 ("[Core][DSV4] Compact MXFP4 indexer KV cache and packed group overlays") measured the
// physical block stride of DeepSeek-V4-Pro at startup on GB200: with the FlashMLA fp8_ds_mla
// layout 1,473,408 bytes before (one slot per page size, sliding-window pages padded, the MXFP4
// indexer reserving the 132-byte fp8 row) and 1,315,008 after (groups overlaid, 68-byte MXFP4
// indexer rows); with FlashInfer's plain 512-byte rows 1,308,672 before and 1,228,800 after.
TEST(KvSpecs2026, DeepSeekV4ProBlockStrideMatchesTheMeasuredLayouts) {
  const auto ratios = v4_pro_ratios();
  V4Rows flashmla;
  EXPECT_EQ(group_layer_tuples(v4_layers(ratios, flashmla), false).page_bytes, 1473408);
  V4Rows flashmla_mxfp4 = flashmla;
  flashmla_mxfp4.indexer_row = 68;
  EXPECT_EQ(group_layer_tuples(v4_layers(ratios, flashmla_mxfp4), true).page_bytes, 1315008);
  V4Rows flashinfer{512, 132, 512, 0};
  EXPECT_EQ(group_layer_tuples(v4_layers(ratios, flashinfer), false).page_bytes, 1308672);
  V4Rows flashinfer_mxfp4{512, 68, 512, 0};
  EXPECT_EQ(group_layer_tuples(v4_layers(ratios, flashinfer_mxfp4), true).page_bytes, 1228800);
}

// The same measurement through the catalogue model and --attention-config use_fp4_indexer_cache:
// DeepSeek-V4-Pro with FlashMLA's fp8_ds_mla rows and MXFP4 indexer keys (64 stored tokens × 68
// bytes = 4352 → 576-aligned 4608) packs into PR #48993's 1,315,008-byte block; without the flag the
// fp8 indexer rows give a wider block.
TEST(KvSpecs2026, DeepSeekV4ProFp4IndexerCacheGivesTheMeasuredBlock) {
  ModelSpec m = model("deepseek-ai/DeepSeek-V4-Pro");
  engine::KvLayerInputs in;
  in.kv_cache_dtype = "fp8_ds_mla";
  in.end_layer = m.num_layers;
  in.fp4_indexer_cache = true;
  auto layers = engine::build_kv_layers(m, in);
  const auto idx = std::find_if(layers.specs.begin(), layers.specs.end(),
                                [](const LayerKvSpec& s) { return s.type == KvSpecType::mla && s.head_size == 68; });
  ASSERT_NE(idx, layers.specs.end());
  EXPECT_EQ(idx->page_bytes(), 4608);
  EXPECT_EQ(group_layer_tuples(layers.specs, true).page_bytes, 1315008);
  in.fp4_indexer_cache = false;
  EXPECT_GT(group_layer_tuples(engine::build_kv_layers(m, in).specs, true).page_bytes, 1315008);
}

// DeepSeek-V4-Flash (43 layers: 2 sliding-only, 21 ratio 4, 20 ratio 128), fp8_ds_mla, from v0.26:
// - groups: all MLA caches; the SWA caches (block 64, window 128); the ratio-4 compressor states
//   (block 4, window 8); the ratio-128 states (block 8, window 128);
// - layer tuples = _approximate_gcd([21, 43, 21, 20], lower bound 21) = 22 (padding 5), so the 43
//   SWA caches split into sub-groups of 22 and 21: five groups;
// - block = the widest group: 21 × 37440 + 21 × 8640 + 20 × 1728 = 1,002,240 bytes;
// - memory check per page a request needs: 22 tuples × (37440 + 8640 + 1728) = 1,051,776 bytes.
TEST(KvSpecs2026, DeepSeekV4FlashPackedGroups) {
  ModelSpec m = model("deepseek-ai/DeepSeek-V4-Flash");
  engine::KvLayerInputs in;
  in.kv_cache_dtype = "fp8_ds_mla";
  in.end_layer = m.num_layers;
  KvCacheConfig c = group_layer_tuples(engine::build_kv_layers(m, in).specs, true);
  ASSERT_TRUE(c.error.empty()) << c.error;
  ASSERT_EQ(c.groups.size(), 5u);
  EXPECT_EQ(c.groups[0].layers.size(), 62u);
  EXPECT_EQ(c.groups[1].layers.size(), 22u);
  EXPECT_EQ(c.groups[2].layers.size(), 21u);
  EXPECT_EQ(c.page_bytes, 1002240);
  EXPECT_EQ(c.tuple_check_bytes, 22 * 47808);
  EXPECT_EQ(num_blocks_for(c, 1002240LL * 1000 + 5), 1000);
  // v0.26+ (#48317) per-request pages at max_model_len 8192 with 2048 tokens in flight:
  // MLA cdiv(8192, 256) = 32; each SWA sub-group cdiv(127 + 2048, 64) + 1 = 35;
  // ratio-4 states cdiv(7 + 2048, 4) + 1 = 515; ratio-128 states cdiv(127 + 2048, 8) + 1 = 273.
  c.per_group_rounding = true;
  EXPECT_EQ(blocks_per_request(c, 8192, 2048), 32 + 35 + 35 + 515 + 273);
  EXPECT_EQ(kv_bytes_needed(c, 8192, 2048), (32 + 35 + 35 + 515 + 273) * 22LL * 47808);
}

// A stage holding only sliding-window-only layers has one kind of spec: vLLM's ordinary uniform
// path, one group whose block is one 37,440-byte page per layer.
TEST(KvSpecs2026, DeepSeekV4StageOfSlidingLayersOnlyIsOneGroup) {
  KvCacheConfig c = group_layer_tuples(v4_layers({0, 0}, V4Rows{}), true);
  EXPECT_TRUE(c.error.empty()) << c.error;
  EXPECT_FALSE(c.layer_tuples);
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(num_blocks_for(c, 2 * 37440 * 10), 10);
}

// Before v0.26 the SWA-type pages are padded to the nearest MLA page size (the ratio-4 states'
// 32832 → 37440) and every page size has one slot per position across the groups:
// 22 × 37440 + 21 × 8640 + 20 × 1728 = 1,039,680 bytes.
TEST(KvSpecs2026, DeepSeekV4FlashPageSizeSlotsBeforeV026) {
  ModelSpec m = model("deepseek-ai/DeepSeek-V4-Flash");
  engine::KvLayerInputs in;
  in.kv_cache_dtype = "fp8_ds_mla";
  in.end_layer = m.num_layers;
  KvCacheConfig c = group_layer_tuples(engine::build_kv_layers(m, in).specs, false);
  ASSERT_TRUE(c.error.empty()) << c.error;
  EXPECT_EQ(c.page_bytes, 1039680);
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
