// parse_vllm_command, parse_human_bytes and validate_flags (include/headroom/vllm_config.h), and
// VllmVersion::parse: the command forms users paste, vLLM's value syntax, and exact error text.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "headroom/vllm_config.h"
#include "headroom/vllm_version.h"

namespace headroom {
namespace {

VllmCommand parse_ok(const std::vector<std::string>& args) {
  auto cmd = parse_vllm_command(args);
  EXPECT_TRUE(cmd.has_value()) << (cmd ? "" : cmd.error().to_string());
  return cmd ? *cmd : VllmCommand{};
}

std::string parse_error(const std::vector<std::string>& args) {
  auto cmd = parse_vllm_command(args);
  EXPECT_FALSE(cmd.has_value());
  return cmd ? "" : cmd.error().to_string();
}

std::string validate_error(const VllmFlags& flags) {
  auto ok = validate_flags(flags);
  EXPECT_FALSE(ok.has_value());
  return ok ? "" : ok.error().to_string();
}

// ---- multimodal flags ----

TEST(VllmCommand, LimitMmPerPromptTakesJsonObjectsAndTheOlderForm) {
  auto json = parse_ok({"m", "--limit-mm-per-prompt", R"({"image": 0, "video": 0})"});
  EXPECT_EQ(json.flags.limit_mm_per_prompt, (std::map<std::string, int>{{"image", 0}, {"video", 0}}));
  auto sized = parse_ok({"m", "--limit-mm-per-prompt", R"({"image": {"count": 2, "width": 512, "height": 512}})"});
  EXPECT_EQ(sized.flags.limit_mm_per_prompt, (std::map<std::string, int>{{"image", 2}}));
  ASSERT_EQ(sized.flags.mm_dummy_sizes.count("image"), 1u);
  EXPECT_EQ(sized.flags.mm_dummy_sizes.at("image").width, 512);
  EXPECT_EQ(sized.flags.mm_dummy_sizes.at("image").height, 512);
  auto frames = parse_ok({"m", "--limit-mm-per-prompt", R"({"video": {"count": 1, "num_frames": 32}})"});
  EXPECT_EQ(frames.flags.mm_dummy_sizes.at("video").num_frames, 32);
  auto old = parse_ok({"m", "--limit-mm-per-prompt", "image=4,video=1"});
  EXPECT_EQ(old.flags.limit_mm_per_prompt, (std::map<std::string, int>{{"image", 4}, {"video", 1}}));
}

TEST(VllmCommand, LimitMmPerPromptRejectsANegativeCount) {
  EXPECT_EQ(parse_error({"m", "--limit-mm-per-prompt", R"({"image": -1})"}),
            R"(--limit-mm-per-prompt: a count that is not a non-negative integer for image in '{"image": -1}' )"
            R"((expected e.g. '{"image": 0, "video": 0}'))");
}

TEST(VllmCommand, LimitMmPerPromptRejectsASizeThatIsNotAPositiveInteger) {
  for (const char* bad : {R"({"image": {"count": 1, "width": 0}})", R"({"image": {"count": 1, "height": "big"}})",
                          R"({"video": {"count": 1, "num_frames": 99999999}})"})
    EXPECT_NE(parse_error({"m", "--limit-mm-per-prompt", bad}).find("not a positive integer up to 1000000"), std::string::npos)
        << bad;
}

TEST(VllmCommand, MultimodalSwitchesAreRead) {
  auto cmd = parse_ok({"m", "--language-model-only", "--skip-mm-profiling", "--mm-encoder-tp-mode", "data",
                       "--mm-processor-kwargs", R"({"max_pixels": 1003520})"});
  EXPECT_TRUE(cmd.flags.language_model_only);
  EXPECT_TRUE(cmd.flags.skip_mm_profiling);
  EXPECT_EQ(cmd.flags.mm_encoder_tp_mode, "data");
  EXPECT_EQ(cmd.flags.mm_processor_kwargs, R"({"max_pixels":1003520})");
  EXPECT_TRUE(cmd.warnings.empty());
  EXPECT_EQ(parse_error({"m", "--mm-encoder-tp-mode", "both"}),
            "--mm-encoder-tp-mode: invalid choice: 'both' (choose from 'weights', 'data')");
}

// ---- command forms ----

TEST(VllmCommand, VllmServeTakesTheModelAfterServe) {
  auto cmd = parse_ok({"vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"});
  EXPECT_EQ(cmd.model, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(cmd.flags.max_model_len, 8192);
  EXPECT_EQ(cmd.flags.usage_context, UsageContext::api_server);
  EXPECT_TRUE(cmd.warnings.empty());
}

TEST(VllmCommand, ApiServerModuleTakesTheModelFromModelFlag) {
  auto cmd = parse_ok({"python", "-m", "vllm.entrypoints.openai.api_server", "--model", "Qwen/Qwen2.5-7B-Instruct",
                       "--gpu-memory-utilization", "0.85"});
  EXPECT_EQ(cmd.model, "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(cmd.flags.gpu_memory_utilization, 0.85);
  EXPECT_EQ(cmd.flags.usage_context, UsageContext::api_server);
}

TEST(VllmCommand, Python3AndModelEqualsFormAreAccepted) {
  auto cmd = parse_ok({"python3", "-m", "vllm.entrypoints.openai.api_server", "--model=org/m", "--max-num-seqs=64"});
  EXPECT_EQ(cmd.model, "org/m");
  EXPECT_EQ(cmd.flags.max_num_seqs, 64);
}

TEST(VllmCommand, BareFlagsWithoutModelAreAccepted) {
  auto cmd = parse_ok({"--max-model-len", "4096", "-tp", "2"});
  EXPECT_EQ(cmd.model, "");
  EXPECT_EQ(cmd.flags.max_model_len, 4096);
  EXPECT_EQ(cmd.flags.tensor_parallel_size, 2);
}

TEST(VllmCommand, FlagEqualsValueIsTheSameAsTwoArguments) {
  auto cmd = parse_ok({"m", "--tensor-parallel-size=4", "--kv-cache-dtype=fp8"});
  EXPECT_EQ(cmd.flags.tensor_parallel_size, 4);
  EXPECT_EQ(cmd.flags.kv_cache_dtype, "fp8");
}

// argparse splits "-tp=2" at the "=" as it does "--flag=value" (it was ignored with a warning,
// leaving TP at 1).
TEST(VllmCommand, ShortFlagEqualsValue) {
  auto cmd = parse_ok({"m", "-tp=2", "-pp=3", "-q=fp8"});
  EXPECT_EQ(cmd.flags.tensor_parallel_size, 2);
  EXPECT_EQ(cmd.flags.pipeline_parallel_size, 3);
  EXPECT_EQ(cmd.flags.quantization, "fp8");
  EXPECT_TRUE(cmd.warnings.empty());
}

TEST(VllmCommand, CpuOffloadGb) {
  auto cmd = parse_ok({"m", "--cpu-offload-gb", "10"});
  EXPECT_DOUBLE_EQ(*cmd.flags.cpu_offload_gb, 10.0);
  EXPECT_TRUE(cmd.warnings.empty());
  VllmFlags negative;
  negative.cpu_offload_gb = -2;
  EXPECT_EQ(validate_error(negative), "--cpu-offload-gb: must be a size in GiB, 0 or more");
  EXPECT_EQ(parse_error({"m", "--cpu-offload-gb", "lots"}), "--cpu-offload-gb: expected a number, got 'lots'");
}

TEST(VllmCommand, ShortParallelFlags) {
  auto cmd = parse_ok({"m", "-tp", "2", "-pp", "3", "-dp", "4"});
  EXPECT_EQ(cmd.flags.tensor_parallel_size, 2);
  EXPECT_EQ(cmd.flags.pipeline_parallel_size, 3);
  EXPECT_EQ(cmd.flags.data_parallel_size, 4);
}

TEST(VllmCommand, UnderscoresInFlagNamesAreDashes) {
  auto cmd = parse_ok({"m", "--max_model_len", "2048"});
  EXPECT_EQ(cmd.flags.max_model_len, 2048);
}

TEST(VllmCommand, NoPrefixTurnsABooleanOff) {
  auto cmd = parse_ok({"m", "--no-enable-prefix-caching"});
  EXPECT_EQ(cmd.flags.enable_prefix_caching, false);
}

TEST(VllmCommand, BooleanFlagAloneTurnsItOn) {
  auto cmd = parse_ok({"m", "--enable-prefix-caching", "--enforce-eager"});
  EXPECT_EQ(cmd.flags.enable_prefix_caching, true);
  EXPECT_TRUE(cmd.flags.enforce_eager);
}

TEST(VllmCommand, BooleanFlagWithFalseValueTurnsItOff) {
  auto cmd = parse_ok({"m", "--enable-chunked-prefill=false"});
  EXPECT_EQ(cmd.flags.enable_chunked_prefill, false);
}

// ---- max_model_len forms ----

TEST(VllmCommand, MaxModelLenAutoRequestsAutoFit) {
  auto cmd = parse_ok({"m", "--max-model-len", "auto"});
  EXPECT_TRUE(cmd.flags.max_model_len_auto);
  EXPECT_FALSE(cmd.flags.max_model_len.has_value());
}

TEST(VllmCommand, MaxModelLenMinusOneRequestsAutoFit) {
  auto cmd = parse_ok({"m", "--max-model-len", "-1"});
  EXPECT_TRUE(cmd.flags.max_model_len_auto);
}

TEST(VllmCommand, LowercaseKIsThousand) {
  EXPECT_EQ(parse_ok({"m", "--max-model-len", "32k"}).flags.max_model_len, 32000);
}

TEST(VllmCommand, UppercaseKIsKibi) {
  EXPECT_EQ(parse_ok({"m", "--max-model-len", "32K"}).flags.max_model_len, 32768);
}

TEST(VllmCommand, KvCacheMemoryBytesUppercaseGIsGibibytes) {
  EXPECT_EQ(parse_ok({"m", "--kv-cache-memory-bytes", "8G"}).flags.kv_cache_memory_bytes, 8LL * 1024 * 1024 * 1024);
}

TEST(VllmCommand, KvCacheMemoryBytesLowercaseGIsGigabytes) {
  EXPECT_EQ(parse_ok({"m", "--kv-cache-memory-bytes", "8g"}).flags.kv_cache_memory_bytes, 8'000'000'000LL);
}

TEST(VllmCommand, HumanBytesAcceptDecimalsOnlyWithDecimalSuffixes) {
  EXPECT_EQ(parse_human_bytes("1.5g"), 1'500'000'000LL);
  EXPECT_FALSE(parse_human_bytes("1.5G").has_value());
}

// ---- environment prefix ----

TEST(VllmCommand, EnvironmentPrefixTurnsGraphEstimateOff) {
  auto cmd = parse_ok({"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0", "vllm", "serve", "m"});
  EXPECT_EQ(cmd.model, "m");
  EXPECT_EQ(cmd.flags.estimate_cuda_graphs, false);
}

TEST(VllmCommand, EnvironmentPrefixTurnsGraphEstimateOn) {
  auto cmd = parse_ok({"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1", "vllm", "serve", "m"});
  EXPECT_EQ(cmd.flags.estimate_cuda_graphs, true);
}

TEST(VllmCommand, OtherEnvironmentVariablesAreIgnored) {
  auto cmd = parse_ok({"CUDA_VISIBLE_DEVICES=0,1", "vllm", "serve", "m"});
  EXPECT_EQ(cmd.model, "m");
  EXPECT_FALSE(cmd.flags.estimate_cuda_graphs.has_value());
  EXPECT_TRUE(cmd.warnings.empty());
}

TEST(VllmCommand, MalformedEnvironmentBooleanIsAnError) {
  EXPECT_EQ(parse_error({"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=maybe", "vllm", "serve", "m"}),
            "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: expected true or false, got 'maybe'");
}

// ---- flags headroom does not model ----

TEST(VllmCommand, UnmodelledValueFlagWarnsWithItsValue) {
  auto cmd = parse_ok({"m", "--served-model-name", "x", "--max-log-len", "5", "--seed", "3", "--guided-decoding-backend", "xgrammar"});
  ASSERT_EQ(cmd.warnings.size(), 1u);
  EXPECT_EQ(cmd.warnings[0], "vLLM flag --guided-decoding-backend xgrammar is not modelled; the prediction ignores it");
}

// Flags known to add memory say which way the prediction errs.
TEST(VllmCommand, UnmodelledMemoryFlagsSayWhatIsLeftOut) {
  auto cmd = parse_ok({"m", "--max-lora-rank", "64", "--speculative-config", R"({"method":"eagle3","num_speculative_tokens":3})"});
  ASSERT_EQ(cmd.warnings.size(), 2u);
  EXPECT_EQ(cmd.warnings[0],
            "vLLM flag --max-lora-rank 64 is not modelled; the prediction ignores it: the LoRA weight slots (max_loras x rank "
            "per adapted layer) and the LoRA CUDA graphs are not counted, so vLLM will find less KV cache than predicted");
  EXPECT_NE(cmd.warnings[1].find("the drafter's weights"), std::string::npos) << cmd.warnings[1];
}

TEST(VllmCommand, UnmodelledBooleanFlagDoesNotSwallowTheNextArgument) {
  auto cmd = parse_ok({"--enable-lora", "m"});
  EXPECT_EQ(cmd.model, "m");
  ASSERT_EQ(cmd.warnings.size(), 1u);
  EXPECT_EQ(cmd.warnings[0].rfind("vLLM flag --enable-lora is not modelled; the prediction ignores it: the LoRA", 0), 0u)
      << cmd.warnings[0];
}

TEST(VllmCommand, UnmodelledFlagWithInlineValueWarns) {
  auto cmd = parse_ok({"m", "--speculative-config={\"method\":\"eagle\"}"});
  ASSERT_EQ(cmd.warnings.size(), 1u);
  EXPECT_EQ(cmd.warnings[0].rfind("vLLM flag --speculative-config={\"method\":\"eagle\"} is not modelled; the prediction ignores it: ", 0),
            0u)
      << cmd.warnings[0];
}

TEST(VllmCommand, MemoryNeutralFlagsAreAcceptedSilently) {
  auto cmd = parse_ok({"vllm", "serve", "m", "--host", "0.0.0.0", "--port", "8000", "--served-model-name", "chat",
                       "--trust-remote-code", "--disable-log-requests", "--api-key", "secret"});
  EXPECT_EQ(cmd.model, "m");
  EXPECT_TRUE(cmd.warnings.empty());
}

// ---- malformed values: exact errors ----

TEST(VllmCommand, NonIntegerMaxNumSeqsIsAnError) {
  EXPECT_EQ(parse_error({"m", "--max-num-seqs", "abc"}), "--max-num-seqs: expected an integer, got 'abc'");
}

TEST(VllmCommand, NonNumericUtilizationIsAnError) {
  EXPECT_EQ(parse_error({"m", "--gpu-memory-utilization", "high"}), "--gpu-memory-utilization: expected a number, got 'high'");
}

TEST(VllmCommand, MaxModelLenWithUnknownSuffixIsAnError) {
  EXPECT_EQ(parse_error({"m", "--max-model-len", "1a"}), "--max-model-len: expected an integer, got '1a'");
}

TEST(VllmCommand, DecimalBeforeBinarySuffixIsAnError) {
  EXPECT_EQ(parse_error({"m", "--max-model-len", "1.5K"}),
            "--max-model-len: expected an integer before the binary suffix K, got '1.5K'");
}

TEST(VllmCommand, ValueFlagAtTheEndIsAnError) {
  EXPECT_EQ(parse_error({"m", "--max-model-len"}), "--max-model-len: expected a value");
}

TEST(VllmCommand, ValueFlagFollowedByAFlagIsAnError) {
  EXPECT_EQ(parse_error({"m", "-tp", "--enforce-eager"}), "-tp: expected a value");
}

TEST(VllmCommand, SecondModelIsAnError) {
  EXPECT_EQ(parse_error({"vllm", "serve", "a", "b"}), "unexpected argument 'b' (the model is already 'a')");
}

TEST(VllmCommand, ModelFlagWithoutValueIsAnError) {
  EXPECT_EQ(parse_error({"--model"}), "--model: expected a model after --model");
}

TEST(VllmCommand, OutOfRangeIntegerIsAnError) {
  EXPECT_EQ(parse_error({"m", "--max-num-seqs", "99999999999"}), "--max-num-seqs: value 99999999999 is out of range");
}

// ---- validate_flags ----

TEST(ValidateFlags, DefaultsAreValid) { EXPECT_TRUE(validate_flags(VllmFlags{}).has_value()); }

TEST(ValidateFlags, UtilizationAboveOneIsRejected) {
  VllmFlags f;
  f.gpu_memory_utilization = 1.5;
  EXPECT_EQ(validate_error(f),
            "--gpu-memory-utilization: must be in (0, 1], got 1.5000 (it is a fraction of the GPU's total memory, e.g. 0.9)");
}

TEST(ValidateFlags, UtilizationZeroIsRejected) {
  VllmFlags f;
  f.gpu_memory_utilization = 0;
  EXPECT_EQ(validate_error(f),
            "--gpu-memory-utilization: must be in (0, 1], got 0.0000 (it is a fraction of the GPU's total memory, e.g. 0.9)");
}

TEST(ValidateFlags, UtilizationOneIsAccepted) {
  VllmFlags f;
  f.gpu_memory_utilization = 1.0;
  EXPECT_TRUE(validate_flags(f).has_value());
}

TEST(ValidateFlags, NegativeMaxModelLenIsRejected) {
  VllmFlags f;
  f.max_model_len = -5;
  EXPECT_EQ(validate_error(f), "--max-model-len: must be a positive number of tokens (or auto / -1), got -5");
}

TEST(ValidateFlags, ZeroTensorParallelSizeIsRejected) {
  VllmFlags f;
  f.tensor_parallel_size = 0;
  EXPECT_EQ(validate_error(f), "--tensor-parallel-size: must be a positive integer, got 0");
}

TEST(ValidateFlags, ZeroMaxNumSeqsIsRejected) {
  VllmFlags f;
  f.max_num_seqs = 0;
  EXPECT_EQ(validate_error(f), "--max-num-seqs: must be a positive integer, got 0");
}

TEST(ValidateFlags, ZeroBlockSizeIsRejected) {
  VllmFlags f;
  f.block_size = 0;
  EXPECT_EQ(validate_error(f), "--block-size: must be a positive integer, got 0");
}

TEST(ValidateFlags, ZeroKvCacheMemoryIsRejected) {
  VllmFlags f;
  f.kv_cache_memory_bytes = 0;
  EXPECT_EQ(validate_error(f), "--kv-cache-memory-bytes: must be a positive size");
}

TEST(ValidateFlags, ZeroGpuBlocksOverrideIsRejected) {
  VllmFlags f;
  f.num_gpu_blocks_override = 0;
  EXPECT_EQ(validate_error(f), "--num-gpu-blocks-override: must be a positive integer, got 0");
}

TEST(ValidateFlags, UnknownKvCacheDtypeIsRejected) {
  VllmFlags f;
  f.kv_cache_dtype = "fp4";
  EXPECT_EQ(validate_error(f),
            "--kv-cache-dtype: expected one of auto, fp8, fp8_e4m3, fp8_e5m2, fp8_inc, fp8_ds_mla, bfloat16, float16, half, "
            "int8_per_token_head, fp8_per_token_head or nvfp4, got 'fp4'");
}

TEST(ValidateFlags, UnknownDtypeIsRejected) {
  VllmFlags f;
  f.dtype = "bf16";
  EXPECT_EQ(validate_error(f), "--dtype: expected one of auto, half, float16, bfloat16, float or float32, got 'bf16'");
}

// ---- VllmVersion::parse ----

TEST(VllmVersionParse, PlainRelease) {
  auto v = VllmVersion::parse("0.19.0");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, (VllmVersion{0, 19, 0}));
  EXPECT_EQ(v->to_string(), "0.19.0");
}

TEST(VllmVersionParse, LeadingVAndFourthComponent) {
  auto v = VllmVersion::parse("v0.10.1.1");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, (VllmVersion{0, 10, 1, 1}));
  EXPECT_EQ(v->to_string(), "0.10.1.1");
}

TEST(VllmVersionParse, PostRelease) {
  auto v = VllmVersion::parse("0.6.4.post1");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, (VllmVersion{0, 6, 4, 0, 1}));
  EXPECT_EQ(v->to_string(), "0.6.4.post1");
  EXPECT_GT(*v, (VllmVersion{0, 6, 4}));
}

TEST(VllmVersionParse, LocalSuffixIsDropped) {
  EXPECT_EQ(VllmVersion::parse("0.11.0+cu128"), (VllmVersion{0, 11, 0}));
}

TEST(VllmVersionParse, ReleaseCandidateKeepsItsNumbers) {
  EXPECT_EQ(VllmVersion::parse("0.11.0rc1"), (VllmVersion{0, 11, 0}));
}

TEST(VllmVersionParse, TwoComponentsAreEnough) { EXPECT_EQ(VllmVersion::parse("0.11"), (VllmVersion{0, 11, 0})); }

TEST(VllmVersionParse, WordIsRejected) {
  auto v = VllmVersion::parse("latest");
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().to_string(), "--vllm-version: expected a vLLM version like 0.19.0, v0.10.1.1 or 0.6.4.post1, got 'latest'");
}

TEST(VllmVersionParse, SingleNumberIsRejected) { EXPECT_FALSE(VllmVersion::parse("1").has_value()); }

TEST(VllmVersionParse, EmptyIsRejected) { EXPECT_FALSE(VllmVersion::parse("").has_value()); }

TEST(VllmVersionParse, FiveComponentsAreRejected) { EXPECT_FALSE(VllmVersion::parse("0.1.2.3.4").has_value()); }

TEST(VllmVersionParse, LetterInAComponentIsRejected) { EXPECT_FALSE(VllmVersion::parse("0.x.1").has_value()); }

TEST(VllmVersionEras, V1EngineFromV08) {
  EXPECT_FALSE((VllmVersion{0, 7, 3}).is_v1_engine());
  EXPECT_TRUE((VllmVersion{0, 8, 0}).is_v1_engine());
}

TEST(VllmVersionEras, GraphEstimateByDefaultFromV021) {
  EXPECT_FALSE((VllmVersion{0, 20, 2}).estimates_cuda_graphs_by_default());
  EXPECT_TRUE((VllmVersion{0, 21, 0}).estimates_cuda_graphs_by_default());
}

// --attention-config as JSON, as one dotted field (vLLM's FlexibleArgumentParser form, with either
// spelling of the field), and the YAML form a config file turns into JSON text.
TEST(VllmCommand, AttentionConfigFp4IndexerCache) {
  EXPECT_EQ(parse_ok({"--attention-config", R"({"use_fp4_indexer_cache": true})"}).flags.use_fp4_indexer_cache, true);
  EXPECT_EQ(parse_ok({"--attention_config.use_fp4_indexer_cache=True"}).flags.use_fp4_indexer_cache, true);
  EXPECT_EQ(parse_ok({"--attention-config.use-fp4-indexer-cache", "false"}).flags.use_fp4_indexer_cache, false);
  EXPECT_EQ(parse_ok({"--attention-config.use_fp4_indexer_cache", "--max-num-seqs", "8"}).flags.use_fp4_indexer_cache, true);
  VllmCommand other = parse_ok({"--attention-config", R"({"backend": "FLASHINFER", "use_fp4_indexer_cache": false})"});
  EXPECT_EQ(other.flags.use_fp4_indexer_cache, false);
  ASSERT_EQ(other.warnings.size(), 1u);
  EXPECT_NE(other.warnings[0].find("attention_config.backend"), std::string::npos);
  EXPECT_NE(parse_error({"--attention-config", "{use_fp4_indexer_cache: true"}).find("expected a JSON object"), std::string::npos);
  EXPECT_NE(parse_error({"--attention-config", R"({"use_fp4_indexer_cache": 3})"}).find("expected true or false"),
            std::string::npos);
  EXPECT_NE(parse_error({"--attention-config"}).find("expected a JSON object"), std::string::npos);
  // LLM(...) passes the dict as Python writes it.
  auto llm = parse_llm_call("LLM(model='deepseek-ai/DeepSeek-V4-Pro', attention_config={'use_fp4_indexer_cache': True})");
  ASSERT_TRUE(llm) << llm.error().to_string();
  EXPECT_EQ(llm->flags.use_fp4_indexer_cache, true);
}

}  // namespace
}  // namespace headroom
