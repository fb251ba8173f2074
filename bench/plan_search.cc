// Speed of the plan search (goal: ≤ 50 ms per plan): make_plan() for the classic desktop case, a
// multi-GPU dense model, a multi-node plan and a no-fit case with its sub-searches.
#include <benchmark/benchmark.h>

#include "headroom/plan.h"

namespace {

using namespace headroom;

void run(benchmark::State& state, const char* model_id, const char* gpu, int count, int nodes, std::int64_t context,
         double used_gib) {
  auto model = load_model(model_id).value();
  GpuSetup setup;
  setup.gpu = GpuCatalog::builtin().find(gpu).value();
  setup.count = count;
  setup.nodes = nodes;
  if (used_gib > 0) setup.free_bytes = setup.gpu.total_bytes - from_gib(used_gib);
  PlanRequest request;
  request.context_tokens = context;
  int predictions = 0;
  for (auto _ : state) {
    auto plan = make_plan(model, setup, request, VllmVersion::newest_modelled());
    predictions = plan->predictions_run;
    benchmark::DoNotOptimize(plan);
  }
  state.counters["predictions"] = predictions;
}

void BM_PlanQwen3_4B_Rtx4080Desktop(benchmark::State& s) { run(s, "Qwen/Qwen3-4B-Instruct-2507", "RTX 4080", 1, 1, 4096, 0.5); }
void BM_PlanLlama70B_8xH100(benchmark::State& s) { run(s, "meta-llama/Llama-3.1-70B-Instruct", "H100", 8, 1, 8192, 0); }
void BM_PlanLlama405BFp8_2Nodes(benchmark::State& s) { run(s, "meta-llama/Meta-Llama-3.1-405B-Instruct-FP8", "H100", 8, 2, 16384, 0); }
void BM_PlanLlama70B_Rtx4090NoFit(benchmark::State& s) { run(s, "meta-llama/Llama-3.1-70B-Instruct", "RTX 4090", 1, 1, 8192, 0); }
void BM_PlanQwen3_235B_Rtx4090NoFit(benchmark::State& s) { run(s, "Qwen/Qwen3-235B-A22B", "RTX 4090", 1, 1, 8192, 0); }
void BM_PlanDeepSeekR1_8xH100NoFit(benchmark::State& s) { run(s, "deepseek-ai/DeepSeek-R1", "H100", 8, 1, 8192, 0); }

BENCHMARK(BM_PlanQwen3_4B_Rtx4080Desktop)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanLlama70B_8xH100)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanLlama405BFp8_2Nodes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanLlama70B_Rtx4090NoFit)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanQwen3_235B_Rtx4090NoFit)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanDeepSeekR1_8xH100NoFit)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
