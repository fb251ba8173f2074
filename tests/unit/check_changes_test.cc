// The changes `check` suggests when vLLM would not start: each must be predicted to start, and the
// searched values must agree with vLLM's own rules (its max_model_len estimate, heads over TP).
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "headroom/check_changes.h"
#include "unit/engine_test_support.h"

namespace headroom {
namespace {

using test_support::gpus;
using test_support::k_v019;
using test_support::model;
using test_support::run;

PredictFn predictor(const ModelSpec& m, VllmVersion v = k_v019) {
  return [m, v](const VllmFlags& f, const GpuSetup& g) { return predict(m, g, f, v); };
}

std::string first_flag(const FlagChange& c) { return c.set.empty() ? "" : c.set.front().first; }

// The longest length found by bisecting the prediction is vLLM's own estimate from the failure
// message (kv_cache_utils.py _estimate_max_model_len), rounded down to a multiple of 1024.
TEST(CheckChanges, LongestLengthAgreesWithVllmsEstimate) {
  auto m = model("Qwen/Qwen3-8B");
  auto g = gpus("L4");
  VllmFlags f;
  f.max_model_len = 40960;
  Prediction failed = run(m, g, f);
  ASSERT_FALSE(failed.starts);
  ASSERT_EQ(failed.failure->error_class, "kv_cache_insufficient");
  ASSERT_TRUE(failed.failure->estimated_max_model_len);
  auto changes = suggest_changes(m, g, f, failed, predictor(m));
  ASSERT_FALSE(changes.empty());
  ASSERT_EQ(first_flag(changes[0]), "--max-model-len");
  const std::int64_t estimate = *failed.failure->estimated_max_model_len;
  EXPECT_EQ(changes[0].set[0].second, std::to_string(estimate / 1024 * 1024));
  for (const auto& c : changes) {
    EXPECT_TRUE(c.prediction.starts) << describe_change(c, f);
    EXPECT_FALSE(c.why.empty());
  }
  // One step longer than the estimate does not fit.
  VllmFlags longer = f;
  longer.max_model_len = estimate / 1024 * 1024 + 1024;
  EXPECT_FALSE(run(m, g, longer).starts);
}

// Weights that do not load on one T4: --cpu-offload-gb is offered with the fewest whole GiB that
// start (one GiB less does not), after the changes that keep decoding fast.
TEST(CheckChanges, WeightsThatDoNotLoadOfferTheSmallestCpuOffload) {
  auto m = model("meta-llama/Llama-3.1-8B-Instruct");
  auto g = gpus("T4");
  VllmFlags f;
  f.max_model_len = 4096;
  Prediction failed = run(m, g, f);
  ASSERT_EQ(failed.failure->error_class, "weights_load_oom");
  auto changes = suggest_changes(m, g, f, failed, predictor(m));
  const FlagChange* offload = nullptr;
  for (const auto& c : changes)
    if (first_flag(c) == "--cpu-offload-gb") offload = &c;
  ASSERT_NE(offload, nullptr);
  EXPECT_EQ(first_flag(changes.back()), "--cpu-offload-gb");
  const int gb = std::stoi(offload->set[0].second);
  VllmFlags at = f, below = f;
  at.cpu_offload_gb = gb;
  below.cpu_offload_gb = gb - 1;
  EXPECT_TRUE(run(m, g, at).starts);
  EXPECT_FALSE(run(m, g, below).starts);
}

// Online fp8 on vLLM 0.13 holds the bf16 weights and their fp8 copies while loading (vLLM #32773:
// Qwen3-30B-A3B starts on one 80 GB GPU in bf16, not with online fp8): leaving out --quantization
// is a fix on the same GPU.
TEST(CheckChanges, OnlineFp8LoadFailureOffersLoadingIn16Bit) {
  auto m = model("Qwen/Qwen3-30B-A3B");
  auto g = gpus("H100");
  VllmFlags f;
  f.max_model_len = 8192;
  f.quantization = "fp8";
  const VllmVersion v{0, 13, 0};
  Prediction failed = run(m, g, f, v);
  ASSERT_EQ(failed.failure->error_class, "weights_load_oom");
  auto changes = suggest_changes(m, g, f, failed, predictor(m, v));
  ASSERT_FALSE(changes.empty());
  EXPECT_EQ(first_flag(changes.front()), "--quantization");
  EXPECT_EQ(changes.front().gpus, 1);
  EXPECT_TRUE(changes.front().prediction.starts);
}

// A 70B model at its full 131,072 tokens on one H100 would need most of its weights in host
// memory: not offered.
TEST(CheckChanges, CpuOffloadIsNotOfferedForMoreThanHalfTheWeights) {
  auto m = model("meta-llama/Llama-3.1-70B-Instruct");
  auto g = gpus("H100");
  VllmFlags f;
  f.max_model_len = 131072;
  Prediction failed = run(m, g, f);
  ASSERT_EQ(failed.failure->error_class, "weights_load_oom");
  for (const auto& c : suggest_changes(m, g, f, failed, predictor(m))) EXPECT_NE(first_flag(c), "--cpu-offload-gb");
}

// config/model.py verify_with_parallel_config: the heads (32) must divide by TP. From TP 6 the
// largest size below that divides them is 4; the same six GPUs work as TP 2 × PP 3.
TEST(CheckChanges, HeadsDecideTheTensorParallelSizes) {
  auto m = model("meta-llama/Llama-3.1-8B-Instruct");
  auto g = gpus("H100", 8);
  VllmFlags f;
  f.tensor_parallel_size = 6;
  f.max_model_len = 8192;
  Prediction failed = run(m, g, f);
  ASSERT_EQ(failed.failure->error_class, "tp_size_not_divisible");
  auto changes = suggest_changes(m, g, f, failed, predictor(m));
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(describe_change(changes[0], f), "--tensor-parallel-size 4");
  EXPECT_EQ(changes[0].gpus, 4);
  EXPECT_EQ(describe_change(changes[1], f), "--tensor-parallel-size 2 --pipeline-parallel-size 3");
  EXPECT_EQ(changes[1].gpus, 6);
}

TEST(CheckChanges, QuantizationTheCheckpointContradictsIsDropped) {
  auto m = model("Qwen/Qwen2.5-7B-Instruct-AWQ");
  auto g = gpus("H100");
  VllmFlags f;
  f.quantization = "fp8";
  Prediction failed = run(m, g, f);
  ASSERT_EQ(failed.failure->error_class, "quantization_mismatch");
  auto changes = suggest_changes(m, g, f, failed, predictor(m));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(describe_change(changes[0], f), "drop --quantization fp8");
  EXPECT_EQ(changes[0].removed, std::vector<std::string>{"--quantization"});
  auto doc = changes_document(changes);
  EXPECT_TRUE(doc[0]["set"].empty());
  EXPECT_EQ(doc[0]["remove"][0], "--quantization");
}

// Weights that do not fit one GPU: more GPUs, with the count the change needs.
TEST(CheckChanges, WeightsThatDoNotFitAskForMoreGpus) {
  auto m = model("meta-llama/Llama-3.1-70B-Instruct");
  auto g = gpus("H100");
  VllmFlags f;
  f.max_model_len = 8192;
  Prediction failed = run(m, g, f);
  ASSERT_EQ(failed.failure->error_class, "weights_load_oom");
  auto changes = suggest_changes(m, g, f, failed, predictor(m));
  ASSERT_FALSE(changes.empty());
  EXPECT_EQ(first_flag(changes[0]), "--tensor-parallel-size");
  EXPECT_GT(changes[0].gpus, 1);
  EXPECT_EQ(changes[0].gpus, changes[0].prediction.settings.tensor_parallel_size);
}

// v1/worker/utils.py request_memory: the budget must fit in the memory free when vLLM starts. With
// 3 GiB held by another process the utilization drops below free / total, and the KV cache of the
// smaller budget then sets the longest max_model_len.
TEST(CheckChanges, FreeMemoryShortfallLowersUtilizationAndLength) {
  auto m = model("Qwen/Qwen3-8B");
  auto g = gpus("RTX 4090");
  g.free_bytes = g.gpu.total_bytes - from_gib(3.0);
  VllmFlags f;
  Prediction failed = run(m, g, f);
  ASSERT_EQ(failed.failure->error_class, "startup_free_memory_insufficient");
  auto changes = suggest_changes(m, g, f, failed, predictor(m));
  ASSERT_EQ(changes.size(), 1u);
  ASSERT_EQ(changes[0].set.size(), 2u);
  EXPECT_EQ(changes[0].set[0].first, "--gpu-memory-utilization");
  EXPECT_EQ(changes[0].set[1].first, "--max-model-len");
  const double util = std::stod(changes[0].set[0].second);
  EXPECT_LE(util * to_gib(g.gpu.total_bytes), to_gib(*g.free_bytes));
  EXPECT_LT(std::stoll(changes[0].set[1].second), failed.settings.max_model_len);
  EXPECT_TRUE(changes[0].prediction.starts);
}

// A Qwen2.5-VL run whose KV cache falls short because of the encoder's pass on its largest dummy
// image (16,384 tokens: max_pixels 12,845,056 = 16,384 x 28^2, qwen2_vl.py): the image cap that
// starts it is passed as max_pixels in --mm-processor-kwargs (tokens x (patch 14 x merge 2)^2), a
// multiple of 64 tokens that starts while 64 more do not, and vLLM's text-only mode limits the
// two modalities the model takes. Each change is predicted to start.
TEST(CheckChanges, MultimodalRunsOfferSmallerImagesAndTextOnly) {
  auto m = model("Qwen/Qwen2.5-VL-7B-Instruct");
  auto g = gpus("RTX 4090");
  VllmFlags f;
  f.max_model_len = 90000;
  f.limit_mm_per_prompt["video"] = 0;  // images only: vLLM profiles the largest image
  Prediction failed = run(m, g, f);
  ASSERT_EQ(failed.failure->error_class, "kv_cache_insufficient");
  ASSERT_GT(failed.memory.encoder_profile, 0);
  auto changes = suggest_changes(m, g, f, failed, predictor(m), 8);
  const FlagChange* images = nullptr;
  const FlagChange* text = nullptr;
  for (const auto& c : changes) {
    EXPECT_TRUE(c.prediction.starts) << first_flag(c);
    if (first_flag(c) == "--mm-processor-kwargs") images = &c;
    if (first_flag(c) == "--limit-mm-per-prompt") text = &c;
  }
  ASSERT_TRUE(images && text);
  auto kwargs = nlohmann::json::parse(images->set[0].second);
  const std::int64_t pixels = kwargs.at("max_pixels").get<std::int64_t>();
  ASSERT_EQ(pixels % (28 * 28 * 64), 0);
  const std::int64_t tokens = pixels / (28 * 28);
  EXPECT_LT(tokens, 16384);
  VllmFlags more = f;
  more.mm_processor_kwargs = R"({"max_pixels": )" + std::to_string((tokens + 64) * 28 * 28) + "}";
  EXPECT_FALSE(run(m, g, more).starts);
  EXPECT_EQ(nlohmann::json::parse(text->set[0].second), nlohmann::json({{"image", 0}, {"video", 0}}));
  EXPECT_LT(text->prediction.memory.weights, failed.memory.weights);  // the tower is not loaded
  EXPECT_EQ(describe_change(*text, f), R"(--limit-mm-per-prompt '{"image":0,"video":0}')");
  // A text-only model has no such levers.
  Prediction text_model = run(model("Qwen/Qwen3-8B"), gpus("RTX 4090"), f);
  for (const auto& c : suggest_changes(model("Qwen/Qwen3-8B"), g, f, text_model, predictor(model("Qwen/Qwen3-8B")), 8))
    EXPECT_NE(first_flag(c), "--limit-mm-per-prompt");
}

// Qwen3-VL bounds its images by the size its Qwen2VLImageProcessorFast reads (preprocessor_config.json
// {"longest_edge": 16777216, "shortest_edge": 65536}): the change passes both, the longest edge a
// whole number of 64 tokens of (patch 16 x merge 2)^2 = 1,024 pixels.
TEST(CheckChanges, Qwen3VlImagesAreBoundedBySize) {
  auto m = model("Qwen/Qwen3-VL-8B-Instruct");
  auto g = gpus("RTX 4090");
  VllmFlags f;
  f.max_model_len = 26000;
  Prediction failed = run(m, g, f);
  ASSERT_EQ(failed.failure->error_class, "kv_cache_insufficient");
  const auto changes = suggest_changes(m, g, f, failed, predictor(m), 8);
  const FlagChange* images = nullptr;
  for (const auto& c : changes)
    if (first_flag(c) == "--mm-processor-kwargs") images = &c;
  ASSERT_TRUE(images);
  EXPECT_TRUE(images->prediction.starts);
  auto kwargs = nlohmann::json::parse(images->set[0].second);
  EXPECT_EQ(kwargs.at("size").at("shortest_edge").get<std::int64_t>(), 65536);
  const std::int64_t longest = kwargs.at("size").at("longest_edge").get<std::int64_t>();
  EXPECT_EQ(longest % (1024 * 64), 0);
  EXPECT_LT(longest, 16777216);
}

// Before v0.13 vLLM profiles Qwen3-VL with its dummy video (qwen3_vl_video.h): with video limited
// to 0 it profiles the largest image instead, a smaller pass, and that change starts the run.
TEST(CheckChanges, AProfiledVideoOffersNoVideo) {
  auto m = model("Qwen/Qwen3-VL-8B-Instruct");
  auto g = gpus("RTX 4090");
  VllmFlags f;
  f.max_model_len = 8192;
  const VllmVersion v012{0, 12};
  Prediction failed = run(m, g, f, v012);
  ASSERT_FALSE(failed.starts);
  ASSERT_GT(failed.memory.encoder_profile, 0);
  const auto changes = suggest_changes(m, g, f, failed, predictor(m, v012), 8);
  const FlagChange* no_video = nullptr;
  for (const auto& c : changes)
    if (first_flag(c) == "--limit-mm-per-prompt" && nlohmann::json::parse(c.set[0].second) == nlohmann::json({{"video", 0}}))
      no_video = &c;
  ASSERT_TRUE(no_video);
  EXPECT_TRUE(no_video->prediction.starts);
  EXPECT_LT(no_video->prediction.memory.activation_peak, failed.memory.activation_peak);
  // vLLM takes --limit-mm-per-prompt as one value: a limit the user gave stays in the change.
  f.limit_mm_per_prompt["image"] = 2;
  Prediction two_images = run(m, g, f, v012);
  ASSERT_FALSE(two_images.starts);
  bool kept = false;
  for (const auto& c : suggest_changes(m, g, f, two_images, predictor(m, v012), 8))
    if (first_flag(c) == "--limit-mm-per-prompt" && c.set[0].second == R"({"image":2,"video":0})") kept = true;
  EXPECT_TRUE(kept);
}

// Qwen2.5-VL-7B at its default 128,000 on a 24 GB card: the 14-frame dummy video (114,688 tokens)
// runs the profile out of memory. A shorter max_model_len shrinks the video vLLM sizes from it
// (qwen2_vl.py: frames from max_model_len), so the longest that starts is offered.
TEST(CheckChanges, AVideoSizedByTheLengthOffersAShorterLength) {
  auto m = model("Qwen/Qwen2.5-VL-7B-Instruct");
  auto g = gpus("RTX 4090");
  VllmFlags f;
  Prediction failed = run(m, g, f);
  ASSERT_EQ(failed.failure->error_class, "profile_run_oom");
  const auto changes = suggest_changes(m, g, f, failed, predictor(m), 8);
  const FlagChange* shorter = nullptr;
  for (const auto& c : changes)
    if (first_flag(c) == "--max-model-len") shorter = &c;
  ASSERT_TRUE(shorter);
  EXPECT_TRUE(shorter->prediction.starts);
  EXPECT_LT(shorter->prediction.settings.max_model_len, failed.settings.max_model_len);
  VllmFlags longer = f;
  longer.max_model_len = shorter->prediction.settings.max_model_len + 1024;
  EXPECT_FALSE(run(m, g, longer).starts);
}

// --skip-mm-profiling (#22950, v0.10.2) where headroom offers no smaller images (dots.ocr): the KV
// cache gets the pass's memory. Not offered before v0.10.2, which has no such flag.
TEST(CheckChanges, OtherTowersOfferSkippingTheProfilePass) {
  auto m = model("rednote-hilab/dots.ocr");
  auto g = gpus("RTX 4060 Ti");
  VllmFlags f;
  f.max_model_len = 32768;
  f.gpu_memory_utilization = 0.5;
  Prediction failed = run(m, g, f);
  ASSERT_EQ(failed.failure->error_class, "kv_cache_insufficient");
  ASSERT_GT(failed.memory.encoder_profile, 0);
  const auto offered = [&](const std::vector<FlagChange>& changes) -> const FlagChange* {
    for (const auto& c : changes) {
      EXPECT_NE(first_flag(c), "--mm-processor-kwargs");
      if (first_flag(c) == "--skip-mm-profiling") return &c;
    }
    return nullptr;
  };
  auto changes = suggest_changes(m, g, f, failed, predictor(m), 8);
  const FlagChange* skip = offered(changes);
  ASSERT_TRUE(skip);
  EXPECT_TRUE(skip->prediction.starts);
  // The activation peak loses the pass's share (within 2 %: the skipped run's other buffers differ slightly).
  EXPECT_NEAR(static_cast<double>(failed.memory.activation_peak - skip->prediction.memory.activation_peak),
              static_cast<double>(failed.memory.encoder_profile), 0.02 * static_cast<double>(failed.memory.encoder_profile));
  const VllmVersion v0101{0, 10, 1};
  Prediction older = run(m, g, f, v0101);
  ASSERT_FALSE(older.starts);
  EXPECT_FALSE(offered(suggest_changes(m, g, f, older, predictor(m, v0101), 8)));
}

TEST(CheckChanges, NothingToChangeWhenItStarts) {
  auto m = model("Qwen/Qwen3-8B");
  auto g = gpus("H100");
  VllmFlags f;
  f.max_model_len = 8192;
  Prediction ok = run(m, g, f);
  ASSERT_TRUE(ok.starts);
  EXPECT_TRUE(suggest_changes(m, g, f, ok, predictor(m)).empty());
}

}  // namespace
}  // namespace headroom
