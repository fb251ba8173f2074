// The v0.25–v0.33 rules, each at the first release that has it (../shared/spec/vllm-v026-v033.md).
#include <gtest/gtest.h>

#include "engine/vllm_defaults.h"
#include "engine/vllm_eras.h"
#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/vllm_engine.h"

namespace headroom {
namespace {

ModelSpec model(const std::string& id) {
  auto m = catalog_model(id);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().to_string());
  return m ? *m : ModelSpec{};
}

GpuSpec gpu(const std::string& name) {
  auto g = GpuCatalog::builtin().find(name);
  EXPECT_TRUE(g.has_value());
  return g ? *g : GpuSpec{};
}

TEST(VllmEras, DefaultIsV033ModelledWithV031Rules) {
  EXPECT_EQ(VllmVersion::newest_modelled().to_string(), "0.33.0");
  auto r = engine::era_rules(VllmVersion::newest_modelled(), model("Qwen/Qwen3-8B"));
  EXPECT_EQ(r.rules.to_string(), "0.31.0");
  EXPECT_EQ(r.modelled_with, "v0.33 modelled with v0.31 rules");
}

TEST(VllmEras, DescribedVersionsNeedNoNote) {
  EXPECT_EQ(engine::era_rules(VllmVersion{0, 31, 1}, model("Qwen/Qwen3-8B")).modelled_with, "");
  EXPECT_EQ(engine::era_rules(VllmVersion{0, 26, 0}, model("Qwen/Qwen3-8B")).modelled_with, "");
  EXPECT_EQ(engine::era_rules(VllmVersion{0, 32, 0}, model("Qwen/Qwen3-8B")).modelled_with,
            "v0.32 modelled with v0.31 rules");
}

// #44443 (v0.25) moved dense models to model runner v2, whose profile_cudagraph_memory returned 0
// until #53306 (v0.29); MoE models stayed on MRv1 (and its estimate) until v0.29.
TEST(VllmEras, ModelRunnerV2ReservesNoGraphMemoryBeforeV029) {
  ModelSpec dense = model("Qwen/Qwen3-8B");
  ModelSpec moe = model("Qwen/Qwen3-30B-A3B-Instruct-2507");
  EXPECT_FALSE(engine::era_rules(VllmVersion{0, 24}, dense).graph_estimate_is_zero);
  EXPECT_TRUE(engine::era_rules(VllmVersion{0, 25}, dense).graph_estimate_is_zero);
  EXPECT_TRUE(engine::era_rules(VllmVersion{0, 28}, dense).graph_estimate_is_zero);
  EXPECT_FALSE(engine::era_rules(VllmVersion{0, 28}, moe).graph_estimate_is_zero);
  EXPECT_FALSE(engine::era_rules(VllmVersion{0, 29}, dense).graph_estimate_is_zero);
  EXPECT_TRUE(engine::era_rules(VllmVersion{0, 29}, moe).model_runner_v2);
}

TEST(VllmEras, GraphMemoryIsNotSubtractedOnMrv2BeforeV029) {
  ModelSpec dense = model("Qwen/Qwen3-8B");
  GpuSetup g;
  g.gpu = gpu("H100");
  VllmFlags f;
  f.max_model_len = 8192;
  auto v28 = predict(dense, g, f, VllmVersion{0, 28});
  auto v29 = predict(dense, g, f, VllmVersion{0, 29});
  ASSERT_TRUE(v28 && v29);
  EXPECT_FALSE(v28->settings.estimate_cuda_graphs);
  EXPECT_TRUE(v29->settings.estimate_cuda_graphs);
  EXPECT_EQ(v28->memory.kv_cache - v29->memory.kv_cache, v29->memory.cuda_graph);
}

// arg_utils.py get_batch_defaults at the v0.28.0 tag (#51726): ≥ 160 GiB devices default to 16384
// batched tokens for the API server as well, and 1024 sequences.
TEST(VllmEras, BigMemoryTierFromV028) {
  VllmFlags f;
  auto v27 = engine::resolve_batch_limits(VllmVersion{0, 27}, gpu("B200"), f, 32768, true);
  auto v28 = engine::resolve_batch_limits(VllmVersion{0, 28}, gpu("B200"), f, 32768, true);
  EXPECT_EQ(v27.max_num_batched_tokens, 8192);
  EXPECT_EQ(v28.max_num_batched_tokens, 16384);
  EXPECT_EQ(v28.max_num_seqs, 1024);
  auto h100 = engine::resolve_batch_limits(VllmVersion{0, 28}, gpu("H100"), f, 32768, true);
  EXPECT_EQ(h100.max_num_batched_tokens, 8192);
}

// config/vllm.py _set_cudagraph_sizes (#49390, v0.28): SM100-family GPUs capture up to 1024:
// [1, 2, 4] + 8..248 step 8 + 256..1024 step 16 = 3 + 31 + 49 = 83 sizes, against 51 on Hopper.
TEST(VllmEras, BlackwellCapturesUpTo1024FromV028) {
  EXPECT_TRUE(engine::is_sm100_family(gpu("B200")));
  EXPECT_FALSE(engine::is_sm100_family(gpu("H100")));
  EXPECT_FALSE(engine::is_sm100_family(gpu("RTX 5090")));
  EXPECT_EQ(engine::cudagraph_capture_sizes(VllmVersion{0, 28}, 1024, 16384, true).size(), 83u);
  EXPECT_EQ(engine::cudagraph_capture_sizes(VllmVersion{0, 28}, 1024, 16384, false).size(), 51u);
  EXPECT_EQ(engine::cudagraph_capture_sizes(VllmVersion{0, 27}, 1024, 16384, true).size(), 51u);
}

// #50991 (v0.28): hybrid models start with prefix caching on in Mamba cache mode "align", two
// state pages per request, so the state-bound concurrency halves.
TEST(VllmEras, HybridsHoldTwoStatePagesFromV028) {
  ModelSpec m = model("Qwen/Qwen3-Next-80B-A3B-Instruct");
  GpuSetup g;
  g.gpu = gpu("H200");
  g.count = 2;
  VllmFlags f;
  f.tensor_parallel_size = 2;
  f.max_model_len = 4096;
  auto v27 = predict(m, g, f, VllmVersion{0, 27});
  auto v28 = predict(m, g, f, VllmVersion{0, 28});
  ASSERT_TRUE(v27 && v28);
  EXPECT_FALSE(v27->settings.enable_prefix_caching);
  EXPECT_TRUE(v28->settings.enable_prefix_caching);
  EXPECT_GT(v28->kv.blocks_per_request, v27->kv.blocks_per_request);
}

// Sparse MLA: DeepSeek-V3.2 stores fp8_ds_mla by default (config/cache.py "Some models (namely
// DeepSeekV3.2) default to fp8"), in 64-token blocks (FLASHMLA_SPARSE).
TEST(VllmEras, SparseMlaDefaultsToFp8DsMla) {
  ModelSpec m = model("deepseek-ai/DeepSeek-V3.2");
  GpuSetup g;
  g.gpu = gpu("H200");
  g.count = 8;
  VllmFlags f;
  f.tensor_parallel_size = 8;
  f.max_model_len = 32768;
  auto p = predict(m, g, f, VllmVersion::newest_modelled());
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_EQ(p->settings.kv_cache_dtype, "fp8_ds_mla");
  EXPECT_EQ(p->settings.block_size, 64);
  // 61 latent pages of 64 × 656 bytes and 61 indexer pages of 64 × 132 bytes per block.
  EXPECT_EQ(p->kv.page_bytes, 61LL * 64 * (656 + 132));
}

}  // namespace
}  // namespace headroom
