// Gemma 4 as a multimodal prefix-LM: vLLM forces --disable-chunked-mm-input, so the largest item
// (a 32-frame video budgeted at 2496 tokens, gemma4_mm.py) must fit in max_num_batched_tokens.
// The message is compute_mm_encoder_budget's (encoder_cache_manager.py); the 2048 default is the
// API server's on GPUs under 70 GiB (arg_utils.py get_batch_defaults); #43051 (v0.22) raises an
// unset default to the item.
#include <gtest/gtest.h>

#include <string>

#include "headroom/check_changes.h"
#include "headroom/vllm_config.h"
#include "unit/engine_test_support.h"

namespace headroom {
namespace {

using test_support::gpus;
using test_support::model;

Prediction run_at(const ModelSpec& m, const GpuSetup& g, const VllmFlags& f, VllmVersion v) { return test_support::run(m, g, f, v); }

TEST(PrefixLm, Gemma4VideoDoesNotFitTheDefaultBatchOnV020) {
  const auto m = model("nvidia/Gemma-4-31B-IT-NVFP4");
  ASSERT_TRUE(m.mm_prefix_lm);
  const auto g = gpus("RTX PRO 6000");  // 96 GB: over 70 GiB, so 8192 tokens by default
  const auto l40s = gpus("L40S");       // 48 GB: 2048
  VllmFlags f;
  f.max_model_len = 8192;
  Prediction p = run_at(m, l40s, f, VllmVersion{0, 20, 0});
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->error_class, "mm_item_exceeds_batched_tokens");
  EXPECT_EQ(p.failure->message,
            "ValueError: Chunked MM input disabled but max_tokens_per_mm_item (2496) is larger than "
            "max_num_batched_tokens (2048). Please increase max_num_batched_tokens.");
  // Gemma 4 became a prefix-LM model after v0.19 (#40534); the larger default batch fits it.
  EXPECT_NE(run_at(m, l40s, f, VllmVersion{0, 19, 0}).failure.value_or(Failure{}).error_class, "mm_item_exceeds_batched_tokens");
  EXPECT_NE(run_at(m, g, f, VllmVersion{0, 20, 0}).failure.value_or(Failure{}).error_class, "mm_item_exceeds_batched_tokens");
  // Without video the largest item is an image of 280 tokens.
  VllmFlags no_video = f;
  no_video.limit_mm_per_prompt["video"] = 0;
  EXPECT_NE(run_at(m, l40s, no_video, VllmVersion{0, 20, 0}).failure.value_or(Failure{}).error_class,
            "mm_item_exceeds_batched_tokens");
  // The changes offered: a batch of 2496 tokens, or no video.
  auto changes = suggest_changes(m, l40s, f, p, [&](const VllmFlags& x, const GpuSetup& gg) {
    return predict(m, gg, x, VllmVersion{0, 20, 0});
  });
  ASSERT_FALSE(changes.empty());
  EXPECT_EQ(changes[0].set[0].first, "--max-num-batched-tokens");
  EXPECT_EQ(changes[0].set[0].second, "2496");
}

TEST(PrefixLm, V022RaisesAnUnsetBatchToTheItem) {
  const auto m = model("nvidia/Gemma-4-31B-IT-NVFP4");
  const auto l40s = gpus("L40S");
  VllmFlags f;
  f.max_model_len = 8192;
  Prediction p = run_at(m, l40s, f, VllmVersion{0, 22, 0});
  EXPECT_NE(p.failure.value_or(Failure{}).error_class, "mm_item_exceeds_batched_tokens");
  EXPECT_EQ(p.settings.max_num_batched_tokens, 2496);
  // A batch the user set is not raised, and the check still refuses it.
  VllmFlags set = f;
  set.max_num_batched_tokens = 2048;
  EXPECT_EQ(run_at(m, l40s, set, VllmVersion{0, 22, 0}).failure.value_or(Failure{}).error_class, "mm_item_exceeds_batched_tokens");
  // Text-only mode builds no multimodal budget.
  VllmFlags text = f;
  text.language_model_only = true;
  Prediction t = run_at(m, l40s, text, VllmVersion{0, 20, 0});
  EXPECT_NE(t.failure.value_or(Failure{}).error_class, "mm_item_exceeds_batched_tokens");
  // E2B has per-layer embeddings and is not a prefix-LM model.
  EXPECT_FALSE(model("google/gemma-4-E2B-it").mm_prefix_lm);
}


// --disable-chunked-mm-input on any multimodal model runs the same check: Qwen2.5-VL's largest image
// (max_pixels 12845056: 16384 tokens; at max_model_len 16384 its dummy video is no larger) does
// not fit H100's default batch of 8192.
TEST(PrefixLm, DisableChunkedMmInputNeedsTheLargestItemInOneBatch) {
  const auto m = model("Qwen/Qwen2.5-VL-7B-Instruct");
  VllmFlags f;
  f.max_model_len = 16384;
  f.disable_chunked_mm_input = true;
  Prediction p = run_at(m, gpus("H100"), f, VllmVersion{0, 11, 0});
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->message,
            "ValueError: Chunked MM input disabled but max_tokens_per_mm_item (16384) is larger than "
            "max_num_batched_tokens (8192). Please increase max_num_batched_tokens.");
  f.max_num_batched_tokens = 16384;
  EXPECT_NE(run_at(m, gpus("H100"), f, VllmVersion{0, 11, 0}).failure.value_or(Failure{}).error_class,
            "mm_item_exceeds_batched_tokens");
  auto parsed = parse_vllm_command({"vllm", "serve", "Qwen/Qwen2.5-VL-7B-Instruct", "--disable-chunked-mm-input"});
  ASSERT_TRUE(parsed.has_value());
  EXPECT_TRUE(parsed->flags.disable_chunked_mm_input);
  EXPECT_TRUE(parsed->warnings.empty());
  auto call = parse_llm_call("LLM(model='Qwen/Qwen2.5-VL-7B-Instruct', disable_chunked_mm_input=True)");
  ASSERT_TRUE(call.has_value());
  EXPECT_TRUE(call->flags.disable_chunked_mm_input);
}

// compute_mm_encoder_budget runs when the model runner is built; --skip-mm-profiling skips only the
// dummy encoder pass (gpu_model_runner.py profile_run), so the check still stops the start.
TEST(PrefixLm, SkippingTheProfilePassKeepsTheItemCheck) {
  VllmFlags f;
  f.max_model_len = 16384;
  f.disable_chunked_mm_input = true;
  f.skip_mm_profiling = true;
  Prediction qwen = run_at(model("Qwen/Qwen2.5-VL-7B-Instruct"), gpus("H100"), f, VllmVersion{0, 11, 0});
  ASSERT_TRUE(qwen.failure);
  EXPECT_EQ(qwen.failure->error_class, "mm_item_exceeds_batched_tokens");
  EXPECT_EQ(qwen.failure->mm_item_tokens, std::optional<std::int64_t>{16384});
  VllmFlags g;
  g.max_model_len = 8192;
  g.skip_mm_profiling = true;
  Prediction gemma = run_at(model("nvidia/Gemma-4-31B-IT-NVFP4"), gpus("L40S"), g, VllmVersion{0, 20, 0});
  ASSERT_TRUE(gemma.failure);
  EXPECT_EQ(gemma.failure->mm_item_tokens, std::optional<std::int64_t>{2496});
}

}  // namespace
}  // namespace headroom
