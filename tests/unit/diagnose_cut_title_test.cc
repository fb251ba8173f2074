// Error lines cut short: the messages are vLLM's and torch's own texts (error-taxonomy.md §3-§5,
// calibration reports), the expected classes the taxonomy's for those messages.
#include <gtest/gtest.h>

#include <string>

#include "diagnose/cut_titles.h"
#include "diagnose_test_support.h"
#include "headroom/diagnose.h"

namespace headroom {
namespace {

using test_support::run_shared;

std::string cls(const Diagnosis& d) { return d.primary ? reported_class(*d.primary) : std::string("(none)"); }

bool says_cut(const Diagnosis& d) {
  for (const auto& n : d.notes)
    if (n.find("is cut short") != std::string::npos) return true;
  return false;
}

// A V1 weights-loading traceback (the frames of error-taxonomy.md §2) ending in `error_line`.
std::string loading_log(const std::string& error_line) {
  return "INFO 05-02 10:00:01 [gpu_model_runner.py:1] Starting to load model meta-llama/Llama-3.1-70B-Instruct...\n"
         "Traceback (most recent call last):\n"
         "  File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py\", line 1595, in load_model\n"
         "    self.model = model_loader.load_model(\n"
         "  File \"/usr/local/lib/python3.12/dist-packages/vllm/model_executor/model_loader/base_loader.py\", line 41, in load_model\n"
         "    model = initialize_model(vllm_config=vllm_config,\n" +
         error_line + "\n";
}

TEST(CutTitle, TorchOomCutInsideMemoryIsTheOomOfTheFramesPhase) {
  Diagnosis d = run_shared(loading_log("torch.OutOfMemoryError: CUDA out of memo"));
  ASSERT_TRUE(d.primary);
  EXPECT_EQ(cls(d), "weights_load_oom");
  EXPECT_TRUE(d.primary->title_cut);
  EXPECT_TRUE(says_cut(d));
  EXPECT_TRUE(to_json(*d.primary)["title_cut"].get<bool>());
}

TEST(CutTitle, ACutTitlesFixesAreLessCertainThanTheWholeMessages) {
  Diagnosis whole = run_shared(loading_log(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 0 has a total capacity of 79.19 GiB of "
      "which 228.56 MiB is free."));
  Diagnosis cut = run_shared(loading_log("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.0"));
  ASSERT_TRUE(whole.primary && cut.primary);
  EXPECT_FALSE(whole.primary->title_cut);
  EXPECT_FALSE(says_cut(whole));
  EXPECT_TRUE(cut.primary->title_cut);
  EXPECT_EQ(cls(cut), cls(whole));
  ASSERT_FALSE(whole.fixes.empty());
  ASSERT_FALSE(cut.fixes.empty());
  EXPECT_LT(cut.fixes.front().confidence, whole.fixes.front().confidence);
}

TEST(CutTitle, KvCheckCutMidNumberIsKvCacheInsufficient) {
  const std::string message =
      "ValueError: To serve at least one request with the model's max seq len (131072), (16.00 GiB KV cache is needed, which "
      "is larger than the available KV cache memory (9.71 GiB). Based on the available memory, the estimated maximum model "
      "length is 79504. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
  const std::string whole_number = "ValueError: To serve at least one request with the model's max seq len (131072)";
  // Every cut from the first unambiguous character up to the number's end.
  for (std::size_t k = 40; k < whole_number.size(); ++k) {
    Diagnosis d = run_shared(message.substr(0, k) + "\n");
    EXPECT_EQ(cls(d), "kv_cache_insufficient") << message.substr(0, k);
    EXPECT_TRUE(d.primary && d.primary->title_cut) << message.substr(0, k);
  }
  Diagnosis whole = run_shared(message + "\n");
  EXPECT_EQ(cls(whole), "kv_cache_insufficient");
  EXPECT_FALSE(whole.primary->title_cut);
}

TEST(CutTitle, NoKvCacheMemoryCutShort) {
  Diagnosis d = run_shared("[rank0]: ValueError: No available memory for the cache bl\n");
  EXPECT_EQ(cls(d), "no_kv_cache_memory");
  EXPECT_TRUE(d.primary && d.primary->title_cut);
}

TEST(CutTitle, IssueTitleWithAnEllipsis) {
  Diagnosis d = run_shared("[Bug]: RuntimeError: CUDA error: an illegal memory access was enc...\n");
  EXPECT_EQ(cls(d), "illegal_memory_access");
  EXPECT_TRUE(d.primary && d.primary->title_cut);
  EXPECT_FALSE(d.primary->out_of_memory);
}

TEST(CutTitle, ABeginningTwoMessagesShareIsNotReadAsEither) {
  // torch <= 1.13's "RuntimeError: CUDA out of memory. Tried to allocate" and vLLM's "RuntimeError:
  // CUDA out of memory occurred when warming up sampler" begin alike up to "memory".
  Diagnosis d = run_shared("RuntimeError: CUDA out of memo\n");
  ASSERT_TRUE(d.primary);  // still an out-of-memory error (the "RuntimeError: CUDA out of" signature)
  EXPECT_TRUE(d.primary->out_of_memory);
  EXPECT_FALSE(d.primary->title_cut);
  EXPECT_FALSE(says_cut(d));
}

TEST(CutTitle, TooLittleLeftIsNoFinding) {
  EXPECT_FALSE(run_shared("ValueError: No av\n").primary);
  EXPECT_FALSE(run_shared("ValueError: To se\n").primary);
}

TEST(CutTitle, AMessageWholeUpToItsNumbersIsNotCut) {
  // vllm-50135: the line stops in the advice, after every number of the check.
  Diagnosis d = run_shared(
      "ValueError: Free memory on device xpu:0 (0.22/30.3 GiB) on startup is less than desired GPU memory utilization (0.7, "
      "21.21 GiB). Decrease GPU memory utilization or reduce GPU memory used by oth\n");
  EXPECT_EQ(cls(d), "startup_free_memory_insufficient");
  EXPECT_FALSE(d.primary->title_cut);
}

TEST(CutTitle, TitlesOfOneMessageDoNotMakeEachOtherAmbiguous) {
  const auto& titles = cut_titles();
  for (std::size_t i = 0; i < titles.size(); ++i) {
    std::string t = titles[i].title;
    EXPECT_LE(unambiguous_length(titles, i), t.size()) << t;
    if (t.rfind("torch.OutOfMemoryError: CUDA", 0) == 0) {
      EXPECT_EQ(t.substr(0, unambiguous_length(titles, i)), "torch.OutOfMemoryError: CUDA out");
    }
  }
}

}  // namespace
}  // namespace headroom
