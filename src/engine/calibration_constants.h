// Empirical constants of the memory model. Written by scripts/fit_calibration.py from
// calibration/startup.jsonl (vLLM startup logs); rerun the script when measurements arrive.
// Each constant names the rows it was fitted on. Do not edit by hand.
#pragma once

#include "headroom/vllm_version.h"

namespace headroom::engine {

// Sampler warm-up bytes per [request × padded vocab] logit element (activation peak A).
// Fitted on V1 rows whose sampler term dominates the forward pass (R × V large):
//   before v0.17: median of 4 rows (v0.11 and v0.15/v0.16 runs, H100, R = 1024);
//   v0.17 onward: median of 15 rows (v0.17-v0.19 runs, H100, R = 1024).
inline double sampler_bytes_per_logit(const VllmVersion& v) { return v >= VllmVersion{0, 17} ? 15.4 : 38.9; }

// Fraction of the fused-MoE intermediate caches that stays in the activation peak.
// Fitted on 4 MoE rows (v0.19, H100: Qwen3-30B-A3B, DeepSeek-V2-Lite, Kimi-VL, Llama-4-Scout TP4).
inline constexpr double k_moe_workspace_factor = 0.8;

struct NonTorchEra {
  double single_gpu_gib;
  double tensor_parallel_gib;
  double pipeline_parallel_gib;
};

// Non-torch memory increase (N) by era. Medians of the rows of each era and parallel layout:
//   v0.11-v0.17 TP=1: 0.13 GiB (6 rows); TP=2: 0.55 GiB (2 rows, v0.11);
//   v0.18+ TP=1: 0.25 GiB (27 rows); TP>1: 2.13 GiB (2 rows, v0.19 TP=2/TP=4); PP>1: 0.07 GiB (2 rows).
inline const NonTorchEra& non_torch_era(const VllmVersion& v) {
  static const NonTorchEra k_before_v018{0.13, 0.55, 0.07};
  static const NonTorchEra k_from_v018{0.25, 2.13, 0.07};
  return v >= VllmVersion{0, 18} ? k_from_v018 : k_before_v018;
}

// CUDA context + NCCL at the init snapshot: total − free in "worker init memory snapshot" lines
// (0.47-0.63 GiB at TP 1-2; 1.18 GiB at larger TP/EP).
inline constexpr double k_baseline_context_gib = 0.5;
inline constexpr double k_baseline_per_extra_rank_gib = 0.1;

// CUDA graph memory ("Graph capturing finished ... took X GiB") as base + per-layer, scaled by the
// number of captured sizes / 51. Least squares on 15 dense v0.19 rows.
inline constexpr double k_graph_base_gib = 0.45;
inline constexpr double k_graph_per_layer_gib = 0.0125;
inline constexpr double k_graph_moe_extra_gib = 0.4;

}  // namespace headroom::engine
