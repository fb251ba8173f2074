// vLLM's startup checks through predict(): each failure class, its phase and vLLM's exact message.
// Expected texts come from vLLM's source (file named per test); numbers from the model's config.
#include <gtest/gtest.h>

#include <string>

#include "engine/startup_checks.h"
#include "engine/weights.h"
#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/vllm_engine.h"
#include "unit/engine_test_support.h"

namespace headroom {
namespace {

using test_support::gpus;
using test_support::k_v019;
using test_support::model;
using test_support::run;


VllmFlags tp_len(int tp, std::int64_t len) {
  VllmFlags f;
  f.tensor_parallel_size = tp;
  f.max_model_len = len;
  return f;
}

// distributed/utils.py ensure_divisibility via vocab_parallel_embedding.py: Qwen3-14B's 40 heads
// split over 5 GPUs, but its vocabulary (151936, already a multiple of 64) does not.
TEST(StartupChecks, VocabularyThatDoesNotSplitOverTpFailsAtModelConstruction) {
  Prediction p = run(model("Qwen/Qwen3-14B"), gpus("H100", 5), tp_len(5, 8192));
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->phase, "model-construction");
  EXPECT_EQ(p.failure->message, "151936 is not divisible by 5");
}

// distributed/utils.py get_pp_indices, with vLLM's own goldens (tests/distributed/
// test_pipeline_partition.py): VLLM_PP_LAYER_PARTITION replaces the split, the default puts the
// remainder on the stages before the last.
TEST(PipelineStages, PartitionAndDefaultSplitMatchVllmsGoldens) {
  using Ranges = std::vector<std::pair<int, int>>;
  EXPECT_EQ(engine::pp_layer_ranges(20, 4, {4, 6, 6, 4}), (Ranges{{0, 4}, {4, 10}, {10, 16}, {16, 20}}));
  EXPECT_EQ(engine::pp_layer_ranges(22, 4, {5, 6, 5, 6}), (Ranges{{0, 5}, {5, 11}, {11, 16}, {16, 22}}));
  EXPECT_EQ(engine::pp_layer_ranges(3, 2), (Ranges{{0, 2}, {2, 3}}));
  EXPECT_EQ(engine::pp_layer_ranges(4, 3), (Ranges{{0, 1}, {1, 3}, {3, 4}}));
  EXPECT_EQ(engine::pp_layer_ranges(5, 3), (Ranges{{0, 2}, {2, 4}, {4, 5}}));
  EXPECT_EQ(engine::parse_pp_layer_partition(" 5, 5 ,1_0"), (std::vector<int>{5, 5, 10}));
  EXPECT_FALSE(engine::parse_pp_layer_partition("5,5,5,5,"));  // vLLM: ValueError
  EXPECT_FALSE(engine::parse_pp_layer_partition("5,5,5,a"));
}

VllmFlags pp_partition(int pp, const std::string& partition) {
  VllmFlags f;
  f.pipeline_parallel_size = pp;
  f.max_model_len = 8192;
  f.max_num_seqs = 64;
  f.pp_layer_partition = partition;
  return f;
}

TEST(StartupChecks, LayerPartitionThatDoesNotFitFailsAtModelConstruction) {
  auto m = model("meta-llama/Llama-3.1-70B-Instruct");  // 80 layers
  Prediction count = run(m, gpus("H100", 2), pp_partition(2, "40,20,20"));
  ASSERT_FALSE(count.starts);
  EXPECT_EQ(count.failure->phase, "model-construction");
  EXPECT_EQ(count.failure->error_class, "pp_layer_partition_invalid");
  EXPECT_EQ(count.failure->message, "len(partitions)=3 does not match pp_size=2.");
  Prediction sum = run(m, gpus("H100", 2), pp_partition(2, "40,39"));
  EXPECT_EQ(sum.failure->message, "sum(partitions)=79 does not match num_hidden_layers=80.");
  Prediction text = run(m, gpus("H100", 2), pp_partition(2, "40,a"));
  EXPECT_EQ(text.failure->message, "Invalid partition string: 40,a");
}

// A heavier first stage (it also holds the embedding) takes 4 more layers' weights and KV cache.
TEST(StartupChecks, LayerPartitionMovesLayersBetweenStages) {
  auto m = model("meta-llama/Llama-3.1-70B-Instruct");
  Prediction even = run(m, gpus("H100", 2), pp_partition(2, "40,40"));
  VllmFlags plain = pp_partition(2, "");
  plain.pp_layer_partition.reset();
  Prediction by_default = run(m, gpus("H100", 2), plain);
  Prediction heavy = run(m, gpus("H100", 2), pp_partition(2, "44,36"));
  ASSERT_TRUE(even.starts);
  EXPECT_EQ(even.memory.weights, by_default.memory.weights);
  // Llama-3.1-70B layer: q, o 8192 x 8192; k, v 1024 x 8192; gate, up, down 28672 x 8192; two
  // 8192 norms; bf16. The reported stage is the one with the least KV room: the first.
  const Bytes layer = (8192LL * (8192 + 1024 + 1024 + 8192) + 3LL * 28672 * 8192 + 2 * 8192) * 2;
  EXPECT_EQ(heavy.memory.weights - even.memory.weights, 4 * layer);
}

// config/model.py verify_with_parallel_config comes before model construction.
TEST(StartupChecks, HeadsThatDoNotSplitOverTpFailAtConfig) {
  Prediction p = run(model("meta-llama/Llama-3.1-8B-Instruct"), gpus("H100", 3), tp_len(3, 8192));
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->phase, "config");
  EXPECT_EQ(p.failure->message, "Total number of attention heads (32) must be divisible by tensor parallel size (3).");
}

// quantization/fp8.py Fp8MoEMethod.create_weights: Qwen3-30B-A3B-FP8's experts are 768 wide with
// 128×128 blocks; at TP 8 each rank holds 96 columns.
TEST(StartupChecks, Fp8BlockExpertsSplitBelowTheBlockFail) {
  Prediction p = run(model("Qwen/Qwen3-30B-A3B-FP8"), gpus("H100", 8), tp_len(8, 8192));
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->error_class, "quantization_shape_invalid");
  EXPECT_EQ(p.failure->message, "The output_size of gate's and up's weight = 96 is not divisible by weight quantization block_n = 128.");
}

TEST(StartupChecks, ExpertParallelKeepsFp8ExpertsWhole) {
  VllmFlags f = tp_len(8, 8192);
  f.enable_expert_parallel = true;
  Prediction p = run(model("Qwen/Qwen3-30B-A3B-FP8"), gpus("H100", 8), f);
  EXPECT_NE(p.failure ? p.failure->error_class : "", "quantization_shape_invalid");
}

// config/model.py _verify_quantization: a --quantization that is not the checkpoint's method and
// does not override it stops the engine config; AWQ's own Marlin names are accepted
// (awq_marlin.py override_quantization_method takes None, "marlin" and "awq_marlin").
TEST(StartupChecks, QuantizationFlagThatContradictsTheCheckpointFailsAtConfig) {
  VllmFlags f = tp_len(1, 8192);
  f.quantization = "fp8";
  Prediction p = run(model("Qwen/Qwen2.5-7B-Instruct-AWQ"), gpus("H100"), f);
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->phase, "config");
  EXPECT_EQ(p.failure->error_class, "quantization_mismatch");
  EXPECT_EQ(p.failure->message,
            "Quantization method specified in the model config (awq) does not match the quantization method specified in "
            "the `quantization` argument (fp8).");
  for (const char* accepted : {"awq", "awq_marlin", "marlin"}) {
    f.quantization = accepted;
    Prediction ok = run(model("Qwen/Qwen2.5-7B-Instruct-AWQ"), gpus("H100"), f);
    EXPECT_TRUE(ok.starts) << accepted << ": " << (ok.failure ? ok.failure->message : "");
  }
}

// model_loader/weight_utils.py get_quant_config: --quantization awq on a bf16 checkpoint looks for
// quantize_config.json and finds none; fp8 and bitsandbytes quantize while loading and need none.
TEST(StartupChecks, GptqOrAwqOnAnUnquantizedCheckpointFindsNoConfigFile) {
  VllmFlags f = tp_len(1, 8192);
  f.quantization = "awq";
  Prediction p = run(model("Qwen/Qwen2.5-7B-Instruct"), gpus("H100"), f);
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->phase, "config");
  EXPECT_EQ(p.failure->error_class, "quantization_config_missing");
  EXPECT_EQ(p.failure->message, "Cannot find the config file for awq");
  for (const char* online : {"fp8", "bitsandbytes"}) {
    f.quantization = online;
    Prediction ok = run(model("Qwen/Qwen2.5-7B-Instruct"), gpus("H100"), f);
    EXPECT_TRUE(ok.starts) << online << ": " << (ok.failure ? ok.failure->message : "");
  }
}

// config/vllm.py _get_quantization_config with awq.py get_min_capability (75): a V100 is 7.0.
TEST(StartupChecks, AwqOnVoltaIsBelowTheMinimumCapability) {
  Prediction p = run(model("TheBloke/Mistral-7B-v0.1-AWQ"), gpus("V100 32GB"), tp_len(1, 4096));
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->phase, "config");
  EXPECT_EQ(p.failure->message,
            "The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70.");
}

TEST(StartupChecks, MinimumCapabilitiesFollowTheMethodAndVersion) {
  EXPECT_EQ(engine::min_quantization_capability("awq", k_v019), 75);
  EXPECT_EQ(engine::min_quantization_capability("awq_marlin", k_v019), 80);
  EXPECT_EQ(engine::min_quantization_capability("fp8", k_v019), 80);
  EXPECT_EQ(engine::min_quantization_capability("fp8", VllmVersion{0, 5, 0}), 89);
  EXPECT_EQ(engine::min_quantization_capability("unknown-method", k_v019), 0);
}

// The model length check (ModelConfig) runs before the dtype check (worker init).
TEST(StartupChecks, MaxModelLenIsCheckedBeforeTheDtype) {
  VllmFlags f = tp_len(1, 1'000'000);
  f.dtype = "bfloat16";
  Prediction p = run(model("meta-llama/Llama-3.1-8B-Instruct"), gpus("T4"), f);
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->error_class, "max_model_len_exceeds_model_limit");
}

TEST(StartupChecks, AllowLongMaxModelLenSkipsTheLengthCheck) {
  VllmFlags f = tp_len(1, 200'000);
  f.allow_long_max_model_len = true;
  Prediction p = run(model("meta-llama/Llama-3.1-8B-Instruct"), gpus("H200"), f);
  EXPECT_NE(p.failure ? p.failure->error_class : "", "max_model_len_exceeds_model_limit");
}

// platforms/cuda.py check_if_supports_dtype.
TEST(StartupChecks, Bf16OnTuringFailsAtWorkerInit) {
  VllmFlags f = tp_len(1, 4096);
  f.dtype = "bfloat16";
  Prediction p = run(model("meta-llama/Llama-3.1-8B-Instruct"), gpus("T4"), f);
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->error_class, "unsupported_dtype_on_gpu");
}

// config/cache.py BlockSize choices; FlashAttention's get_kv_cache_shape (v1/attention/backends/flash_attn.py).
TEST(StartupChecks, BlockSizeOutsideVllmsChoicesFailsAtConfig) {
  VllmFlags f = tp_len(1, 4096);
  f.block_size = 24;
  Prediction p = run(model("meta-llama/Llama-3.1-8B-Instruct"), gpus("H100"), f);
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->message, "argument --block-size: invalid choice: 24 (choose from 1, 8, 16, 32, 64, 128)");
}

TEST(StartupChecks, FlashAttentionNeedsBlocksOfSixteen) {
  VllmFlags f = tp_len(1, 4096);
  f.block_size = 8;
  Prediction p = run(model("meta-llama/Llama-3.1-8B-Instruct"), gpus("H100"), f);
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->message, "Block size must be a multiple of 16.");
  f.attention_backend = "FLASHINFER";
  EXPECT_TRUE(run(model("meta-llama/Llama-3.1-8B-Instruct"), gpus("H100"), f).starts);
}

// gpu_worker.py compile_or_warm_up_model: after the KV cache, graphs are captured (outside the
// budget in v0.19), then the sampler warms up with min(max_num_seqs, mnbt) = 1024 dummy requests
// over gpt-oss's 201,088-token vocabulary. At utilization 0.99 the free-memory check still passes
// (the CUDA context takes less than 1 %), but too little is left beside the budget.
TEST(StartupChecks, SamplerWarmUpFailsWhenNothingIsLeftBesideTheBudget) {
  VllmFlags f;
  f.gpu_memory_utilization = 0.99;
  Prediction p = run(model("openai/gpt-oss-20b"), gpus("H100"), f);
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->phase, "sampler-warmup");
  EXPECT_EQ(p.failure->message,
            "CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try lowering "
            "`max_num_seqs` or `gpu_memory_utilization` when initializing the engine.");
}

// calibration/startup.jsonl llmdbench-h100-gptoss20b-tp1-16k: gpt-oss-20b on an H100 at 0.90 starts.
TEST(StartupChecks, GptOss20bStartsAt090OnAnH100) {
  VllmFlags f;
  f.gpu_memory_utilization = 0.90;
  f.max_model_len = 16384;
  EXPECT_TRUE(run(model("openai/gpt-oss-20b"), gpus("H100"), f).starts);
}

// The V0 engine has no sampler warm-up after capture.
TEST(StartupChecks, TheV0EngineHasNoSamplerWarmUp) {
  VllmFlags f;
  f.gpu_memory_utilization = 1.0;
  f.max_model_len = 8192;
  Prediction p = run(model("meta-llama/Llama-3.1-8B-Instruct"), gpus("H100"), f, VllmVersion{0, 7, 3});
  EXPECT_NE(p.failure ? p.failure->phase : "", "sampler-warmup");
}

// Early V1 (v0.8): check_enough_kv_cache_memory sums each layer's bytes_for_tokens(max_model_len),
// and SlidingWindowSpec.bytes_for_tokens caps the tokens at the window (v1/kv_cache_interface.py,
// v1/core/kv_cache_utils.py of v0.8): one full layer and one 1024-token sliding layer at 131072.
TEST(StartupChecks, EarlyV1SlidingLayersNeedOnlyTheirWindow) {
  LayerKvSpec full;
  full.type = KvSpecType::full_attention;
  full.block_size = 16;
  full.num_kv_heads = 4;
  full.head_size = 256;
  full.element_bytes = 2;
  LayerKvSpec sliding = full;
  sliding.type = KvSpecType::sliding_window;
  sliding.sliding_window = 1024;
  const Bytes page = 2LL * 16 * 4 * 256 * 2;
  EXPECT_EQ(engine::pre_hybrid_kv_need({full, sliding}, 131072, VllmVersion{0, 8, 4}, 2048),
            (131072 / 16) * page + (1024 / 16) * page);
}

// A v0.8.4 run of Gemma-3-12B (QAT AWQ) at TP 2 on two RTX 4090s with max_model_len 131072 started
// with "Maximum concurrency for 131,072 tokens per request: 0.53x": the check counted the 40
// sliding-window layers at their 1024-token window although the cache is allocated as full layers.
TEST(StartupChecks, Gemma3OnV084StartsBelowOneFullLengthRequest) {
  VllmFlags f = tp_len(2, 131072);
  f.max_num_batched_tokens = 2048;
  f.quantization = "awq_marlin";
  Prediction p = run(model("gaunernst/gemma-3-12b-it-qat-autoawq"), gpus("RTX 4090", 2), f, VllmVersion{0, 8, 4});
  EXPECT_TRUE(p.starts) << (p.failure ? p.failure->message : "");
  EXPECT_LT(p.max_concurrency, 1.0);
}

}  // namespace
}  // namespace headroom
