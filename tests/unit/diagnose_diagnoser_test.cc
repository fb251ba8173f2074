#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "headroom/diagnose.h"
#include "unit/diagnose_test_support.h"

using namespace headroom;

namespace {

using test_support::kb;
using test_support::run_file;
using test_support::run_text;

const FixSuggestion* fix_setting(const Diagnosis& d, const std::string& flag) {
  for (const auto& f : d.fixes)
    for (const auto& c : f.changes)
      if (c.first == flag) return &f;
  return nullptr;
}

}  // namespace

TEST(Diagnoser, HealthyStartupHasNoFailure) {
  Diagnosis d = run_file("v1_startup_ok.log");
  EXPECT_FALSE(d.primary.has_value());
  EXPECT_TRUE(d.run.engine_started);
}

TEST(Diagnoser, V1KvCheckIsKvCacheInsufficientWithItsNumbers) {
  Diagnosis d = run_file("v1_kv_insufficient.log");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "kv_cache_insufficient");
  EXPECT_EQ(d.primary->phase, "kv-cache-alloc");
  EXPECT_EQ(d.primary->line, 8);
  EXPECT_DOUBLE_EQ(d.primary->facts.at("max_model_len"), 250000);
  EXPECT_DOUBLE_EQ(d.primary->facts.at("needed_gib"), 1.8);
  EXPECT_DOUBLE_EQ(d.primary->facts.at("available_gib"), 0.35);
  EXPECT_DOUBLE_EQ(d.primary->facts.at("estimated_max_model_len"), 856);
}

TEST(Diagnoser, WrapperMessageIsOnlyASecondaryFinding) {
  Diagnosis d = run_file("v1_kv_insufficient.log");
  ASSERT_EQ(d.findings.size(), 1u);
  EXPECT_EQ(d.findings[0].error_class, "engine_failure_unexplained");
}

TEST(Diagnoser, KvInsufficientFixUsesVllmsEstimate) {
  Diagnosis d = run_file("v1_kv_insufficient.log");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes[0].changes, (std::vector<std::pair<std::string, std::string>>{{"--max-model-len", "856"}}));
  EXPECT_EQ(d.fixes[0].command, "vllm serve Qwen/Qwen3-8B --max-model-len 856");
}

// A multimodal run whose KV cache fell short after the encoder's profile pass (the log's "Encoder
// cache will be initialized ..." line): --skip-mm-profiling (#22950, v0.10.2) is among the fixes,
// not on a version without the flag, and not when the run already skipped the pass.
TEST(Diagnoser, MultimodalKvShortfallOffersSkippingTheProfilePass) {
  const auto log = [](const std::string& version, const std::string& args) {
    return "(APIServer pid=1) INFO 05-02 10:00:00 [utils.py:253] non-default args: {'model': 'Qwen/Qwen2.5-VL-7B-Instruct'" +
           args + "}\n"
           "(EngineCore pid=90) INFO 05-02 10:00:01 [core.py:77] Initializing a V1 LLM engine (v" + version +
           ") with config: model='Qwen/Qwen2.5-VL-7B-Instruct', dtype=torch.bfloat16, max_seq_len=128000, "
           "tensor_parallel_size=1\n"
           "(EngineCore pid=90) INFO 05-02 10:00:30 [gpu_model_runner.py:2602] Model loading took 15.6 GiB and 20.1 seconds\n"
           "(EngineCore pid=90) INFO 05-02 10:00:31 [gpu_model_runner.py:3344] Encoder cache will be initialized with a "
           "budget of 16384 tokens, and profiled with 1 image items of the maximum feature size.\n"
           "(EngineCore pid=90) INFO 05-02 10:00:40 [gpu_worker.py:298] Available KV cache memory: 4.71 GiB\n"
           "(EngineCore pid=90) ValueError: To serve at least one request with the model's max seq len (128000), (6.84 GiB "
           "KV cache is needed, which is larger than the available KV cache memory (4.71 GiB). Based on the available "
           "memory, the estimated maximum model length is 88000. Try increasing `gpu_memory_utilization` or decreasing "
           "`max_model_len` when initializing the engine.\n";
  };
  Diagnosis d = run_text(log("0.11.0", ""));
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "kv_cache_insufficient");
  EXPECT_TRUE(fix_setting(d, "--skip-mm-profiling"));
  EXPECT_FALSE(fix_setting(run_text(log("0.10.1", "")), "--skip-mm-profiling"));
  EXPECT_FALSE(fix_setting(run_text(log("0.11.0", ", 'skip_mm_profiling': True")), "--skip-mm-profiling"));
}

// Numbers no real log has (found by fuzz_vllm_log): fixes are still planned, with whole numbers
// clamped to their type instead of an undefined cast.
TEST(Diagnoser, AbsurdNumbersInTheLogStillGiveDefinedFixes) {
  Diagnosis d = run_text(
      "(EngineCore pid=90) ValueError: To serve at least one request with the model's max seq len "
      "(25000000000000000000000000000000000000000000000000000000000000000000), (1.8 GiB KV cache is needed, which is "
      "larger than the available KV cache memory (0.35 GiB). Based on the available memory, the estimated maximum model "
      "length is 1e400. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
      "engine.\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "kv_cache_insufficient");
}

TEST(Diagnoser, KvInsufficientDeadEndsIncludeLoweringUtilization) {
  Diagnosis d = run_file("v1_kv_insufficient.log");
  bool found = false;
  for (const auto& de : d.dead_ends) found = found || de.action == "Lower --gpu-memory-utilization";
  EXPECT_TRUE(found);
}

TEST(Diagnoser, V0NegativeKvIsNoKvCacheMemoryAtTheErrorLine) {
  Diagnosis d = run_file("v0_no_kv_memory.log");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "no_kv_cache_memory");
  EXPECT_EQ(d.primary->line, 8);
  EXPECT_EQ(d.primary->severity, Severity::fatal);
}

TEST(Diagnoser, NoKvFixRaisesUtilizationFromMeasuredTerms) {
  Diagnosis d = run_file("v0_no_kv_memory.log");
  const FixSuggestion* f = fix_setting(d, "--gpu-memory-utilization");
  ASSERT_NE(f, nullptr);
  // (5.20 + 1.42 + 0.03) / 8.00 + 0.02 = 0.851 → 0.86
  EXPECT_EQ(f->changes[0].second, "0.86");
}

TEST(Diagnoser, NoKvWithoutErrorLineIsStillFound) {
  Diagnosis d = run_text("INFO 01-01 executor_base.py:111] # cuda blocks: 0, # CPU blocks: 4681\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "no_kv_cache_memory");
  EXPECT_EQ(d.primary->severity, Severity::warning);
}

TEST(Diagnoser, OomPhaseComesFromTracebackFrames) {
  Diagnosis d = run_file("v1_profile_oom.log");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "profile_run_oom");
  EXPECT_EQ(d.primary->phase, "profile-run");
  EXPECT_DOUBLE_EQ(d.primary->facts.at("tried_gib"), 192.0);
  EXPECT_DOUBLE_EQ(d.primary->facts.at("total_gib"), 127.0);
}

TEST(Diagnoser, OomPhaseComesFromTheLastStartupLandmark) {
  Diagnosis d = run_text(
      "INFO 01-01 [gpu_model_runner.py:1] Model loading took 14.25 GiB and 20.1 seconds\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.55 GiB "
      "of which 1.00 GiB is free.\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "profile_run_oom");
}

TEST(Diagnoser, OomWithoutContextIsPhaseUnknown) {
  Diagnosis d = run_text("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 816.00 MiB. GPU 0 has a total "
                         "capacity of 61.35 GiB of which 655.29 MiB is free.\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "oom_phase_unknown");
  EXPECT_EQ(d.primary->phase, "unknown");
  EXPECT_NEAR(d.primary->facts.at("tried_gib"), 816.0 / 1024, 1e-9);
}

TEST(Diagnoser, SamplerMessageWinsOverTheTorchOom) {
  Diagnosis d = run_file("v1_sampler_oom.log");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "sampler_warmup_oom");
  EXPECT_DOUBLE_EQ(d.primary->facts.at("num_reqs"), 1024);
  const FixSuggestion* f = fix_setting(d, "--max-num-seqs");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->changes[0].second, "256");
}

TEST(Diagnoser, PrivatePoolsPlaceAnOomAfterGraphCapture) {
  Diagnosis d = run_text(
      "INFO 01-01 [gpu_model_runner.py:1] Model loading took 14.25 GiB and 20.1 seconds\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.74 GiB. GPU 0 has a total capacity of 79.19 GiB "
      "of which 1.02 GiB is free. Of the allocated memory 75.00 GiB is allocated by PyTorch, with 0.50 GiB allocated in "
      "private pools (e.g., CUDA Graphs), and 0.20 GiB is reserved by PyTorch but unallocated.\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "sampler_warmup_oom");
}

TEST(Diagnoser, StartupCheckFixFitsTheFreeMemory) {
  Diagnosis d = run_file("startup_check.log");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "startup_free_memory_insufficient");
  EXPECT_EQ(d.primary->text_facts.at("device"), "cuda:0");
  const FixSuggestion* f = fix_setting(d, "--gpu-memory-utilization");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->changes[0].second, "0.94");  // floor((22.76 - 0.1) / 24.0, 2)
}

TEST(Diagnoser, LookAlikeIsNeverOutOfMemory) {
  Diagnosis d = run_file("illegal_access.log");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "illegal_memory_access");
  EXPECT_FALSE(d.primary->out_of_memory);
  EXPECT_TRUE(d.primary->look_alike);
}

TEST(Diagnoser, RepeatedFailuresAreCountedOnce) {
  std::string line = "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`.\n";
  Diagnosis d = run_text(line + line + line);
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->occurrences, 3);
  EXPECT_TRUE(d.findings.empty());
}

TEST(Diagnoser, TpNotDivisibleSuggestsADivisor) {
  Diagnosis d = run_text("ValueError: Total number of attention heads (52) must be divisible by tensor parallel size (3).\n");
  const FixSuggestion* f = fix_setting(d, "--tensor-parallel-size");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->changes[0].second, "2");
}

TEST(ServeCommand, AppliesChangesToTheLoggedFlags) {
  LoggedRun run;
  run.model = "m";
  run.flags.max_model_len = 32768;
  run.flags.tensor_parallel_size = 2;
  EXPECT_EQ(serve_command(run, {{"--max-model-len", "8192"}, {"--enforce-eager", ""}}),
            "vllm serve m --tensor-parallel-size 2 --max-model-len 8192 --enforce-eager");
}

// Regression: the free memory in vLLM's startup-check message is measured after vLLM's own CUDA
// context, so the engine must not subtract the context again (it used to, and found no fix).
TEST(Diagnoser, StartupCheckFixComesFromThePredictionEngine) {
  std::ifstream in(std::string(HEADROOM_TEST_DATA_DIR) + "/logs/startup_check.log");
  std::stringstream ss;
  ss << in.rdbuf();
  auto source = memory_source(ss.str(), "startup_check.log");
  auto engine = prediction_fix_engine();
  DiagnoseOptions options;
  options.fix.engine = engine.get();
  auto result = diagnose(*source, kb(), options);
  ASSERT_TRUE(result) << result.error().to_string();
  Diagnosis d = *result;
  ASSERT_TRUE(d.primary);
  const FixSuggestion* engine_fix = nullptr;
  for (const auto& f : d.fixes)
    if (f.basis == "prediction engine") engine_fix = &f;
  ASSERT_NE(engine_fix, nullptr);
  ASSERT_EQ(engine_fix->changes.size(), 1u);
  EXPECT_EQ(engine_fix->changes[0].first, "--gpu-memory-utilization");
  double util = std::stod(engine_fix->changes[0].second);
  // 22.76 GiB free of 24 GiB: the budget must stay under the free memory, and the model
  // (Qwen3-8B, ~15.3 GiB of weights) still needs room for one 32k request.
  EXPECT_LE(util * 24.0, 22.76);
  EXPECT_GT(util, 0.7);
}

// config/model.py _verify_quantization's and weight_utils.py get_quant_config's messages: config
// errors, not memory, with the methods named and the knowledge base's way out.
TEST(Diagnoser, QuantizationFlagErrorsAreConfigFailuresWithTheirMethods) {
  Diagnosis mismatch = run_text(
      "INFO 11-20 10:01:02 [utils.py:328] non-default args: {'model': 'Qwen/Qwen2.5-7B-Instruct-AWQ', 'quantization': 'fp8'}\n"
      "  Value error, Quantization method specified in the model config (awq) does not match the quantization method "
      "specified in the `quantization` argument (fp8). [type=value_error]\n");
  ASSERT_TRUE(mismatch.primary);
  EXPECT_EQ(mismatch.primary->error_class, "quantization_mismatch");
  EXPECT_EQ(mismatch.primary->phase, "config");
  EXPECT_FALSE(mismatch.primary->out_of_memory);
  EXPECT_EQ(mismatch.primary->text_facts.at("checkpoint_method"), "awq");
  EXPECT_EQ(mismatch.primary->text_facts.at("requested_method"), "fp8");
  ASSERT_FALSE(mismatch.fixes.empty());
  EXPECT_NE(mismatch.fixes[0].action.find("Drop --quantization"), std::string::npos) << mismatch.fixes[0].action;

  Diagnosis missing = run_text("ValueError: Cannot find the config file for awq\n");
  ASSERT_TRUE(missing.primary);
  EXPECT_EQ(missing.primary->error_class, "quantization_config_missing");
  EXPECT_EQ(missing.primary->text_facts.at("requested_method"), "awq");
}

// distributed/utils.py get_pp_indices' three messages.
TEST(Diagnoser, LayerPartitionErrorsAreConfigFailures) {
  Diagnosis count = run_text("ValueError: len(partitions)=3 does not match pp_size=2.\n");
  ASSERT_TRUE(count.primary);
  EXPECT_EQ(count.primary->error_class, "pp_layer_partition_invalid");
  EXPECT_FALSE(count.primary->out_of_memory);
  Diagnosis sum = run_text("ValueError: sum(partitions)=79 does not match num_hidden_layers=80.\n");
  ASSERT_TRUE(sum.primary);
  EXPECT_EQ(sum.primary->error_class, "pp_layer_partition_invalid");
  Diagnosis text = run_text("ValueError: Invalid partition string: 40,a\n");
  ASSERT_TRUE(text.primary);
  EXPECT_EQ(text.primary->error_class, "pp_layer_partition_invalid");
}
