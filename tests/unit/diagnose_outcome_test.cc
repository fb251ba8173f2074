// What a log says as a whole (failure, started, incomplete), UTF-16 logs, and the taxonomy class
// and cause of findings, including the host-memory causes.
#include <gtest/gtest.h>

#include <algorithm>

#include "diagnose_test_support.h"

namespace headroom {
namespace {

using test_support::run_text;

TEST(LogOutcome, ReadyLineMeansStarted) {
  auto d = run_text("INFO 05-21 13:04:20 [api_server.py:1000] Starting vLLM API server on http://0.0.0.0:8000\n");
  EXPECT_FALSE(d.primary);
  EXPECT_EQ(outcome_of(d), LogOutcome::started);
  EXPECT_EQ(to_json(d)["outcome"], "started");
}

TEST(LogOutcome, LogEndingBeforeReadyIsIncomplete) {
  auto d = run_text("INFO 05-21 13:04:20 [gpu_model_runner.py:1000] Starting to load model meta-llama/Llama-3.1-8B...\n"
                    "INFO 05-21 13:04:31 [gpu_model_runner.py:1100] Model loading took 14.99 GiB memory and 11.42 seconds\n");
  EXPECT_FALSE(d.primary);
  EXPECT_EQ(outcome_of(d), LogOutcome::incomplete);
  EXPECT_EQ(to_json(d)["outcome"], "incomplete");
  EXPECT_EQ(d.run.stage, StartupStage::weights_loaded);
}

TEST(LogOutcome, FailureWins) {
  auto d = run_text("ValueError: Too large swap space. 4.00 GiB out of the 4.30 GiB total CPU memory is allocated for the swap space.\n");
  EXPECT_EQ(outcome_of(d), LogOutcome::failure);
}

std::string utf16(const std::string& ascii, bool big_endian, bool bom) {
  std::string out;
  if (bom) out += big_endian ? std::string("\xFE\xFF", 2) : std::string("\xFF\xFE", 2);
  for (char c : ascii) {
    if (big_endian) out += std::string(1, '\0') + c;
    else out += std::string(1, c) + '\0';
  }
  return out;
}

const char* k_swap_line =
    "ValueError: Too large swap space. 4.00 GiB out of the 4.30 GiB total CPU memory is allocated for the swap space.\r\n";

TEST(Utf16Log, PowerShellRedirectIsDecoded) {
  auto d = run_text(utf16(k_swap_line, false, true));
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(reported_class(*d.primary), "host_memory_exhausted");
  EXPECT_EQ(d.primary->line, 1);
  ASSERT_FALSE(d.warnings.empty());
  EXPECT_EQ(d.warnings.back(), "the log is UTF-16 (little-endian, as PowerShell's '>' writes it); it was read as UTF-8");
}

TEST(Utf16Log, BigEndianAndNoByteOrderMark) {
  auto be = run_text(utf16(k_swap_line, true, true));
  ASSERT_TRUE(be.primary);
  EXPECT_EQ(reported_class(*be.primary), "host_memory_exhausted");
  auto le = run_text(utf16(k_swap_line, false, false));
  ASSERT_TRUE(le.primary);
  EXPECT_EQ(reported_class(*le.primary), "host_memory_exhausted");
}

TEST(Utf16Log, SurrogatePairsAndSmallChunks) {
  // U+1F600 as a surrogate pair (D83D DE00), then the failure; read in 4 KiB chunks.
  std::string text = std::string("\xFF\xFE", 2) + std::string("\x3D\xD8\x00\xDE\n\0", 6);
  std::string line = utf16(std::string(6000, 'x') + "\n" + k_swap_line, false, false);
  auto source = memory_source(text + line, "u16.log");
  DiagnoseOptions options;
  options.scan.chunk_bytes = 4096;
  auto d = diagnose(*source, test_support::kb(), options);
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->primary);
  EXPECT_EQ(d->primary->line, 3);
}

TEST(TaxonomyClass, GraphEstimateIsNoKvCacheMemoryWithItsCause) {
  auto d = run_text(
      "INFO 01-02 03:04:05 [gpu_worker.py:300] Estimated CUDA graph memory: 1.50 GiB\n"
      "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->error_class, "cuda_graph_estimate_no_kv_cache");
  EXPECT_EQ(reported_class(*d.primary), "no_kv_cache_memory");
  EXPECT_EQ(d.primary->cause, "cuda_graph_estimate");
  EXPECT_EQ(to_json(*d.primary)["class"], "no_kv_cache_memory");
  EXPECT_EQ(to_json(*d.primary)["cause"], "cuda_graph_estimate");
  EXPECT_EQ(to_json(*d.primary)["record"], "cuda_graph_estimate_no_kv_cache");
}

TEST(TaxonomyClass, KbRejectsAClassOutsideTheTaxonomy) {
  auto rec = KnowledgeBase::parse_record(
      R"({"id": "x", "signature": "s", "regex": "boom", "versions": ["all"], "headroom": {"class": "no_kv_cache_memroy"}})", "x.json");
  ASSERT_FALSE(rec);
  EXPECT_EQ(rec.error().to_string(),
            "x.json: field 'headroom.class': expected a class of the error taxonomy, got \"no_kv_cache_memroy\"; did you mean "
            "no_kv_cache_memory?");
}

std::string fix_text(const Diagnosis& d) {
  std::string out;
  for (const auto& f : d.fixes) {
    out += f.action + " | " + f.why;
    for (const auto& [flag, value] : f.changes) out += " " + flag + " " + value;
    out += "\n";
  }
  return out;
}

TEST(HostMemory, RayMemoryMonitorWithTheNodesNumbers) {
  // Ray's raylet memory monitor message.
  auto d = run_text(
      "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
      "Memory on the node (IP: 10.0.0.9, ID: 87d7) where the task (task ID: ab, name=Worker.run, pid=2285, memory used=10.13GB) "
      "was running was 891.06GB / 937.50GB (0.950459), which exceeds the memory usage threshold of 0.95.\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(reported_class(*d.primary), "host_memory_exhausted");
  EXPECT_EQ(d.primary->cause, "ray_memory_monitor");
  EXPECT_FALSE(d.primary->out_of_memory);
  ASSERT_FALSE(d.fixes.empty());
  // 891.06 − 0.95 × 937.50 = 0.435 GB over the threshold.
  EXPECT_NE(fix_text(d).find("Free at least 0.44 GB of host RAM on node 10.0.0.9"), std::string::npos) << fix_text(d);
  EXPECT_NE(fix_text(d).find("891.06 GB of 937.50 GB"), std::string::npos) << fix_text(d);
  EXPECT_DOUBLE_EQ(d.primary->facts.at("ray_threshold"), 0.95);  // the sentence's full stop is not part of it
}

TEST(HostMemory, MmapEnomemNamesTheFileAndSize) {
  // torch's MapAllocator message.
  auto d = run_text(
      "RuntimeError: unable to mmap 4932501504 bytes from file </models/llama/model-00001-of-00004.safetensors>: Cannot "
      "allocate memory (12)\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(reported_class(*d.primary), "host_memory_exhausted");
  EXPECT_EQ(d.primary->cause, "mmap_enomem");
  EXPECT_NE(fix_text(d).find("/models/llama/model-00001-of-00004.safetensors needs 4.59 GiB"), std::string::npos) << fix_text(d);
}

TEST(HostMemory, SwapSpaceFixIsFortyPercentOfHostRamPerGpu) {
  auto d = run_text("INFO 01-01 00:00:00 [arg_utils.py:1] non-default args: {'tensor_parallel_size': 2}\n"
                    "ValueError: Too large swap space. 64.00 GiB out of the 125.00 GiB total CPU memory is allocated for the swap space.\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->cause, "swap_space_too_large");
  ASSERT_FALSE(d.fixes.empty());
  ASSERT_EQ(d.fixes[0].changes.size(), 1u);
  EXPECT_EQ(d.fixes[0].changes[0].first, "--swap-space");
  EXPECT_EQ(d.fixes[0].changes[0].second, "25");  // floor(0.4 × 125 / 2)
}

TEST(HostMemory, KernelOomKiller) {
  auto d = run_text("[ 2457.3] Out of memory: Killed process 16499 (python3) total-vm:98765432kB, anon-rss:52428800kB, file-rss:0kB\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(d.primary->cause, "oom_killer");
  EXPECT_NE(fix_text(d).find("python3 holding 50.00 GiB of RAM"), std::string::npos) << fix_text(d);
}

TEST(HostMemory, NcclShmIsStillTheNcclLookAlike) {
  auto d = run_text("misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl-x (size 192814336)\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(reported_class(*d.primary), "nccl_error");
  EXPECT_FALSE(d.primary->out_of_memory);
}

TEST(SleepMode, WakeUpOomInAControllersJsonBody) {
  // vLLM's "Call to wake_up method failed" inside a Go controller's klog line (escaped JSON body).
  auto d = run_text(
      "I0902 00:55:35.305769 1 inference-server.go:2282] \"HTTP call done\" statusCode=500 err=\"returned unexpected status 500; "
      "responseBody={\\\"error\\\":{\\\"message\\\":\\\"Call to wake_up method failed: CUDA Error: out of memory at <path>:163\\\"}}\"\n");
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(reported_class(*d.primary), "runtime_oom");
  EXPECT_EQ(d.primary->cause, "sleep_mode_wake_up");
  EXPECT_TRUE(d.primary->out_of_memory);
}

}  // namespace
}  // namespace headroom
