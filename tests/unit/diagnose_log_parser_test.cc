#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "headroom/vllm_log.h"

using namespace headroom;

namespace {

LoggedRun parse_file(const std::string& name) {
  std::ifstream in(std::string(HEADROOM_TEST_DATA_DIR) + "/logs/" + name);
  VllmLogParser parser;
  std::string line;
  while (std::getline(in, line)) parser.feed(line);
  return parser.run();
}

}  // namespace

TEST(VllmLogParser, ReadsV1MeasuredTerms) {
  LoggedRun run = parse_file("v1_startup_ok.log");
  EXPECT_DOUBLE_EQ(*run.weights_gib, 12.56);
  EXPECT_DOUBLE_EQ(*run.activation_peak_gib, 0.77);
  EXPECT_DOUBLE_EQ(*run.non_torch_gib, 0.25);
  EXPECT_DOUBLE_EQ(*run.non_kv_total_gib, 13.57);
  EXPECT_DOUBLE_EQ(*run.kv_cache_gib, 61.66);
  EXPECT_EQ(*run.kv_tokens, 126256);
  EXPECT_DOUBLE_EQ(*run.max_concurrency, 15.41);
  EXPECT_EQ(*run.concurrency_len, 8192);
}

TEST(VllmLogParser, ReadsGraphMemoryActualAndEstimated) {
  LoggedRun run = parse_file("v1_startup_ok.log");
  EXPECT_DOUBLE_EQ(*run.cuda_graph_gib, 0.89);
  EXPECT_DOUBLE_EQ(*run.cuda_graph_estimated_gib, 0.84);
}

TEST(VllmLogParser, ReadsFreeAndTotalFromInitSnapshot) {
  LoggedRun run = parse_file("v1_startup_ok.log");
  EXPECT_DOUBLE_EQ(*run.free_at_start_gib, 78.68);
  EXPECT_DOUBLE_EQ(*run.total_gib, 79.19);
}

TEST(VllmLogParser, ReadsVersionModelAndFlagsFromConfigAndArgs) {
  LoggedRun run = parse_file("v1_startup_ok.log");
  EXPECT_EQ(run.version_text, "0.19.0");
  ASSERT_TRUE(run.version);
  EXPECT_EQ(run.version->minor, 19);
  EXPECT_EQ(run.v1_engine, std::optional<bool>(true));
  EXPECT_EQ(run.model, "codellama/CodeLlama-7b-hf");
  EXPECT_EQ(*run.flags.max_model_len, 8192);
  EXPECT_DOUBLE_EQ(*run.flags.gpu_memory_utilization, 0.9);
  EXPECT_EQ(*run.flags.max_num_seqs, 256);
  EXPECT_EQ(*run.flags.tensor_parallel_size, 1);
  EXPECT_EQ(*run.flags.dtype, "bfloat16");
  EXPECT_EQ(*run.flags.kv_cache_dtype, "auto");
  EXPECT_FALSE(run.flags.quantization.has_value());
}

// topk_topp_sampler.py names the sampler's path once per worker; the profile's sampler peak
// follows it, so it is kept like VLLM_USE_FLASHINFER_SAMPLER.
TEST(VllmLogParser, ReadsTheSamplersPath) {
  const auto path = [](const char* line) {
    VllmLogParser parser;
    parser.feed("INFO 09-04 01:28:28 [api_server.py:1805] vLLM API server version 0.10.1.1");
    parser.feed(line);
    return parser.run().flags.use_flashinfer_sampler;
  };
  EXPECT_EQ(path("(EngineCore_0 pid=2881) INFO 09-04 01:29:01 [topk_topp_sampler.py:50] Using FlashInfer for top-p & top-k "
                 "sampling."),
            std::optional<bool>(true));
  EXPECT_EQ(path("(VllmWorker rank=0 pid=7) WARNING 08-16 02:04:30 [topk_topp_sampler.py:59] FlashInfer is not available. "
                 "Falling back to the PyTorch-native implementation of top-p & top-k sampling. For the best performance, "
                 "please install FlashInfer."),
            std::optional<bool>(false));
  EXPECT_EQ(path("INFO 09-04 01:29:02 [gpu_model_runner.py:1985] Loading model from scratch..."), std::nullopt);
}

// The non-default args line names --performance-mode as EngineArgs' field (entrypoints/utils.py
// log_non_default_args); a value vLLM's argparse would not take is not read.
TEST(VllmLogParser, ReadsThePerformanceMode) {
  const auto mode = [](const char* line) {
    VllmLogParser parser;
    parser.feed(line);
    return parser.run().flags.performance_mode;
  };
  EXPECT_EQ(mode("(APIServer pid=1) INFO 03-20 10:00:00 [utils.py:302] non-default args: {'model_tag': 'Qwen/Qwen3-8B', "
                 "'model': 'Qwen/Qwen3-8B', 'performance_mode': 'interactivity'}"),
            std::optional<std::string>("interactivity"));
  EXPECT_EQ(mode("(APIServer pid=1) INFO 03-20 10:00:00 [utils.py:302] non-default args: {'performance_mode': 'fastest'}"),
            std::nullopt);
}

TEST(VllmLogParser, SeesTheEngineStart) {
  LoggedRun run = parse_file("v1_startup_ok.log");
  EXPECT_TRUE(run.engine_started);
  EXPECT_EQ(run.stage, StartupStage::serving);
}

TEST(VllmLogParser, ReadsV0BudgetLinesWithNegativeKv) {
  LoggedRun run = parse_file("v0_no_kv_memory.log");
  EXPECT_DOUBLE_EQ(*run.total_gib, 8.0);
  EXPECT_DOUBLE_EQ(*run.flags.gpu_memory_utilization, 0.7);
  EXPECT_DOUBLE_EQ(*run.requested_gib, 5.6);
  EXPECT_DOUBLE_EQ(*run.weights_gib, 5.20);
  EXPECT_DOUBLE_EQ(*run.activation_peak_gib, 1.42);
  EXPECT_DOUBLE_EQ(*run.kv_cache_gib, -1.05);
  EXPECT_EQ(*run.num_gpu_blocks, 0);
  EXPECT_EQ(run.v1_engine, std::optional<bool>(false));
  EXPECT_FALSE(run.engine_started);
}

TEST(VllmLogParser, ReadsV064ProfileLine) {
  VllmLogParser parser;
  parser.feed("INFO 12-01 10:00:00 worker.py:232] Memory profiling results: total_gpu_memory=23.58GiB "
              "initial_memory_usage=15.34GiB peak_torch_memory=17.06GiB memory_usage_post_profile=15.35GiB "
              "non_torch_memory=0.35GiB kv_cache_size=3.81GiB gpu_memory_utilization=0.90");
  EXPECT_DOUBLE_EQ(*parser.run().total_gib, 23.58);
  EXPECT_DOUBLE_EQ(*parser.run().initial_memory_usage_gib, 15.34);
  EXPECT_DOUBLE_EQ(*parser.run().kv_cache_gib, 3.81);
}

TEST(VllmLogParser, V0BlocksGiveTokensAtBlockSize16) {
  VllmLogParser parser;
  parser.feed("INFO 01-11 15:51:18 llm_engine.py:275] # GPU blocks: 229, # CPU blocks: 512");
  EXPECT_EQ(*parser.run().num_gpu_blocks, 229);
  EXPECT_EQ(*parser.run().kv_tokens, 229 * 16);
}

TEST(VllmLogParser, ReadsMrv2SummaryAndKvCacheMemorySuggestions) {
  VllmLogParser parser;
  parser.feed("INFO 03-01 10:00:00 [gpu_worker.py:400] Free memory on device (77.57/79.11 GiB) on startup. Desired GPU "
              "memory utilization is (0.92, 72.78 GiB). Actual usage is 7.39 GiB for weight, 1.54 GiB for peak "
              "activation, 0.6 GiB for non-torch memory, and 2.04 GiB for CUDAGraph memory. Replace "
              "gpu_memory_utilization config with `--kv-cache-memory=65565989131` (61.06 GiB) to fit into requested "
              "memory, or `--kv-cache-memory=70712017408` (65.86 GiB) to fully utilize gpu memory. Current kv cache "
              "memory in use is 63.25 GiB.");
  const LoggedRun& r = parser.run();
  EXPECT_DOUBLE_EQ(*r.free_at_start_gib, 77.57);
  EXPECT_DOUBLE_EQ(*r.requested_gib, 72.78);
  EXPECT_DOUBLE_EQ(*r.weights_gib, 7.39);
  EXPECT_DOUBLE_EQ(*r.cuda_graph_gib, 2.04);
  EXPECT_EQ(*r.kv_cache_memory_fit_bytes, 65565989131);
  EXPECT_EQ(*r.kv_cache_memory_full_bytes, 70712017408);
}

TEST(VllmLogParser, ChunkedPrefillLineGivesBatchedTokens) {
  VllmLogParser parser;
  parser.feed("INFO 08-01 10:00:00 [config.py:2000] Chunked prefill is enabled with max_num_batched_tokens=2048.");
  EXPECT_EQ(*parser.run().flags.max_num_batched_tokens, 2048);
}

TEST(CleanLogLine, StripsColourAndProcessPrefix) {
  EXPECT_EQ(clean_log_line("(EngineCore_DP0 pid=43) \x1b[1;36mINFO\x1b[0m 03-20 [core.py:1] hello"),
            "INFO 03-20 [core.py:1] hello");
  EXPECT_EQ(clean_log_line("(VllmWorker rank=3 pid=1090) ERROR x"), "ERROR x");
  EXPECT_EQ(clean_log_line("[rank0]:   File \"a.py\""), "File \"a.py\"");
}

TEST(ParseLoggedVersion, DropsPreReleaseParts) {
  auto v = parse_logged_version("0.11.1rc6.dev35");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 0);
  EXPECT_EQ(v->minor, 11);
  EXPECT_EQ(v->patch, 1);
  EXPECT_FALSE(parse_logged_version("main").has_value());
}

// A setting whose value is not a number ("INFO" reads as infinity with strtod, and 1e30 does not
// fit an integer) is left unset, never converted (found by fuzz_vllm_log).
TEST(VllmLogParser, NonNumericOrHugeSettingsAreLeftUnset) {
  for (const char* value : {"INFO", "inf", "nan", "1e30"}) {
    SCOPED_TRACE(value);
    VllmLogParser parser;
    parser.feed(std::string("INFO 10-25 10:00:00 Initializing a V1 LLM engine (v0.11.0) with config: model='Qwen/Qwen2.5-7B-Instruct', "
                            "max_seq_len=") + value + ", tensor_parallel_size=1, enforce_eager=False");
    LoggedRun run = parser.run();
    EXPECT_FALSE(run.flags.max_model_len.has_value());
    EXPECT_EQ(run.flags.tensor_parallel_size, 1);
  }
}
