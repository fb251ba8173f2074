// Empirical constants of the memory model. Written by scripts/fit_calibration.py from the
// features bench_accuracy extracts from calibration/startup.jsonl (vLLM startup logs); rerun both
// when measurements arrive. Each constant says what it was fitted on. Do not edit by hand.
#pragma once

#include "headroom/vllm_version.h"

namespace headroom::engine {

// Sampler warm-up bytes per [request x padded vocab] logit (activation peak A), by sampler era:
//   V0 and v0.11-v0.16 (top-k/top-p through a full sort of fp32 logits): 38.9 (median of 10 rows);
//   v0.8-v0.10 (FlashInfer top-k/top-p sampling kernels, no sort): 12.1 (median of 2 rows,
//     activation derived from the KV size because those logs do not print it);
//   v0.17 onward (sampler rewritten without the sort path): 15.4 (median of 26 rows).
inline double sampler_bytes_per_logit(const VllmVersion& v) {
  if (v >= VllmVersion{0, 17}) return 15.4;
  if (v >= VllmVersion{0, 8} && v < VllmVersion{0, 11}) return 12.1;
  return 38.9;
}

// Fraction of the fused-MoE intermediate caches that stays in the activation peak (median of
// 5 MoE rows of v0.17+).
inline constexpr double k_moe_workspace_factor = 0.84;

struct NonTorchEra {
  double single_gpu_gib;           // kernel images loaded during the profile run
  double nvswitch_all_reduce_gib;  // added at TP > 1 on Hopper/Blackwell NVLink boards
};

// Non-torch memory increase (N), single GPU, medians by era: before v0.18 0.13 (n=13), v0.18
// onward 0.25 (n=32). All-reduce buffers at TP > 1 on NVSwitch boards, above the single-GPU
// value: the median of the 4 H100 TP rows (two of about v0.13-0.15 at TP 2, two of v0.19 at TP 2
// and 4) minus it, after taking out the NVLS buffers that nvls_buffer_bytes derives for TP > 2 and
// the fusion workspace of allreduce_fusion_workspace_bytes (1.5 GiB on the v0.19 rows): 0.42, 0.41,
// 0.34 and 0.30, median 0.38. Before the fusion workspace was known the two eras' values were 0.42
// and 1.82.
inline constexpr double k_nvswitch_all_reduce_spread_gib = 0.12;  // those 4 residuals' range
inline const NonTorchEra& non_torch_era(const VllmVersion& v) {
  static const NonTorchEra k_before_v018{0.13, 0.38};
  static const NonTorchEra k_from_v018{0.25, 0.38};
  return v >= VllmVersion{0, 18} ? k_from_v018 : k_before_v018;
}

// TP > 1 without NVSwitch (PCIe boards, and NVLink before Hopper, which has no NVLS: NVLink SHARP
// needs Hopper's NVSwitch): NCCL's buffers, derived from NCCL's defaults (NCCL_BUFFSIZE 4 MiB x
// send/recv x up to 8 channels per peer = 64 MiB); custom all-reduce adds a few MiB where it runs.
// Not fitted; the one same-node A100 TP 2 row (v0.10.1) implies about 0.08 GiB at TP 2.
inline constexpr double k_nccl_buffers_per_peer_gib = 0.0625;
// Pipeline-parallel runs (TP 1): the first stage's whole N, median of 2 rows; lower than a
// single GPU's because that stage never runs the sampler's kernels.
inline constexpr double k_pipeline_non_torch_gib = 0.07;

// CUDA context + NCCL at the init snapshot: total - free in "worker init memory snapshot" lines
// (0.47-0.63 GiB at TP 1-2; 1.18 GiB at larger TP/EP), memory model section 8.3.
inline constexpr double k_baseline_context_gib = 0.5;
inline constexpr double k_baseline_per_extra_rank_gib = 0.1;

// CUDA graph memory ("Graph capturing finished ... took X GiB") =
//   (per-1024-hidden x hidden/1024 + per-layer x layers + per-MoE-unit x moe_graph_units) x graphs/102,
//   where moe_graph_units = (3 x moe_intermediate / TP + hidden) / (3 x moe_intermediate + hidden),
//   the share of the fused-MoE caches per token one GPU holds (1 on one GPU or with expert
//   parallelism, 0 for dense models), and graphs counts
//   PIECEWISE sizes plus, from v0.11, FULL decode sizes <= max_num_seqs (102 at big-GPU defaults),
// least squares on 39 v0.17+ rows (no intercept: a tiny model captures tiny graphs).
inline constexpr double k_graph_per_1024_hidden_gib = 0.1561;
inline constexpr double k_graph_per_layer_gib = 0.0077;
inline constexpr double k_graph_per_moe_unit_gib = 0.852;

// vLLM's own profile estimate of the graphs ("Estimated CUDA graph memory: X GiB total"), which
// v0.21+ subtracts before sizing the KV cache: the same form, least squares on the 38 rows that
// log it (v0.19 onward; the estimate extrapolates the second-largest capture over the others).
inline constexpr double k_graph_est_per_1024_hidden_gib = 0.1132;
inline constexpr double k_graph_est_per_layer_gib = 0.0098;
inline constexpr double k_graph_est_per_moe_unit_gib = 0.662;

}  // namespace headroom::engine
