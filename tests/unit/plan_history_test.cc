// Plans consult the run history: a configuration recorded as failing on this GPU is not
// recommended again, and the record is cited.
#include <gtest/gtest.h>

#include "headroom/gpu.h"
#include "headroom/history.h"
#include "headroom/model.h"
#include "headroom/plan.h"

namespace headroom {
namespace {

RunRecord failed_run(double util, int max_num_seqs) {
  nlohmann::json row = {{"id", "test-4080-graph-oom"},
                        {"model", "Qwen/Qwen3-4B-Instruct-2507"},
                        {"vllm_version", "0.30.0"},
                        {"gpu_name", "NVIDIA GeForce RTX 4080"},
                        {"total_gpu_memory_gib", 15.57},
                        {"tp", 1},
                        {"pp", 1},
                        {"max_model_len", 4096},
                        {"gpu_memory_utilization", util},
                        {"max_num_seqs", max_num_seqs},
                        {"max_num_batched_tokens", 2048},
                        {"observed_outcome", "oom"},
                        {"failure_class", "cuda_graph_capture_oom"},
                        {"source_date", "2026-11-20"}};
  auto r = record_from_jsonl_row(row, "test");
  EXPECT_TRUE(r) << r.error().to_string();
  RunRecord rec = *r;
  rec.id = 7;
  return rec;
}

Plan plan_with(const std::vector<RunRecord>* history) {
  auto model = catalog_model("Qwen/Qwen3-4B-Instruct-2507");
  EXPECT_TRUE(model);
  GpuSetup gpus;
  gpus.gpu = *GpuCatalog::builtin().find("RTX 4080");
  gpus.free_bytes = gpus.gpu.total_bytes - from_gib(0.5);
  PlanRequest request;
  request.context_tokens = 4096;
  request.history = history;
  auto plan = make_plan(*model, gpus, request, VllmVersion{0, 30});
  EXPECT_TRUE(plan) << plan.error().to_string();
  return *plan;
}

TEST(PlanHistory, RecordedFailureIsAvoidedAndCited) {
  Plan without = plan_with(nullptr);
  ASSERT_TRUE(without.recommended);
  const auto& base = without.recommended->prediction.settings;
  // Record a failure of exactly the configuration the plan recommends without history.
  std::vector<RunRecord> history = {failed_run(base.gpu_memory_utilization, base.max_num_seqs)};
  Plan with = plan_with(&history);
  ASSERT_TRUE(with.recommended);
  const auto& s = with.recommended->prediction.settings;
  EXPECT_FALSE(s.gpu_memory_utilization == base.gpu_memory_utilization && s.max_num_seqs == base.max_num_seqs &&
               s.max_model_len == base.max_model_len)
      << "the recorded failing configuration was recommended again";
  bool cited = false;
  for (const auto& line : with.explanation)
    if (line.find("history #7") != std::string::npos && line.find("cuda_graph_capture_oom") != std::string::npos) cited = true;
  EXPECT_TRUE(cited);
}

TEST(PlanHistory, EmptyHistoryChangesNothing) {
  std::vector<RunRecord> empty;
  Plan a = plan_with(nullptr), b = plan_with(&empty);
  ASSERT_TRUE(a.recommended && b.recommended);
  EXPECT_EQ(a.recommended->prediction.settings.gpu_memory_utilization, b.recommended->prediction.settings.gpu_memory_utilization);
  EXPECT_EQ(a.recommended->prediction.kv_cache_tokens, b.recommended->prediction.kv_cache_tokens);
}

}  // namespace
}  // namespace headroom
