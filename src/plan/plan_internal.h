// Shared pieces of the plan search (src/plan/): the selection, the explanation and the no-fit
// analysis. Internal to the library.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "headroom/plan.h"
#include "plan/searcher.h"

namespace headroom::plan {

// How much of the work a search does: sub-searches of the no-fit analysis only need to know
// whether something fits.
enum class SearchDepth { full, recommendation_only };

struct SearchState {
  const ModelSpec& model;
  GpuSetup gpus;
  PlanRequest request;
  VllmVersion version;
  Bytes margin = 0;
  int gpu_limit = 1;
  std::int64_t model_max_len = 0;
  std::optional<std::string> quantization;  // forced online quantization (no-fit analysis)
  Searcher searcher;
  SearchDepth depth = SearchDepth::full;
  std::vector<Evaluation> tried;  // the best attempt of each layout (feasible or not)
};

// Hybrid (Mamba / linear-attention) models from v0.28: prefix caching runs in Mamba cache mode
// "align", each request holds two state pages, and max_num_seqs may not exceed the state blocks
// (plan_eras.cc). nullopt for other models and versions.
std::optional<std::string> plan_hybrid_state_note(const ModelSpec& model, const VllmVersion& version,
                                                  const ResolvedSettings& settings);

// Whether vLLM runs the checkpoint's weights on the GPU: NVFP4 natively on compute capability
// 10.x–12.x and through Marlin's weight-only FP4 kernel from 7.5 on (plan_eras.cc).
bool checkpoint_runs_on(const ModelSpec& model, const GpuSpec& gpu);

// For an NVFP4 checkpoint on a GPU without FP4 tensor cores: the Marlin fallback vLLM takes
// there, or why it does not run at all. nullopt for other checkpoints and on Blackwell.
std::optional<std::string> nvfp4_kernel_note(const ModelSpec& model, const GpuSpec& gpu);

// Sparse-MLA models already default to an fp8 KV cache (fp8_ds_mla): no fp8 variant to try.
bool kv_dtype_is_fixed_fp8(const ModelSpec& model);

// The search proper, for a validated request.
Result<Plan> search(const ModelSpec& model, const GpuSetup& gpus, const PlanRequest& request, const VllmVersion& version,
                    Bytes margin, SearchDepth depth, std::optional<std::string> quantization = std::nullopt,
                    std::shared_ptr<WeightsCache> cache = nullptr);

// A PlannedConfig for a feasible evaluation, with `data_parallel` replicas: the flags, the
// prediction on the setup as given (original weights), verified with the margin.
std::optional<PlannedConfig> build_config(SearchState& state, const Evaluation& e, int data_parallel, std::string label);

// The choices of the recommended configuration and the plan's explanation lines.
void explain(SearchState& state, const Evaluation& chosen, Plan& plan);

// Why nothing fits and the smallest changes that would.
NoFit analyse_no_fit(SearchState& state, const Plan& plan);

// The gpu_memory_utilization interval's reasons.
std::string upper_reason(const SearchState& state, const Evaluation& e);
std::string lower_reason(const SearchState& state, const Evaluation& e);

std::string gib(Bytes bytes);           // "7.55 GiB"
std::string util_text(int percent);     // "0.87"
std::string util_text(double fraction);
std::string layout_text(Layout layout);  // "tp=2 pp=1"

}  // namespace headroom::plan
