// The phase of a shared out-of-memory signature, from evidence in order: vLLM's messages, the vLLM
// frames of the traceback (data/vllm_phase_frames.json), startup lines, the serving logger. The
// frames are those of vLLM's source: v1/worker/gpu_model_runner.py (_dummy_sampler_run,
// capture_model, profile_run, v0.11), worker/model_runner.py (V0 profile_run -> execute_model),
// entrypoints/openai/serving_chat.py; torch's message is CUDACachingAllocator.cpp's template.
#include <gtest/gtest.h>

#include "diagnose/phase_table.h"
#include "headroom/diagnose.h"
#include "unit/diagnose_test_support.h"

using namespace headroom;

namespace {

using test_support::kb;
using test_support::run_text;

std::string frame(const std::string& file, const std::string& function) {
  return "  File \"/usr/local/lib/python3.12/dist-packages/vllm/" + file + "\", line 100, in " + function + "\n";
}

const std::string k_torch_oom =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.74 GiB. GPU 0 has a total capacity of 79.19 GiB of "
    "which 1.02 GiB is free.\n";

}  // namespace

TEST(PhaseTable, BuiltinTableMapsVllmFunctionsToPhases) {
  const PhaseTable& t = PhaseTable::builtin();
  const std::string v1 = "/x/site-packages/vllm/v1/worker/gpu_model_runner.py";
  EXPECT_EQ(t.frame_phase(v1, "_dummy_sampler_run"), "sampler-warmup");
  EXPECT_EQ(t.frame_phase(v1, "capture_model"), "cuda-graph-capture");
  EXPECT_EQ(t.frame_phase(v1, "profile_run"), "profile-run");
  EXPECT_EQ(t.frame_phase("/x/vllm/v1/worker/utils.py", "request_memory"), "startup-free-memory-check");
  EXPECT_EQ(t.frame_phase("/x/vllm/model_executor/model_loader/default_loader.py", "some_helper"), "weights-load");
  EXPECT_EQ(t.frame_phase("/x/lib/python3.12/site-packages/torch/cuda/graphs.py", "__exit__"), "cuda-graph-capture");
}

TEST(PhaseTable, SharedFunctionsAndForeignFramesDecideNothing) {
  const PhaseTable& t = PhaseTable::builtin();
  EXPECT_EQ(t.frame_phase("/x/vllm/v1/worker/gpu_model_runner.py", "_dummy_run"), "");
  EXPECT_EQ(t.frame_phase("/x/site-packages/transformers/modeling_utils.py", "load_model"), "");
  EXPECT_GT(t.rank("sampler-warmup"), t.rank("profile-run"));
  EXPECT_GT(t.rank("profile-run"), t.rank("runtime"));
}

TEST(PhaseEvidence, InnerFrameOfAWarmUpBeatsTheProfileRunAroundIt) {
  // V1 profile_run calls _dummy_sampler_run; the sampler warm-up is the more specific phase.
  auto d = run_text("Traceback (most recent call last):\n" + frame("v1/worker/gpu_worker.py", "determine_available_memory") +
                    frame("v1/worker/gpu_model_runner.py", "profile_run") +
                    frame("v1/worker/gpu_model_runner.py", "_dummy_sampler_run") + k_torch_oom);
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "sampler_warmup_oom");
  EXPECT_EQ(d.primary->phase_evidence, "frame");
  EXPECT_NE(d.primary->phase_basis.find("_dummy_sampler_run"), std::string::npos);
}

TEST(PhaseEvidence, V0ProfileRunCallingExecuteModelIsTheProfileRun) {
  auto d = run_text("Traceback (most recent call last):\n" + frame("worker/worker.py", "determine_num_available_blocks") +
                    frame("worker/model_runner.py", "profile_run") + frame("worker/model_runner.py", "execute_model") +
                    k_torch_oom);
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "profile_run_oom");
}

TEST(PhaseEvidence, CaptureCodeLinesPlaceTheFailureWhenFramesWereCut) {
  auto d = run_text("    with torch.cuda.graph(cudagraph, pool=self.graph_pool):\n    self.cuda_graph.capture_end()\n"
                    "RuntimeError: CUDA error: out of memory\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "cuda_graph_capture_oom");
  EXPECT_EQ(d.primary->phase_evidence, "frame");
}

TEST(PhaseEvidence, VllmMessageBeatsFrames) {
  // "while processing method determine_num_available_blocks" is vLLM's own word on what failed.
  auto d = run_text("ERROR 08-04 16:54:59 [multiproc_worker_utils.py:238] Exception in worker VllmWorkerProcess while "
                    "processing method determine_num_available_blocks.\nTraceback (most recent call last):\n" +
                    frame("model_executor/models/qwen2_5_vl.py", "forward") + k_torch_oom);
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "profile_run_oom");
  EXPECT_EQ(d.primary->phase_evidence, "message");
}

TEST(PhaseEvidence, ServingLoggerMeansRequestsWereServed) {
  auto d = run_text("ERROR 03-19 10:55:18 [serving_chat.py:677] vllm.engine.multiprocessing.MQEngineDeadError: "
                    "OutOfMemoryError('CUDA out of memory. Tried to allocate 128.00 MiB. GPU 0 has a total capacity of "
                    "79.33 GiB of which 16.00 MiB is free.')\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "runtime_oom");
}

TEST(PhaseEvidence, ServingLoggerAloneDecidesWhenNothingElseDoes) {
  auto d = run_text("ERROR 03-19 10:55:18 [serving_completion.py:120] torch.OutOfMemoryError: CUDA out of memory. Tried "
                    "to allocate 2.00 GiB.\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "runtime_oom");
  EXPECT_EQ(d.primary->phase_evidence, "logger");
}

TEST(PhaseEvidence, StartupLinesBelowTheErrorPlaceIt) {
  // A console that shows the newest line first: the capture landmark follows the error.
  auto d = run_text("Error initializing vLLM engine: CUDA out of memory. Tried to allocate 112.00 MiB.\n"
                    "INFO 02-03 03:43:49 model_runner.py:625] Capturing the model for CUDA graphs.\n"
                    "INFO 02-03 03:43:48 llm_engine.py:316] # GPU blocks: 7754, # CPU blocks: 2048\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "cuda_graph_capture_oom");
}

TEST(PhaseEvidence, PrefixedWrappedAndColouredLogIsRead) {
  // docker compose prefix, colour codes, and the error line wrapped at 80 columns, cut mid-word.
  std::string message = "ValueError: Free memory on device (3.22/4.0 GiB) on startup is less than desired GPU memory "
                        "utilization (0.9, 3.6 GiB). Decrease GPU memory utilization or reduce GPU memory used by other "
                        "processes.";
  std::string full = "vllm-1  | ERROR 09-28 15:47:24 [core.py:718] " + message;
  std::string text = "vllm-1  | \x1b[32mINFO\x1b[0m 09-28 15:47:20 [core.py:1] starting\n";
  for (std::size_t at = 0; at < full.size(); at += 80) text += full.substr(at, 80) + "\n";
  auto d = run_text(text);
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "startup_free_memory_insufficient");
  EXPECT_EQ(d.primary->line, 2);
  EXPECT_DOUBLE_EQ(d.primary->facts.at("free_gib"), 3.22);
  EXPECT_DOUBLE_EQ(d.primary->facts.at("requested_gib"), 3.6);
}

TEST(PhaseEvidence, GraphEstimateThatCoversTheKvShortfallIsTheCause) {
  // v0.21+: the estimate is subtracted from the KV budget before the check.
  auto d = run_text("INFO 05-01 10:00:00 [gpu_worker.py:300] Estimated CUDA graph memory: 2.50 GiB\n"
                    "ValueError: To serve at least one request with the model's max seq len (32768), (4.00 GiB KV cache is "
                    "needed, which is larger than the available KV cache memory (2.00 GiB).\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "cuda_graph_estimate_no_kv_cache");
  bool env = false;
  for (const auto& f : d.fixes)
    for (const auto& c : f.changes) env = env || c.second == "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0";
  EXPECT_TRUE(env);
}

TEST(PhaseEvidence, GraphEstimateAloneIsNoFailure) {
  auto d = run_text("INFO 05-01 10:00:00 [gpu_worker.py:300] Estimated CUDA graph memory: 2.50 GiB\n");
  EXPECT_FALSE(d.primary);
}
