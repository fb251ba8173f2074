// Property: every configuration a plan recommends (and every alternative), fed back to the
// prediction engine as `check` would, starts — also with the stated safety margin taken by
// other processes — and holds the requested concurrency at the planned context.
#include <gtest/gtest.h>

#include "headroom/plan.h"

namespace headroom {
namespace {

struct Case {
  const char* model;
  const char* gpu;
  int gpus;
  int nodes;
  std::int64_t context;  // 0: the longest that fits
  int concurrency;
  PlanGoal goal;
  double used_gib;
};

class PlanProperty : public testing::TestWithParam<Case> {};

void expect_starts_with_margin(const ModelSpec& model, const GpuSetup& gpus, const Plan& plan, const PlannedConfig& c) {
  SCOPED_TRACE(c.label);
  auto as_given = predict(model, gpus, c.flags, plan.version);
  ASSERT_TRUE(as_given) << as_given.error().message;
  EXPECT_TRUE(as_given->starts) << (as_given->failure ? as_given->failure->message : "");
  GpuSetup squeezed = gpus;
  squeezed.free_bytes = gpus.free_bytes.value_or(gpus.gpu.total_bytes) - plan.safety_margin_bytes;
  auto with_margin = predict(model, squeezed, c.flags, plan.version);
  ASSERT_TRUE(with_margin);
  EXPECT_TRUE(with_margin->starts) << (with_margin->failure ? with_margin->failure->message : "");
}

TEST_P(PlanProperty, RecommendedConfigurationsStartWithTheStatedMargin) {
  const Case& k = GetParam();
  auto model = load_model(k.model).value();
  GpuSetup gpus;
  gpus.gpu = GpuCatalog::builtin().find(k.gpu).value();
  gpus.count = k.gpus;
  gpus.nodes = k.nodes;
  if (k.used_gib > 0) gpus.free_bytes = gpus.gpu.total_bytes - from_gib(k.used_gib);
  PlanRequest r;
  if (k.context > 0) r.context_tokens = k.context;
  r.concurrency = k.concurrency;
  r.goal = k.goal;
  for (const char* version : {"0.10.1", "0.19.0", "0.30.0"}) {
    SCOPED_TRACE(version);
    auto plan = make_plan(model, gpus, r, VllmVersion::parse(version).value());
    ASSERT_TRUE(plan) << plan.error().message;
    ASSERT_TRUE(plan->recommended) << (plan->no_fit ? plan->no_fit->reason : "");
    expect_starts_with_margin(model, gpus, *plan, *plan->recommended);
    EXPECT_GE(plan->recommended->prediction.max_concurrency + 1e-9, k.concurrency);
    for (const auto& alt : plan->alternatives) expect_starts_with_margin(model, gpus, *plan, alt);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Pairs, PlanProperty,
    testing::Values(Case{"Qwen/Qwen3-4B-Instruct-2507", "RTX 4080", 1, 1, 4096, 1, PlanGoal::throughput, 0.5},
                    Case{"Qwen/Qwen3-8B", "RTX 4090", 1, 1, 8192, 4, PlanGoal::throughput, 1.0},
                    Case{"meta-llama/Llama-3.1-8B-Instruct", "A100 80GB", 1, 1, 0, 1, PlanGoal::context, 0},
                    Case{"meta-llama/Llama-3.1-70B-Instruct", "H100", 8, 1, 8192, 16, PlanGoal::throughput, 0},
                    Case{"meta-llama/Llama-3.1-70B-Instruct", "H100", 4, 1, 32768, 2, PlanGoal::latency, 0},
                    Case{"Qwen/Qwen3-30B-A3B", "L40S", 2, 1, 16384, 8, PlanGoal::throughput, 0},
                    Case{"google/gemma-3-27b-it", "A100 80GB", 1, 1, 8192, 4, PlanGoal::throughput, 0},
                    Case{"mistralai/Mistral-7B-Instruct-v0.3", "T4", 2, 1, 4096, 1, PlanGoal::throughput, 0},
                    Case{"openai/gpt-oss-20b", "RTX 5090", 1, 1, 16384, 2, PlanGoal::throughput, 0.8},
                    Case{"Qwen/Qwen2.5-7B-Instruct-AWQ", "RTX 3060", 1, 1, 4096, 1, PlanGoal::throughput, 0.4},
                    Case{"meta-llama/Meta-Llama-3.1-405B-Instruct-FP8", "H100", 8, 2, 16384, 1, PlanGoal::throughput, 0},
                    Case{"deepseek-ai/DeepSeek-V2-Lite", "L40S", 1, 1, 4096, 1, PlanGoal::throughput, 0},
                    Case{"Qwen/Qwen3-Next-80B-A3B-Instruct", "H200", 2, 1, 65536, 4, PlanGoal::context, 0},
                    Case{"microsoft/Phi-3-mini-4k-instruct", "RTX 3080 12GB", 1, 1, 4096, 1, PlanGoal::latency, 0.6}));

}  // namespace
}  // namespace headroom
