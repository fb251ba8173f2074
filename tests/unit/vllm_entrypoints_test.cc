// The ways vLLM is started besides flags: a Python LLM(...) call, `--config FILE.yaml`, and VLLM_*
// environment variables. Expected defaults come from engine/arg_utils.py get_batch_defaults.
#include <gtest/gtest.h>

#include <fstream>

#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_engine.h"
#include "model_test_support.h"

namespace headroom {
namespace {

TEST(LlmCall, KeywordArgumentsBecomeFlags) {
  auto cmd = parse_llm_call(R"(llm = LLM(model="Qwen/Qwen3-8B", tensor_parallel_size=2,
      gpu_memory_utilization=0.85, max_model_len=8192, enforce_eager=True, kv_cache_dtype='fp8', seed=None,
      cpu_offload_gb=6.5))");
  ASSERT_TRUE(cmd) << cmd.error().to_string();
  EXPECT_EQ(cmd->model, "Qwen/Qwen3-8B");
  EXPECT_EQ(cmd->flags.tensor_parallel_size, 2);
  EXPECT_DOUBLE_EQ(*cmd->flags.gpu_memory_utilization, 0.85);
  EXPECT_EQ(cmd->flags.max_model_len, 8192);
  EXPECT_TRUE(cmd->flags.enforce_eager);
  EXPECT_EQ(cmd->flags.kv_cache_dtype, "fp8");
  EXPECT_DOUBLE_EQ(*cmd->flags.cpu_offload_gb, 6.5);
  EXPECT_EQ(cmd->flags.usage_context, UsageContext::llm_class);
}

TEST(LlmCall, ThePositionalModelAndFalseBooleans) {
  auto cmd = parse_llm_call(R"(LLM("meta-llama/Llama-3.1-8B-Instruct", enable_prefix_caching=False))");
  ASSERT_TRUE(cmd) << cmd.error().to_string();
  EXPECT_EQ(cmd->model, "meta-llama/Llama-3.1-8B-Instruct");
  ASSERT_TRUE(cmd->flags.enable_prefix_caching.has_value());
  EXPECT_FALSE(*cmd->flags.enable_prefix_caching);
}

TEST(LlmCall, StructuredArgumentsAreKeptAsUnmodelledFlags) {
  auto cmd = parse_llm_call(R"(LLM(model="m", compilation_config={"level": 3, "sizes": [1, 2]}, max_num_seqs=64))");
  ASSERT_TRUE(cmd) << cmd.error().to_string();
  EXPECT_EQ(cmd->flags.max_num_seqs, 64);
  ASSERT_EQ(cmd->warnings.size(), 1u);
  EXPECT_NE(cmd->warnings[0].find("--compilation-config"), std::string::npos);
}

TEST(LlmCall, UnclosedCallIsAnErrorWithThePosition) {
  auto cmd = parse_llm_call(R"(LLM(model="m", max_model_len=8192)");
  ASSERT_FALSE(cmd);
  EXPECT_NE(cmd.error().message.find("expected ')'"), std::string::npos) << cmd.error().message;
  EXPECT_NE(cmd.error().where.find("LLM(...) at character"), std::string::npos);
}

TEST(LlmCall, BadValueNamesTheFlag) {
  auto cmd = parse_llm_call(R"(LLM(model="m", max_model_len="long"))");
  ASSERT_FALSE(cmd);
  EXPECT_EQ(cmd.error().where, "--max-model-len");
}

TEST(LlmCall, EnvironmentSetBeforeTheCallIsHonoured) {
  auto cmd = parse_llm_call("import os\nos.environ[\"VLLM_USE_V1\"] = \"0\"\nfrom vllm import LLM\nllm = LLM(model=\"m\")\n");
  ASSERT_TRUE(cmd) << cmd.error().to_string();
  EXPECT_EQ(cmd->flags.use_v1_engine, false);
}

TEST(LlmCall, NoCallIsAnError) { EXPECT_FALSE(parse_llm_call("vllm serve m")); }

// get_batch_defaults: LLM_CLASS on a ≥ 70 GiB non-A100 GPU: 16384 tokens / 1024 sequences;
// on smaller GPUs 8192 / 256 (the server's are 8192 / 1024 and 2048 / 256).
TEST(LlmCall, OfflineDefaultsDifferFromTheServersPerGpu) {
  auto m = catalog_model("meta-llama/Llama-3.1-8B-Instruct");
  ASSERT_TRUE(m);
  VllmFlags f;
  f.max_model_len = 8192;
  f.usage_context = UsageContext::llm_class;
  GpuSetup h100, l4;
  h100.gpu = *GpuCatalog::builtin().find("H100");
  l4.gpu = *GpuCatalog::builtin().find("L4");
  auto p = predict(*m, h100, f, VllmVersion{0, 19, 0});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->settings.max_num_batched_tokens, 16384);
  EXPECT_EQ(p->settings.max_num_seqs, 1024);
  p = predict(*m, l4, f, VllmVersion{0, 19, 0});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->settings.max_num_batched_tokens, 8192);
  EXPECT_EQ(p->settings.max_num_seqs, 256);
}

TEST(ConfigFile, KeysBecomeFlagsAndTheCommandLineWins) {
  test_support::TempDir dir;
  auto path = dir.path() / "serve.yaml";
  test_support::write_bytes(path,
                            "model: Qwen/Qwen3-8B\n"
                            "tensor-parallel-size: 2\n"
                            "max_model_len: 16384\n"
                            "enforce-eager: true\n"
                            "enable-prefix-caching: false\n"
                            "port: 8000\n"
                            "gpu-memory-utilization: 0.8\n");
  auto cmd = parse_vllm_command({"vllm", "serve", "--config", path.string(), "--gpu-memory-utilization", "0.7"});
  ASSERT_TRUE(cmd) << cmd.error().to_string();
  EXPECT_EQ(cmd->model, "Qwen/Qwen3-8B");
  EXPECT_EQ(cmd->flags.tensor_parallel_size, 2);
  EXPECT_EQ(cmd->flags.max_model_len, 16384);
  EXPECT_TRUE(cmd->flags.enforce_eager);
  EXPECT_FALSE(*cmd->flags.enable_prefix_caching);
  EXPECT_DOUBLE_EQ(*cmd->flags.gpu_memory_utilization, 0.7);
  EXPECT_TRUE(cmd->warnings.empty());
}

TEST(ConfigFile, APositionalModelWinsOverTheFilesModel) {
  test_support::TempDir dir;
  auto path = dir.path() / "c.yaml";
  test_support::write_bytes(path, "model: from-file\nmax-num-seqs: 32\n");
  auto cmd = parse_vllm_command({"vllm", "serve", "from-cli", "--config=" + path.string()});
  ASSERT_TRUE(cmd) << cmd.error().to_string();
  EXPECT_EQ(cmd->model, "from-cli");
  EXPECT_EQ(cmd->flags.max_num_seqs, 32);
}

TEST(ConfigFile, InvalidYamlNamesFileLineAndColumn) {
  auto args = config_file_args("max-model-len: [1, 2\n", "serve.yaml");
  ASSERT_FALSE(args);
  EXPECT_EQ(args.error().where.rfind("serve.yaml:", 0), 0u) << args.error().where;
}

TEST(ConfigFile, TopLevelMustBeAMapping) {
  auto args = config_file_args("- a\n- b\n", "serve.yaml");
  ASSERT_FALSE(args);
  EXPECT_NE(args.error().message.find("expected a mapping"), std::string::npos);
}

TEST(ConfigFile, MissingFileIsAnError) { EXPECT_FALSE(parse_vllm_command({"vllm", "serve", "--config", "/nonexistent/x.yaml"})); }

TEST(VllmEnv, AssignmentsBeforeTheCommandSetTheMemoryVariables) {
  auto cmd = parse_vllm_command({"VLLM_USE_V1=0", "VLLM_ATTENTION_BACKEND=FLASHINFER", "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
                                 "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0", "vllm", "serve", "m"});
  ASSERT_TRUE(cmd) << cmd.error().to_string();
  EXPECT_EQ(cmd->flags.use_v1_engine, false);
  EXPECT_EQ(cmd->flags.attention_backend, "FLASHINFER");
  EXPECT_TRUE(cmd->flags.allow_long_max_model_len);
  EXPECT_EQ(cmd->flags.estimate_cuda_graphs, false);
}

TEST(VllmEnv, MalformedBooleanIsAnErrorNamingTheVariable) {
  VllmFlags f;
  auto r = apply_vllm_env(f, "VLLM_USE_V1", "maybe");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "VLLM_USE_V1");
  auto other = apply_vllm_env(f, "HF_HOME", "/x");
  ASSERT_TRUE(other);
  EXPECT_FALSE(*other);
}

// VLLM_USE_V1=0 on v0.10 runs the V0 engine: no sampler warm-up, V0 batch defaults (256 sequences).
TEST(VllmEnv, UseV1ZeroSelectsTheV0EngineOnV010) {
  auto m = catalog_model("meta-llama/Llama-3.1-8B-Instruct");
  ASSERT_TRUE(m);
  GpuSetup h100;
  h100.gpu = *GpuCatalog::builtin().find("H100");
  VllmFlags f;
  f.max_model_len = 8192;
  auto v1 = predict(*m, h100, f, VllmVersion{0, 10, 0});
  f.use_v1_engine = false;
  auto v0 = predict(*m, h100, f, VllmVersion{0, 10, 0});
  ASSERT_TRUE(v1 && v0);
  EXPECT_EQ(v1->settings.max_num_seqs, 1024);
  EXPECT_EQ(v0->settings.max_num_seqs, 256);
  EXPECT_EQ(v0->version, (VllmVersion{0, 10, 0}));
}

// From v0.11 vLLM has only the V1 engine: VLLM_USE_V1=0 changes nothing, and check says so instead
// of staying silent.
TEST(VllmEnv, UseV1ZeroOnAV1OnlyVersionIsNamedAndChangesNothing) {
  auto m = catalog_model("meta-llama/Llama-3.1-8B-Instruct");
  ASSERT_TRUE(m);
  GpuSetup h100;
  h100.gpu = *GpuCatalog::builtin().find("H100");
  VllmFlags f;
  f.max_model_len = 8192;
  auto plain = predict(*m, h100, f, VllmVersion{0, 19, 0});
  f.use_v1_engine = false;
  auto v0 = predict(*m, h100, f, VllmVersion{0, 19, 0});
  ASSERT_TRUE(plain && v0);
  EXPECT_EQ(v0->kv_cache_tokens, plain->kv_cache_tokens);
  bool named = false;
  for (const auto& n : v0->notes) named = named || n.find("VLLM_USE_V1=0 has no V0 engine") != std::string::npos;
  EXPECT_TRUE(named);
  for (const auto& n : plain->notes) EXPECT_EQ(n.find("VLLM_USE_V1"), std::string::npos) << n;
}

// vLLM 0.8.0-0.10.1 on a GPU below compute capability 8.0 (engine/arg_utils.py
// _is_v1_supported_oracle): the V0 engine runs, so V0's defaults apply (without chunked prefill,
// max_num_batched_tokens = max(max_model_len, 2048): the profile runs the whole 10,000 tokens);
// v0.10.2 runs V1 there (#23614). An AMD GPU is not CUDA and keeps V1.
TEST(VllmEnv, BelowAmpereVersionsUpTo0101RunTheV0Engine) {
  auto m = catalog_model("Qwen/Qwen3-4B");
  ASSERT_TRUE(m);
  GpuSetup turing;
  turing.gpu = *GpuCatalog::builtin().find("T4");
  VllmFlags f;
  f.max_model_len = 10000;
  f.max_num_seqs = 1;
  f.dtype = "float16";
  auto v085 = predict(*m, turing, f, VllmVersion{0, 8, 5});
  auto v0101 = predict(*m, turing, f, VllmVersion{0, 10, 1});
  auto v0102 = predict(*m, turing, f, VllmVersion{0, 10, 2});
  ASSERT_TRUE(v085 && v0101 && v0102);
  EXPECT_EQ(v085->settings.max_num_batched_tokens, 10000);
  EXPECT_EQ(v0101->settings.max_num_batched_tokens, 10000);
  EXPECT_EQ(v0102->settings.max_num_batched_tokens, 2048);
  bool named = false;
  for (const auto& n : v085->notes)
    named = named || n.find("Compute Capability < 8.0 is not supported by the V1 Engine. Falling back to V0.") != std::string::npos;
  EXPECT_TRUE(named);
  for (const auto& n : v0102->notes) EXPECT_EQ(n.find("Falling back to V0"), std::string::npos) << n;

  GpuSetup ampere;
  ampere.gpu = *GpuCatalog::builtin().find("A10");
  auto a10 = predict(*m, ampere, f, VllmVersion{0, 8, 5});
  ASSERT_TRUE(a10);
  EXPECT_EQ(a10->settings.max_num_batched_tokens, 2048);
}

// With VLLM_USE_V1=1 the oracle raises instead of falling back: vLLM's NotImplementedError text.
TEST(VllmEnv, UseV1OneBelowAmpereIsRefusedWithVllmsMessage) {
  auto m = catalog_model("Qwen/Qwen3-4B");
  ASSERT_TRUE(m);
  GpuSetup turing;
  turing.gpu = *GpuCatalog::builtin().find("T4");
  VllmFlags f;
  f.max_model_len = 8192;
  f.use_v1_engine = true;
  auto refused = predict(*m, turing, f, VllmVersion{0, 9, 2});
  ASSERT_TRUE(refused);
  ASSERT_FALSE(refused->starts);
  ASSERT_TRUE(refused->failure.has_value());
  EXPECT_EQ(refused->failure->phase, "config");
  EXPECT_EQ(refused->failure->message, "VLLM_USE_V1=1 is not supported with Compute Capability < 8.0.");
  auto later = predict(*m, turing, f, VllmVersion{0, 10, 2});
  ASSERT_TRUE(later);
  EXPECT_TRUE(later->starts);
}

// "No Fp8 KV cache so far" (the same oracle, v0.8.0-v0.10.1): an fp8 KV cache stays on V1 only
// where FlashAttention 3 reads it (Hopper, v0.8.2+ by #15191, no other VLLM_ATTENTION_BACKEND);
// elsewhere the run goes to V0, whose defaults give 256 sequences instead of V1's 1,024 on an H100.
// The A100 without fp8 stays on V1 (VllmEnv.BelowAmpere... covers the plain case).
TEST(VllmEnv, Fp8KvCacheOutsideFlashAttention3RunsTheV0Engine) {
  auto m = catalog_model("meta-llama/Llama-3.1-8B-Instruct");
  ASSERT_TRUE(m);
  GpuSetup h100, a100;
  h100.gpu = *GpuCatalog::builtin().find("H100");
  a100.gpu = *GpuCatalog::builtin().find("A100-80GB");
  VllmFlags f;
  f.max_model_len = 8192;
  f.kv_cache_dtype = "fp8";
  auto fa3 = predict(*m, h100, f, VllmVersion{0, 9, 2});
  auto before_fa3 = predict(*m, h100, f, VllmVersion{0, 8, 1});
  auto ampere = predict(*m, a100, f, VllmVersion{0, 9, 2});
  f.attention_backend = "FLASHINFER";
  auto other_backend = predict(*m, h100, f, VllmVersion{0, 9, 2});
  ASSERT_TRUE(fa3 && before_fa3 && ampere && other_backend);
  EXPECT_EQ(fa3->settings.max_num_seqs, 1024);
  EXPECT_EQ(before_fa3->settings.max_num_seqs, 256);
  // On the A100 both engines default to 256 sequences; V0 without chunked prefill batches the
  // whole 8,192-token length where V1 takes 2,048.
  EXPECT_EQ(ampere->settings.max_num_batched_tokens, 8192);
  EXPECT_EQ(other_backend->settings.max_num_seqs, 256);
  bool named = false;
  for (const auto& n : ampere->notes)
    named = named || n.find("--kv-cache-dtype is not supported by the V1 Engine. Falling back to V0.") != std::string::npos;
  EXPECT_TRUE(named);
  f.attention_backend.reset();
  f.use_v1_engine = true;
  auto refused = predict(*m, a100, f, VllmVersion{0, 9, 2});
  ASSERT_TRUE(refused && refused->failure);
  EXPECT_EQ(refused->failure->message, "VLLM_USE_V1=1 is not supported with --kv-cache-dtype.");
}

}  // namespace
}  // namespace headroom
