// make_plan() with the 2026 choices: the fp8 KV cache sparse-MLA models already default to, the
// state pages of hybrid models in Mamba cache mode "align" (and max_num_seqs bounded by the state
// blocks), and the GPUs NVFP4 checkpoints run on. Expected numbers are worked out from vLLM's
// formulas, named with the file they come from.
#include <gtest/gtest.h>

#include <algorithm>

#include "headroom/plan.h"
#include "headroom/plan_render.h"

namespace headroom {
namespace {

GpuSetup setup(const std::string& gpu, int count = 1) {
  GpuSetup s;
  s.gpu = GpuCatalog::builtin().find(gpu).value();
  s.count = count;
  return s;
}

VllmVersion v(const char* text) { return VllmVersion::parse(text).value(); }

ModelSpec model(const std::string& id) {
  auto m = catalog_model(id);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().to_string());
  return m ? *m : ModelSpec{};
}

PlanRequest context(std::int64_t tokens, int concurrency = 1) {
  PlanRequest r;
  r.context_tokens = tokens;
  r.concurrency = concurrency;
  return r;
}

std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

// ---- (1) Sparse MLA: vLLM picks the fp8 KV layout itself ----------------------------------------

// DeepSeek-V3.2: 61 layers, kv_lora_rank 512 + qk_rope_head_dim 64, index_head_dim 128.
// vllm/v1/kv_cache_interface.py (main 2026-08) MLAAttentionSpec.real_page_size_bytes: fp8_ds_mla
// is 656 bytes per token; model_executor/models/deepseek_v2.py Indexer: the indexer cache holds
// 128 + 128 / 128 × 4 = 132 bytes per token. MLA's single latent head is replicated on every TP
// rank, so each GPU holds 61 × (656 + 132) = 48,068 bytes per token.
constexpr Bytes k_v32_bytes_per_token = 61 * (656 + 132);

TEST(Plan2026, SparseMlaKeepsVllmsFp8DsMlaAndOffersNoOtherFp8Variant) {
  const auto m = model("deepseek-ai/DeepSeek-V3.2");
  PlanRequest r = context(32768);
  r.allow_fp8_kv = true;
  auto plan = make_plan(m, setup("H200", 8), r, v("0.33.0"));
  ASSERT_TRUE(plan) << plan.error().to_string();
  ASSERT_TRUE(plan->recommended);
  const auto& rec = *plan->recommended;
  // vLLM's own choice (config/cache.py: DeepSeek-V3.2 defaults to fp8; models/config.py
  // DeepseekV32ForCausalLM maps any fp8 request to fp8_ds_mla): the plan leaves the flag to vLLM.
  EXPECT_TRUE(!rec.flags.kv_cache_dtype || *rec.flags.kv_cache_dtype == "auto") << rec.flags.kv_cache_dtype.value_or("");
  EXPECT_EQ(rec.prediction.settings.kv_cache_dtype, "fp8_ds_mla");
  EXPECT_EQ(rec.prediction.kv.bytes_per_token, k_v32_bytes_per_token);
  for (const auto& alt : plan->alternatives) {
    EXPECT_EQ(alt.prediction.settings.kv_cache_dtype, "fp8_ds_mla") << alt.label;
    EXPECT_NE(alt.label, "fp8 KV cache");
    EXPECT_NE(alt.label, "full-precision KV cache");
  }
  EXPECT_EQ(render_vllm_serve(m.id, rec, setup("H200", 8), CommandStyle::one_line).find("--kv-cache-dtype"), std::string::npos);
}

TEST(Plan2026, SparseMlaNoFitDoesNotSuggestAnFp8KvCache) {
  const auto m = model("deepseek-ai/DeepSeek-V3.2");
  // 64 requests of the full 163,840 tokens need 64 × 163,840 × 48,068 bytes ≈ 470 GiB per GPU.
  auto plan = make_plan(m, setup("H200", 8), context(163840, 64), v("0.33.0"));
  ASSERT_TRUE(plan) << plan.error().to_string();
  ASSERT_FALSE(plan->recommended);
  ASSERT_TRUE(plan->no_fit);
  for (const auto& c : plan->no_fit->changes) EXPECT_NE(c.kind, "fp8_kv_cache") << c.summary;
}

// ---- (2) Hybrid models: two state pages per request, max_num_seqs ≤ state blocks -----------------

// Qwen3.5-35B-A3B: 40 layers, 30 Gated DeltaNet + 10 full attention (2 KV heads × 256, bf16);
// GDN: 16 key heads and 32 value heads of 128, conv kernel 4, mamba_ssm_dtype float32.
// model_executor/layers/mamba/mamba_utils.py gated_delta_net_state_shape: conv state
// (kernel − 1) × (2 × 16 × 128 + 32 × 128) in bf16, temporal state 32 × 128 × 128 in float32.
constexpr Bytes k_gdn_state = 3 * 8192 * 2 + 32 * 128 * 128 * 4;  // 2,146,304
// FullAttentionSpec page for one token: K and V × 2 heads × 256 × 2 bytes.
constexpr Bytes k_attn_token = 2 * 2 * 256 * 2;  // 2,048
// platforms/interface.py _align_hybrid_block_size (modes "align" and "none"): the attention block
// is the kernel alignment (FlashAttention MultipleOf(16), cache block_size 16) × cdiv(mamba page,
// 16 × attention page per token) = 16 × 66 = 1056 tokens; the Mamba page is padded to match.
constexpr std::int64_t k_block = 16 * ((k_gdn_state + 16 * k_attn_token - 1) / (16 * k_attn_token));
constexpr Bytes k_page = k_block * k_attn_token;
// v1/core/kv_cache_utils.py _get_kv_cache_groups_uniform_page_size: 10 full and 30 GDN layers
// give groups of 10 layers (1 attention group, 3 GDN groups); get_num_blocks: available memory
// // page // layers per group.
constexpr int k_group_size = 10;
constexpr int k_gdn_groups = 3;

std::int64_t state_blocks(Bytes available) { return available / k_page / k_group_size; }

TEST(Plan2026, HybridPlanHoldsTwoStatePagesPerRequestAndMaxNumSeqsWithinStateBlocks) {
  static_assert(k_block == 1056);
  const auto m = model("Qwen/Qwen3.5-35B-A3B");
  const std::int64_t len = 32768;
  auto plan = make_plan(m, setup("H100"), context(len), v("0.33.0"));
  ASSERT_TRUE(plan) << plan.error().to_string();
  ASSERT_TRUE(plan->recommended);
  const auto& p = plan->recommended->prediction;
  EXPECT_TRUE(p.settings.enable_prefix_caching);  // v0.28 default for hybrids (#50991): mode "align"
  EXPECT_EQ(p.kv.block_size, k_block);
  EXPECT_EQ(p.kv.page_bytes, k_page);
  const std::int64_t blocks = state_blocks(p.memory.kv_cache);
  ASSERT_GT(blocks, 0);
  EXPECT_EQ(p.num_gpu_blocks, blocks);
  // config/compilation.py: "max_num_seqs ({n}) exceeds available Mamba cache blocks".
  EXPECT_LE(p.settings.max_num_seqs, blocks);
  EXPECT_LE(plan->recommended->flags.max_num_seqs.value_or(p.settings.max_num_seqs), blocks);
  // kv_cache_utils.py (#48317): concurrency = blocks / Σ_groups cdiv(need_g, page); MambaSpec.
  // max_memory_usage_bytes in "align" mode is (2 + num_speculative_blocks) pages.
  const std::int64_t per_request = cdiv(len, k_block) + k_gdn_groups * 2;
  EXPECT_NEAR(p.max_concurrency, static_cast<double>(blocks) / static_cast<double>(per_request), 1e-9);
  auto choice = std::find_if(plan->recommended->choices.begin(), plan->recommended->choices.end(),
                             [](const PlanChoice& c) { return c.setting == "enable_prefix_caching"; });
  ASSERT_NE(choice, plan->recommended->choices.end());
  EXPECT_NE(choice->reason.find("two recurrent-state pages"), std::string::npos) << choice->reason;
}

TEST(Plan2026, HybridMaxNumSeqsAboveTheStateBlocksIsRejectedAsVllmDoes) {
  // More sequences mean more CUDA graphs and a larger activation peak, so the state blocks are
  // worked out again from each prediction's KV memory; the check fires exactly above them.
  const auto m = model("Qwen/Qwen3.5-35B-A3B");
  auto plan = make_plan(m, setup("H100"), context(32768), v("0.33.0"));
  ASSERT_TRUE(plan && plan->recommended);
  int rejected = 0, accepted = 0;
  for (int seqs : {64, 128, 256, 384, 448, 512, 1024}) {
    VllmFlags f = plan->recommended->flags;
    f.max_num_seqs = seqs;
    auto p = predict(m, setup("H100"), f, v("0.33.0"));
    ASSERT_TRUE(p) << p.error().to_string();
    const std::int64_t blocks = state_blocks(p->memory.kv_cache);
    ASSERT_GT(blocks, 0) << seqs;
    EXPECT_EQ(p->num_gpu_blocks, blocks) << seqs;
    if (seqs > blocks) {
      ++rejected;
      ASSERT_TRUE(p->failure) << seqs;
      EXPECT_EQ(p->failure->error_class, "mamba_cache_blocks_insufficient") << seqs;
      EXPECT_NE(p->failure->message.find("max_num_seqs (" + std::to_string(seqs) + ") exceeds available Mamba cache blocks (" +
                                         std::to_string(blocks) + ")"),
                std::string::npos)
          << p->failure->message;
    } else {
      ++accepted;
      EXPECT_TRUE(p->starts) << seqs << ": " << (p->failure ? p->failure->message : "");
    }
  }
  EXPECT_GT(rejected, 0);  // the case exercises both sides of the bound
  EXPECT_GT(accepted, 0);
}

TEST(Plan2026, HybridBeforeAlignModeHoldsOneStatePage) {
  // v0.27: prefix caching still off for hybrids, Mamba cache mode "none": 1 page per GDN group.
  const auto m = model("Qwen/Qwen3.5-35B-A3B");
  const std::int64_t len = 32768;
  auto plan = make_plan(m, setup("H100"), context(len), v("0.27.0"));
  ASSERT_TRUE(plan) << plan.error().to_string();
  ASSERT_TRUE(plan->recommended);
  const auto& p = plan->recommended->prediction;
  EXPECT_FALSE(p.settings.enable_prefix_caching);
  EXPECT_EQ(p.kv.page_bytes, k_page);
  const std::int64_t blocks = state_blocks(p.memory.kv_cache);
  EXPECT_EQ(p.num_gpu_blocks, blocks);
  EXPECT_LE(p.settings.max_num_seqs, blocks);
  EXPECT_NEAR(p.max_concurrency, static_cast<double>(blocks) / static_cast<double>(cdiv(len, k_block) + k_gdn_groups), 1e-9);
}

// ---- (3) NVFP4 checkpoints: native on Blackwell, Marlin weight-only from 7.5 --------------------

// vLLM main (2026) model_executor/layers/quantization/modelopt.py: ModelOptNvFp4Config.
// get_min_capability() returns 75 and utils/marlin_utils_fp4.py is_fp4_marlin_supported() is
// has_device_capability(75): below compute capability 10 the checkpoint loads through Marlin's
// weight-only FP4 kernel (and vLLM warns "Your GPU does not have native support for FP4
// computation"). config/vllm.py _get_quantization_config rejects lower capabilities.
const char* k_nvfp4 = "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4";

TEST(Plan2026, Nvfp4PlansNativelyOnBlackwell) {
  const auto m = model(k_nvfp4);
  for (const char* gpu : {"B200", "RTX 5090", "RTX PRO 6000"}) {
    auto plan = make_plan(m, setup(gpu), context(8192), v("0.33.0"));
    ASSERT_TRUE(plan) << gpu << ": " << plan.error().to_string();
    ASSERT_TRUE(plan->recommended) << gpu;
    EXPECT_TRUE(plan->recommended->prediction.starts) << gpu;
    EXPECT_FALSE(mentions(plan->explanation, "Marlin")) << gpu;
  }
}

TEST(Plan2026, Nvfp4PlansOnHopperAndAmpereThroughMarlinAndSaysSo) {
  const auto m = model(k_nvfp4);
  for (auto [gpu, cc] : {std::pair{"H100", "9.0"}, std::pair{"A100 80GB", "8.0"}}) {
    auto plan = make_plan(m, setup(gpu), context(8192), v("0.33.0"));
    ASSERT_TRUE(plan) << gpu << ": " << plan.error().to_string();
    ASSERT_TRUE(plan->recommended) << gpu;
    EXPECT_TRUE(mentions(plan->explanation, std::string("(compute capability ") + cc + ") through vLLM's Marlin weight-only FP4 kernel"))
        << gpu;
  }
}

TEST(Plan2026, Nvfp4IsRefusedBelowComputeCapability75WithVllmsMessage) {
  auto plan = make_plan(model(k_nvfp4), setup("V100 32GB"), context(8192), v("0.33.0"));
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_FALSE(plan->recommended);
  ASSERT_TRUE(plan->no_fit);
  EXPECT_NE(plan->no_fit->reason.find("The quantization method modelopt_fp4 is not supported for the current GPU. Minimum "
                                      "capability: 75. Current capability: 70."),
            std::string::npos)
      << plan->no_fit->reason;
}

// A class vLLM dropped (Llama 3.2 Vision after 0.10.2): nothing fits on a later release, and the
// reason names the last release that serves it.
TEST(Plan2026, DroppedArchitectureNamesTheLastReleaseThatServesIt) {
  auto plan = make_plan(model("meta-llama/Llama-3.2-11B-Vision-Instruct"), setup("H100"), context(8192), v("0.33.0"));
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_FALSE(plan->recommended);
  ASSERT_TRUE(plan->no_fit);
  EXPECT_NE(plan->no_fit->reason.find("Model architectures ['MllamaForConditionalGeneration'] are not supported for now."),
            std::string::npos)
      << plan->no_fit->reason;
  EXPECT_NE(plan->no_fit->reason.find("--vllm-version 0.10.2 predicts that release"), std::string::npos) << plan->no_fit->reason;
}

TEST(Plan2026, Nvfp4MinimumCapabilityFollowsTheMarlinKernel) {
  // Before the FP4 Marlin kernel (#17687, merged 2025-05-06, first in v0.9) NVFP4 needed
  // Blackwell (ModelOptNvFp4Config.get_min_capability() 100): an H100 is refused.
  const auto m = model("nvidia/Qwen3-235B-A22B-NVFP4");
  auto before = make_plan(m, setup("H100", 8), context(8192), v("0.8.5"));
  ASSERT_TRUE(before) << before.error().to_string();
  EXPECT_FALSE(before->recommended);
  ASSERT_TRUE(before->no_fit);
  EXPECT_NE(before->no_fit->reason.find("modelopt_fp4 is not supported for the current GPU. Minimum capability: 100. Current capability: 90."),
            std::string::npos)
      << before->no_fit->reason;
  auto after = make_plan(m, setup("H100", 8), context(8192), v("0.33.0"));
  ASSERT_TRUE(after) << after.error().to_string();
  EXPECT_TRUE(after->recommended);
}

TEST(Plan2026, NoFitSuggestsAnNvfp4CheckpointWithTheKernelItRunsOn) {
  const auto m = model("Qwen/Qwen3.5-122B-A10B");
  const std::string id = "nvidia/Qwen3.5-122B-A10B-NVFP4";
  auto find = [&](const Plan& p) -> const FitChange* {
    for (const auto& c : p.no_fit->changes)
      if (c.kind == "quantized_checkpoint" && c.option == id) return &c;
    return nullptr;
  };
  auto blackwell = make_plan(m, setup("RTX PRO 6000"), context(8192), v("0.33.0"));
  ASSERT_TRUE(blackwell && blackwell->no_fit);
  const FitChange* native = find(*blackwell);
  ASSERT_NE(native, nullptr);
  EXPECT_EQ(native->summary.find("Marlin"), std::string::npos) << native->summary;
  auto hopper = make_plan(m, setup("H100 NVL"), context(8192), v("0.33.0"));
  ASSERT_TRUE(hopper && hopper->no_fit);
  const FitChange* marlin = find(*hopper);
  ASSERT_NE(marlin, nullptr);
  EXPECT_NE(marlin->summary.find("weight-only FP4 through Marlin on this GPU"), std::string::npos) << marlin->summary;
}

}  // namespace
}  // namespace headroom
