// KV cache specs, grouping and sizing (include/headroom/kv_cache_spec.h) against values worked
// out by hand from the memory model's §3 (page sizes §3.1, grouping §3.5, num_blocks §3.6,
// need and auto-fit §3.8). The arithmetic is written next to each expectation.
#include <gtest/gtest.h>

#include <vector>

#include "headroom/kv_cache_spec.h"

namespace headroom {
namespace {

// Llama-3.1-8B's attention layer on one GPU: 8 KV heads × 128, bf16, block 16.
LayerKvSpec llama8b_layer() {
  LayerKvSpec s;
  s.block_size = 16;
  s.num_kv_heads = 8;
  s.head_size = 128;
  s.element_bytes = 2;
  return s;
}

// Gemma-3-27B: 16 KV heads × 128, bf16, sliding window 1024 on 5 of every 6 layers.
std::vector<LayerKvSpec> gemma3_27b_layers() {
  std::vector<LayerKvSpec> layers;
  for (int i = 0; i < 62; ++i) {
    LayerKvSpec s;
    s.num_kv_heads = 16;
    s.head_size = 128;
    if ((i + 1) % 6 != 0) {
      s.type = KvSpecType::sliding_window;
      s.sliding_window = 1024;
    }
    layers.push_back(s);
  }
  return layers;
}

// ---- Page sizes (§3.1) ----

TEST(KvCacheSpec, FullAttentionPageIsBlockTimesHeadsTimesKPlusVTimesBytes) {
  // 16 tokens × 8 heads × (128 + 128) × 2 B = 65536 B.
  EXPECT_EQ(llama8b_layer().page_bytes(), 65536);
}

TEST(KvCacheSpec, DistinctValueHeadSizeCountsOnce) {
  LayerKvSpec s = llama8b_layer();
  s.num_kv_heads = 4;
  s.head_size = 192;
  s.head_size_v = 128;
  // 16 × 4 × (192 + 128) × 2 = 40960 B.
  EXPECT_EQ(s.page_bytes(), 40960);
}

TEST(KvCacheSpec, Fp8KvHalvesThePage) {
  LayerKvSpec s = llama8b_layer();
  s.element_bytes = 1;
  // 16 × 8 × 256 × 1 = 32768 B.
  EXPECT_EQ(s.page_bytes(), 32768);
}

TEST(KvCacheSpec, SlidingWindowPageEqualsFullAttentionPage) {
  LayerKvSpec s = llama8b_layer();
  s.type = KvSpecType::sliding_window;
  s.sliding_window = 4096;
  EXPECT_EQ(s.page_bytes(), 65536);
}

TEST(KvCacheSpec, ChunkedLocalPageEqualsFullAttentionPage) {
  LayerKvSpec s = llama8b_layer();
  s.type = KvSpecType::chunked_local;
  s.attention_chunk_size = 8192;
  EXPECT_EQ(s.page_bytes(), 65536);
}

TEST(KvCacheSpec, MlaPageHasNoKvDoubling) {
  LayerKvSpec s;
  s.type = KvSpecType::mla;
  s.num_kv_heads = 1;
  s.head_size = 512 + 64;  // DeepSeek-V3: kv_lora_rank + qk_rope_head_dim
  s.element_bytes = 2;
  // 16 × 1 × 576 × 2 = 18432 B (a full-attention layer would double it).
  EXPECT_EQ(s.page_bytes(), 18432);
}

TEST(KvCacheSpec, MambaPageIsTheStateBytes) {
  LayerKvSpec s;
  s.type = KvSpecType::mamba;
  // conv (2, 512) + ssm (3, 32, 32) in fp32: (1024 + 3072) × 4 = 16384 B.
  s.mamba_state_bytes = (2 * 512 + 3 * 32 * 32) * 4;
  EXPECT_EQ(s.page_bytes(), 16384);
}

TEST(KvCacheSpec, MambaPaddingOverridesTheStatePage) {
  LayerKvSpec s;
  s.type = KvSpecType::mamba;
  s.mamba_state_bytes = (64 * 64 + 63 * 64) * 2;  // 16256 B of state
  s.page_size_padded = 16384;                      // padded to the attention page
  EXPECT_EQ(s.page_bytes(), 16384);
}

TEST(KvCacheSpec, CrossAttentionPageEqualsFullAttentionPage) {
  LayerKvSpec s = llama8b_layer();
  s.type = KvSpecType::cross_attention;
  EXPECT_EQ(s.page_bytes(), 65536);
}

// ---- Per-request need (max_memory_usage_bytes, §3.1) ----

TEST(KvCacheSpec, FullAttentionNeedsEveryTokenOfTheRequest) {
  // ceil(1000 / 16) = 63 pages.
  EXPECT_EQ(llama8b_layer().max_memory_usage_bytes(1000, 2048), 63 * 65536);
}

TEST(KvCacheSpec, SlidingWindowNeedIsCappedByWindowPlusInFlightTokens) {
  LayerKvSpec s = llama8b_layer();
  s.type = KvSpecType::sliding_window;
  s.sliding_window = 1024;
  // min(1024 − 1 + 2048, 131072) = 3071 tokens → ceil(3071 / 16) = 192 pages, + 1 = 193.
  EXPECT_EQ(s.max_memory_usage_bytes(131072, 2048), 193 * 65536);
}

TEST(KvCacheSpec, SlidingWindowNeedIsCappedByShortRequests) {
  LayerKvSpec s = llama8b_layer();
  s.type = KvSpecType::sliding_window;
  s.sliding_window = 1024;
  // min(3071, 512) = 512 tokens → 32 pages, + 1 = 33.
  EXPECT_EQ(s.max_memory_usage_bytes(512, 2048), 33 * 65536);
}

TEST(KvCacheSpec, ChunkedLocalNeedIsChunkPlusInFlightTokens) {
  LayerKvSpec s = llama8b_layer();
  s.type = KvSpecType::chunked_local;
  s.attention_chunk_size = 8192;
  // min(8192 + 2048, 131072) = 10240 tokens → 640 pages (no extra block).
  EXPECT_EQ(s.max_memory_usage_bytes(131072, 2048), 640 * 65536);
}

TEST(KvCacheSpec, MlaNeedsEveryTokenLikeFullAttention) {
  LayerKvSpec s;
  s.type = KvSpecType::mla;
  s.head_size = 576;
  // ceil(4096 / 16) = 256 pages of 18432 B.
  EXPECT_EQ(s.max_memory_usage_bytes(4096, 2048), 256 * 18432);
}

TEST(KvCacheSpec, MambaNeedsOnePageWhateverTheLength) {
  LayerKvSpec s;
  s.type = KvSpecType::mamba;
  s.mamba_state_bytes = 16384;
  EXPECT_EQ(s.max_memory_usage_bytes(1 << 20, 2048), 16384);
}

TEST(KvCacheSpec, CrossAttentionNeedFollowsEncoderTokens) {
  LayerKvSpec s = llama8b_layer();
  s.type = KvSpecType::cross_attention;
  // ceil(1601 / 16) = 101 pages, independent of max_model_len.
  EXPECT_EQ(s.max_memory_usage_bytes(131072, 2048, 1601), 101 * 65536);
}

// ---- Grouping (§3.5) and num_blocks (§3.6) ----

TEST(KvCacheGrouping, IdenticalLayersFormOneGroupOfAllLayers) {
  KvCacheConfig c = group_kv_cache_specs(std::vector<LayerKvSpec>(32, llama8b_layer()));
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(c.group_size, 32);
  EXPECT_EQ(c.page_bytes, 65536);
  EXPECT_FALSE(c.uniform_type);
}

TEST(KvCacheGrouping, DenseBlocksAreAvailableOverPageOverLayers) {
  KvCacheConfig c = group_kv_cache_specs(std::vector<LayerKvSpec>(32, llama8b_layer()));
  // floor(floor(10 GiB / 64 KiB) / 32) = floor(163840 / 32) = 5120 blocks.
  EXPECT_EQ(num_blocks_for(c, 10 * k_gib), 5120);
  // One byte less loses the last page, and with it a whole block: floor(163839 / 32) = 5119.
  EXPECT_EQ(num_blocks_for(c, 10 * k_gib - 1), 5119);
}

TEST(KvCacheGrouping, NegativeAvailableMemoryGivesNoBlocks) {
  KvCacheConfig c = group_kv_cache_specs(std::vector<LayerKvSpec>(32, llama8b_layer()));
  EXPECT_EQ(num_blocks_for(c, -k_gib), 0);
}

TEST(KvCacheGrouping, SameTypeDifferentHeadsIsOneUniformTypeGroup) {
  LayerKvSpec small = llama8b_layer();
  small.num_kv_heads = 4;
  KvCacheConfig c = group_kv_cache_specs({llama8b_layer(), small});
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_TRUE(c.uniform_type);
  // Σ pages = 65536 + 32768 = 98304 B; floor(1 GiB / 98304) = 10922 blocks.
  EXPECT_EQ(c.uniform_page_sum, 98304);
  EXPECT_EQ(num_blocks_for(c, k_gib), 10922);
  // A uniform-type request needs ceil(L / 16) blocks: ceil(1000 / 16) = 63.
  EXPECT_EQ(blocks_per_request(c, 1000, 2048), 63);
}

TEST(KvCacheGrouping, Gemma3StyleLayersGiveOneFullAndSixSlidingGroups) {
  // 62 layers, every 6th full: 10 full, 52 sliding. group_size = min(10, 52) = 10 (52 ≥ 1.5 × 10);
  // full: 1 group; sliding: ceil(52 / 10) = 6 groups of 9, 9, 9, 9, 8, 8 layers → 8 padding slots.
  KvCacheConfig c = group_kv_cache_specs(gemma3_27b_layers());
  EXPECT_EQ(c.group_size, 10);
  ASSERT_EQ(c.groups.size(), 7u);
  int full_groups = 0, full_layers = 0, sliding_groups = 0, sliding_layers = 0;
  for (const auto& g : c.groups) {
    if (g.spec.type == KvSpecType::full_attention) ++full_groups, full_layers += static_cast<int>(g.layers.size());
    if (g.spec.type == KvSpecType::sliding_window) ++sliding_groups, sliding_layers += static_cast<int>(g.layers.size());
  }
  EXPECT_EQ(full_groups, 1);
  EXPECT_EQ(full_layers, 10);
  EXPECT_EQ(sliding_groups, 6);
  EXPECT_EQ(sliding_layers, 52);
  EXPECT_EQ(c.padding_layers, 8);
}

TEST(KvCacheGrouping, SlidingLayersAreAssignedRoundRobin) {
  KvCacheConfig c = group_kv_cache_specs(gemma3_27b_layers());
  // Buckets come in the order of their first layer: layer 0 is sliding, so groups 0-5 are the
  // sliding ones and group 6 the full one.
  ASSERT_EQ(c.groups.size(), 7u);
  EXPECT_EQ(c.groups[6].layers, (std::vector<int>{5, 11, 17, 23, 29, 35, 41, 47, 53, 59}));
  // Sliding layer #p is model layer (p / 5) × 6 + p % 5. The first sliding group takes every 6th
  // of them (layers[0::6]): #0, 6, 12, 18, 24, 30, 36, 42, 48 = layers 0, 7, 14, 21, 28, 36, 43, 50, 57.
  EXPECT_EQ(c.groups[0].layers, (std::vector<int>{0, 7, 14, 21, 28, 36, 43, 50, 57}));
}

TEST(KvCacheGrouping, Gemma3BlocksDivideByTheGroupSizeNotTheLayerCount) {
  KvCacheConfig c = group_kv_cache_specs(gemma3_27b_layers());
  // page = 16 × 16 × 256 × 2 = 131072 B; floor(floor(20 GiB / 128 KiB) / 10) = 163840 / 10 = 16384.
  EXPECT_EQ(c.page_bytes, 131072);
  EXPECT_EQ(num_blocks_for(c, 20 * k_gib), 16384);
}

TEST(KvCacheGrouping, SlidingLayersNeedFewerBlocksPerRequest) {
  KvCacheConfig c = group_kv_cache_specs(gemma3_27b_layers());
  // full group: ceil(131072 / 16) = 8192; each sliding group: ceil(min(1023 + 8192, 131072) / 16)
  // + 1 = 576 + 1 = 577, × 6 = 3462 → 11654 blocks.
  EXPECT_EQ(blocks_per_request(c, 131072, 8192), 11654);
}

TEST(KvCacheGrouping, MixedPageSizesAlignByRaisingTheBlockSize) {
  LayerKvSpec sliding = llama8b_layer();
  sliding.type = KvSpecType::sliding_window;
  sliding.sliding_window = 4096;
  sliding.num_kv_heads = 4;  // page 32768 B, half of the full layer's
  KvCacheConfig c = group_kv_cache_specs({llama8b_layer(), sliding});
  ASSERT_EQ(c.groups.size(), 2u);
  // 65536 / 32768 = 2 → the sliding layer stores 32 tokens per block.
  EXPECT_EQ(c.groups[1].spec.block_size, 32);
  EXPECT_EQ(c.groups[1].spec.page_bytes(), 65536);
}

TEST(KvCacheGrouping, MambaLayersArePaddedToTheAttentionPage) {
  LayerKvSpec mamba;
  mamba.type = KvSpecType::mamba;
  mamba.mamba_state_bytes = 40000;
  KvCacheConfig c = group_kv_cache_specs({llama8b_layer(), mamba, mamba, mamba});
  // Buckets of 1 and 3 layers: group_size 1 (3 ≥ 1.5 × 1), so 1 + 3 groups, one page each.
  EXPECT_EQ(c.group_size, 1);
  ASSERT_EQ(c.groups.size(), 4u);
  EXPECT_EQ(c.page_bytes, 65536);
  for (std::size_t g = 1; g < c.groups.size(); ++g) EXPECT_EQ(c.groups[g].spec.page_bytes(), 65536);
}

// ---- Need, auto-fit, concurrency (§3.7, §3.8) ----

TEST(KvCacheNeed, DenseNeedIsBlocksTimesPageTimesLayers) {
  KvCacheConfig c = group_kv_cache_specs(std::vector<LayerKvSpec>(32, llama8b_layer()));
  // ceil(8000 / 16) = 500 blocks × 64 KiB × 32 layers = 1000 MiB.
  EXPECT_EQ(kv_bytes_needed(c, 8000, 2048), 500LL * 65536 * 32);
}

TEST(KvCacheNeed, HybridNeedSumsGroupsTimesGroupSize) {
  KvCacheConfig c = group_kv_cache_specs(gemma3_27b_layers());
  // 11654 blocks (see above) × 131072 B × group_size 10.
  EXPECT_EQ(kv_bytes_needed(c, 131072, 8192), 11654LL * 131072 * 10);
}

TEST(KvCacheNeed, EstimateFindsTheLongestLengthThatFits) {
  KvCacheConfig c = group_kv_cache_specs(std::vector<LayerKvSpec>(32, llama8b_layer()));
  // 2 MiB per 16-token block: 8 GiB holds 4096 blocks = 65536 tokens.
  EXPECT_EQ(estimate_max_model_len(c, 8 * k_gib, 131072, 2048), 65536);
  // One byte less: 4095 blocks = 65520 tokens.
  EXPECT_EQ(estimate_max_model_len(c, 8 * k_gib - 1, 131072, 2048), 65520);
}

TEST(KvCacheNeed, EstimateIsCappedAtTheUpperBound) {
  KvCacheConfig c = group_kv_cache_specs(std::vector<LayerKvSpec>(32, llama8b_layer()));
  EXPECT_EQ(estimate_max_model_len(c, 8 * k_gib, 4000, 2048), 4000);
}

TEST(KvCacheNeed, EstimateIsZeroWhenOneBlockDoesNotFit) {
  KvCacheConfig c = group_kv_cache_specs(std::vector<LayerKvSpec>(32, llama8b_layer()));
  EXPECT_EQ(estimate_max_model_len(c, 2 * 1024 * 1024 - 1, 131072, 2048), 0);
}

TEST(KvCacheNeed, EstimatedLengthFitsAndOneMoreBlockDoesNot) {
  KvCacheConfig c = group_kv_cache_specs(gemma3_27b_layers());
  const Bytes available = 10 * k_gib;  // below the 14.2 GiB a 131072-token request needs
  const std::int64_t fit = estimate_max_model_len(c, available, 131072, 8192);
  ASSERT_GT(fit, 0);
  EXPECT_LE(kv_bytes_needed(c, fit, 8192), available);
  EXPECT_GT(kv_bytes_needed(c, fit + 1, 8192), available);
}

TEST(KvCacheNeed, MaxConcurrencyIsBlocksOverBlocksPerRequest) {
  KvCacheConfig c = group_kv_cache_specs(std::vector<LayerKvSpec>(32, llama8b_layer()));
  // 5120 blocks / ceil(8192 / 16) = 5120 / 512 = 10.
  EXPECT_DOUBLE_EQ(max_concurrency(c, 5120, 8192, 2048), 10.0);
}

}  // namespace
}  // namespace headroom

namespace headroom {
namespace {

// CrossAttentionSpec: a request holds the encoder's tokens, not max_model_len of its own
// (kv_cache_interface.py): 6,404 encoder tokens at block 16 → 401 pages, whatever max_model_len is.
TEST(KvCacheSpecCross, CrossAttentionNeedsTheEncoderTokens) {
  LayerKvSpec cross;
  cross.type = KvSpecType::cross_attention;
  cross.block_size = 16;
  cross.num_kv_heads = 8;
  cross.head_size = 128;
  cross.max_encoder_tokens = 6404;
  const Bytes page = 16 * 8 * (128 + 128) * 2;  // 65,536 bytes
  EXPECT_EQ(cross.page_bytes(), page);
  EXPECT_EQ(cross.max_memory_usage_bytes(131072, 8192), 401 * page);
  EXPECT_EQ(cross.max_memory_usage_bytes(16, 8192), 401 * page);
}

}  // namespace
}  // namespace headroom
