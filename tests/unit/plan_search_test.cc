// make_plan(): the search's choices, its errors, and the no-fit analysis.
#include <gtest/gtest.h>

#include <algorithm>

#include "headroom/plan.h"
#include "headroom/plan_render.h"
#include "headroom/vllm_config.h"
#include "plan/compact_weights.h"

namespace headroom {
namespace {

GpuSetup setup(const std::string& gpu, int count = 1, std::optional<double> used_gib = std::nullopt, int nodes = 1) {
  GpuSetup s;
  s.gpu = GpuCatalog::builtin().find(gpu).value();
  s.count = count;
  s.nodes = nodes;
  if (used_gib) s.free_bytes = s.gpu.total_bytes - from_gib(*used_gib);
  return s;
}

VllmVersion v(const char* text) { return VllmVersion::parse(text).value(); }

PlanRequest context(std::int64_t tokens, int concurrency = 1) {
  PlanRequest r;
  r.context_tokens = tokens;
  r.concurrency = concurrency;
  return r;
}

// The plans for one GPU and context with a pasted command's kept flags and without them (v0.19.0).
struct KeptAndPlain {
  Result<Plan> kept, plain;
  KeptFlags flags;  // what plan_hints kept from the command
};
KeptAndPlain plans_keeping(const ModelSpec& model, const std::vector<std::string>& args, const std::string& gpu,
                           std::int64_t tokens) {
  auto cmd = parse_vllm_command(args);
  EXPECT_TRUE(cmd);
  PlanRequest request = context(tokens);
  if (cmd) request.kept = plan_hints(cmd->flags, PlanRequest{}, false).kept;
  return {make_plan(model, setup(gpu), request, v("0.19.0")), make_plan(model, setup(gpu), context(tokens), v("0.19.0")),
          request.kept};
}

TEST(MakePlan, ClassicDesktopCaseStartsAtTheHighestUtilizationTheStartupCheckAllows) {
  auto model = load_model("Qwen/Qwen3-4B-Instruct-2507").value();
  auto plan = make_plan(model, setup("RTX 4080", 1, 0.5), context(4096), v("0.30.0"));
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(plan->recommended);
  const auto& rec = *plan->recommended;
  EXPECT_TRUE(rec.prediction.starts);
  EXPECT_EQ(rec.prediction.settings.max_model_len, 4096);
  EXPECT_GT(rec.utilization_max, rec.utilization_min);
  EXPECT_NE(rec.utilization_max_reason.find("startup check"), std::string::npos) << rec.utilization_max_reason;
}

// A pasted command's --performance-mode stays in every configuration the plan offers: its
// predictions run with it (throughput doubles the default 2048 batched tokens of a small GPU's API
// server to 4096, arg_utils.py #34936), and the rendered command keeps the flag.
TEST(MakePlan, KeepsThePerformanceModeOfTheCommand) {
  auto model = load_model("Qwen/Qwen3-4B-Instruct-2507").value();
  PlanRequest request = context(4096);
  request.kept.performance_mode = "throughput";
  auto plan = make_plan(model, setup("RTX 4080", 1, 0.5), request, v("0.20.0"));
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(plan->recommended);
  const auto& rec = *plan->recommended;
  EXPECT_EQ(rec.prediction.settings.performance_mode, "throughput");
  EXPECT_EQ(rec.prediction.settings.max_num_batched_tokens, 4096);
  EXPECT_NE(render_vllm_serve(model.id, rec, plan->gpus, CommandStyle::one_line).find("--performance-mode throughput"),
            std::string::npos);
  VllmFlags pasted;
  pasted.performance_mode = "interactivity";
  const CommandHints hints = plan_hints(pasted, PlanRequest{}, false);
  EXPECT_EQ(hints.kept.performance_mode.value_or(""), "interactivity");
}

// A pasted command that runs a vision-language model text-only (--limit-mm-per-prompt with image
// and video at 0): every configuration keeps it, so no tower is loaded (v0.10.1+) and no encoder
// pass runs, and each rendering carries the flag as vLLM takes it (a JSON string for the shell and
// YAML, a dict for LLM(...)).
TEST(MakePlan, KeepsATextOnlyRunTextOnly) {
  auto model = load_model("Qwen/Qwen2.5-VL-7B-Instruct").value();
  auto [text_only, with_images, kept] = plans_keeping(model, {"--limit-mm-per-prompt", R"({"image": 0, "video": 0})"}, "RTX 4090", 32768);
  ASSERT_FALSE(kept.empty());
  ASSERT_TRUE(text_only && with_images);
  ASSERT_TRUE(text_only->recommended && with_images->recommended);
  const auto& rec = *text_only->recommended;
  EXPECT_LT(rec.prediction.memory.weights, with_images->recommended->prediction.memory.weights);
  EXPECT_EQ(rec.prediction.memory.encoder_profile, 0);
  EXPECT_NE(render_vllm_serve(model.id, rec, text_only->gpus, CommandStyle::one_line).find(
                R"(--limit-mm-per-prompt '{"image":0,"video":0}')"),
            std::string::npos);
  EXPECT_NE(render_python(model.id, rec, text_only->gpus).find(R"(limit_mm_per_prompt={"image": 0, "video": 0},)"),
            std::string::npos);
  EXPECT_NE(render_yaml(model.id, rec, text_only->gpus).find(R"(limit-mm-per-prompt: '{"image":0,"video":0}')"),
            std::string::npos);
}

// A pasted command that quantizes at load (--quantization fp8, vLLM's online fp8: every linear
// layer's weight in one byte, embeddings and the LM head in the model's dtype) and runs fp16:
// every configuration keeps both, so the search sizes fp8 weights, and each rendering carries them.
TEST(MakePlan, KeepsAnOnlineQuantizationAndTheDtype) {
  auto model = load_model("meta-llama/Llama-3.1-8B-Instruct").value();
  auto [quantized, plain, kept] = plans_keeping(model, {"--quantization", "fp8", "--dtype", "float16"}, "L4", 8192);
  EXPECT_EQ(kept.quantization.value_or(""), "fp8");
  EXPECT_EQ(kept.dtype.value_or(""), "float16");
  ASSERT_TRUE(quantized && plain);
  ASSERT_TRUE(quantized->recommended && plain->recommended);
  const auto& rec = *quantized->recommended;
  EXPECT_EQ(rec.prediction.settings.quantization, "fp8");
  EXPECT_EQ(rec.prediction.settings.dtype, "float16");
  // Llama-3.1-8B: 6.98e9 of its 8.03e9 parameters are in linear layers; fp8 halves those bytes.
  const double ratio = to_gib(rec.prediction.memory.weights) / to_gib(plain->recommended->prediction.memory.weights);
  EXPECT_GT(ratio, 0.55);
  EXPECT_LT(ratio, 0.60);
  const std::string serve = render_vllm_serve(model.id, rec, quantized->gpus, CommandStyle::one_line);
  EXPECT_NE(serve.find("--dtype float16 --quantization fp8"), std::string::npos) << serve;
  EXPECT_NE(render_python(model.id, rec, quantized->gpus).find(R"(quantization="fp8",)"), std::string::npos);
}

TEST(MakePlan, ExplainsWhatTheUsualAdviceOfPointEightyDoes) {
  auto model = load_model("Qwen/Qwen3-4B-Instruct-2507").value();
  auto plan = make_plan(model, setup("RTX 4080", 1, 0.5), context(4096), v("0.19.0")).value();
  auto it = std::find_if(plan.explanation.begin(), plan.explanation.end(),
                         [](const std::string& l) { return l.starts_with("The usual advice, 0.80"); });
  ASSERT_NE(it, plan.explanation.end());
}

TEST(MakePlan, ContextLongerThanTheModelSupportsIsAnError) {
  auto model = load_model("Qwen/Qwen3-4B-Instruct-2507").value();
  auto plan = make_plan(model, setup("H100"), context(10'000'000), v("0.19.0"));
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(plan.error().where, "--context");
  EXPECT_EQ(plan.error().message,
            "10000000 tokens is longer than Qwen/Qwen3-4B-Instruct-2507 supports: max_position_embeddings gives 262144 "
            "(vLLM refuses a longer max_model_len unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)");
}

TEST(MakePlan, ConcurrencyBelowOneIsAnError) {
  auto model = load_model("Qwen/Qwen3-4B-Instruct-2507").value();
  auto plan = make_plan(model, setup("H100"), context(4096, 0), v("0.19.0"));
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().to_string(), "--concurrency: expected at least 1 request, got 0");
}

TEST(MakePlan, MoreGpusAllowedThanGivenIsAnError) {
  auto model = load_model("Qwen/Qwen3-4B-Instruct-2507").value();
  auto r = context(4096);
  r.max_gpus = 4;
  auto plan = make_plan(model, setup("H100", 2), r, v("0.19.0"));
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().to_string(),
            "--max-gpus: 4 GPUs allowed, but the setup has only 2 (1 node(s) × 2 GPUs); give more with --gpus or --nodes");
}

TEST(MakePlan, FewerGpusAllowedThanNodesIsAnError) {
  auto model = load_model("Qwen/Qwen3-4B-Instruct-2507").value();
  auto r = context(4096);
  r.max_gpus = 1;
  auto plan = make_plan(model, setup("H100", 8, std::nullopt, 2), r, v("0.19.0"));
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().to_string(),
            "--max-gpus: 1 GPUs cannot span the 2 nodes given: a multi-node plan uses at least one GPU per node");
}

TEST(MakePlan, WeightsLargerThanTheGpuGiveANoFitWithMoreGpus) {
  auto model = load_model("meta-llama/Llama-3.1-70B-Instruct").value();
  auto plan = make_plan(model, setup("RTX 4090"), context(8192), v("0.19.0")).value();
  ASSERT_FALSE(plan.recommended);
  ASSERT_TRUE(plan.no_fit);
  EXPECT_TRUE(plan.no_fit->reason.starts_with("the weights need ")) << plan.no_fit->reason;
  auto more = std::find_if(plan.no_fit->changes.begin(), plan.no_fit->changes.end(),
                           [](const FitChange& c) { return c.kind == "more_gpus"; });
  ASSERT_NE(more, plan.no_fit->changes.end());
  EXPECT_EQ(more->option, "--gpus 8");
}

TEST(MakePlan, NoFitOffersAQuantizedCheckpointOfTheSameModel) {
  auto model = load_model("deepseek-ai/DeepSeek-R1").value();
  auto plan = make_plan(model, setup("H100", 8), context(8192), v("0.19.0")).value();
  ASSERT_TRUE(plan.no_fit);
  auto q = std::find_if(plan.no_fit->changes.begin(), plan.no_fit->changes.end(),
                        [](const FitChange& c) { return c.kind == "quantized_checkpoint"; });
  ASSERT_NE(q, plan.no_fit->changes.end());
  EXPECT_EQ(q->option, "cognitivecomputations/DeepSeek-R1-AWQ");
}

TEST(MakePlan, KvCacheTooSmallSuggestsAShorterContext) {
  auto model = load_model("Qwen/Qwen3-4B-Instruct-2507").value();
  auto plan = make_plan(model, setup("RTX 4080"), context(32768, 8), v("0.19.0")).value();
  ASSERT_FALSE(plan.recommended);
  auto c = std::find_if(plan.no_fit->changes.begin(), plan.no_fit->changes.end(),
                        [](const FitChange& f) { return f.kind == "shorter_context"; });
  ASSERT_NE(c, plan.no_fit->changes.end());
  EXPECT_TRUE(c->option.starts_with("--context "));
}

TEST(MakePlan, ThroughputRunsDataParallelReplicasOfASmallModel) {
  auto model = load_model("Qwen/Qwen3-4B-Instruct-2507").value();
  auto plan = make_plan(model, setup("H100", 4), context(4096), v("0.19.0")).value();
  ASSERT_TRUE(plan.recommended);
  EXPECT_EQ(plan.recommended->prediction.settings.tensor_parallel_size, 1);
  EXPECT_EQ(plan.recommended->prediction.settings.data_parallel_size, 4);
}

TEST(MakePlan, LatencyUsesTheLargestTensorParallelGroup) {
  auto model = load_model("Qwen/Qwen3-4B-Instruct-2507").value();
  auto r = context(4096);
  r.goal = PlanGoal::latency;
  auto plan = make_plan(model, setup("H100", 4), r, v("0.19.0")).value();
  ASSERT_TRUE(plan.recommended);
  EXPECT_EQ(plan.recommended->prediction.settings.tensor_parallel_size, 4);
  EXPECT_EQ(plan.recommended->prediction.settings.max_num_seqs, 1);
}

TEST(MakePlan, Fp8KvCacheIsChosenOnlyWhenAllowed) {
  auto model = load_model("Qwen/Qwen3-8B").value();
  auto r = context(8192);
  auto plain = make_plan(model, setup("H100"), r, v("0.19.0")).value();
  r.allow_fp8_kv = true;
  auto fp8 = make_plan(model, setup("H100"), r, v("0.19.0")).value();
  EXPECT_EQ(plain.recommended->prediction.settings.kv_cache_dtype, "auto");
  EXPECT_EQ(fp8.recommended->prediction.settings.kv_cache_dtype, "fp8");
}

TEST(MakePlan, WithoutAContextServesTheLongestThatFits) {
  auto model = load_model("Qwen/Qwen3-4B-Instruct-2507").value();
  auto plan = make_plan(model, setup("RTX 4080"), PlanRequest{}, v("0.19.0")).value();
  ASSERT_TRUE(plan.recommended);
  EXPECT_LT(plan.context_tokens, plan.model_max_len);
  EXPECT_EQ(plan.recommended->prediction.settings.max_model_len, plan.context_tokens);
}

TEST(MakePlan, MultiNodeUsesPipelineStagesAcrossNodes) {
  auto model = load_model("meta-llama/Meta-Llama-3.1-405B-Instruct-FP8").value();
  auto plan = make_plan(model, setup("H100", 8, std::nullopt, 2), context(16384), v("0.19.0")).value();
  ASSERT_TRUE(plan.recommended);
  EXPECT_EQ(plan.recommended->prediction.settings.tensor_parallel_size, 8);
  EXPECT_EQ(plan.recommended->prediction.settings.pipeline_parallel_size, 2);
}

TEST(CompactInventory, KeepsThePerRankWeightBytes) {
  auto model = load_model("Qwen/Qwen3-30B-A3B").value();
  GpuSetup s = setup("H100", 4);
  VllmFlags f;
  f.tensor_parallel_size = 2;
  f.pipeline_parallel_size = 2;
  f.max_model_len = 4096;
  auto full = predict(model, s, f, v("0.19.0")).value();
  ModelSpec compact = model;
  compact.weights = plan::compact_inventory(model, synthesize_weights(model), 2);
  auto small = predict(compact, s, f, v("0.19.0")).value();
  EXPECT_LT(compact.weights->tensors.size(), 200u);
  EXPECT_NEAR(static_cast<double>(small.memory.weights), static_cast<double>(full.memory.weights), 16.0);
  EXPECT_EQ(small.num_gpu_blocks, full.num_gpu_blocks);
}

// A header's layer number past int is kept as a tensor outside the layers, not an exception.
TEST(CompactInventory, LayerNumberPastIntIsKeptOutsideTheLayers) {
  auto model = load_model("Qwen/Qwen3-0.6B").value();
  WeightsInventory inv = synthesize_weights(model);
  inv.tensors.push_back({"model.layers.99999999999.mlp.down_proj.weight", "BF16", {4, 4}, 32});
  WeightsInventory compact = plan::compact_inventory(model, inv, 1);
  EXPECT_TRUE(std::any_of(compact.tensors.begin(), compact.tensors.end(),
                          [](const TensorInfo& t) { return t.name == "model.layers.99999999999.mlp.down_proj.weight"; }));
}

}  // namespace
}  // namespace headroom
