#!/usr/bin/env python3
"""Fits headroom's empirical memory constants on vLLM startup measurements.

    build/bench_accuracy --features /tmp/features.jsonl     # structural inputs per calibration row
    scripts/fit_calibration.py /tmp/features.jsonl [--write src/engine/calibration_constants.h]

The engine computes everything derivable (weights, pages, blocks); this script fits only the terms
vLLM measures at startup, each as a model of how it depends on the inputs:
  activation A = max(forward, c_sampler(era) * R * V) + k_moe * moe_workspace + encoder cache
  non-torch  N = median per (era, parallel layout)
  graphs     G = (g0 * hidden/1024 + g1 * layers) * sizes/51 + g2 * [MoE]   (least squares)
Rows are grouped by mechanism, never keyed by model. Prints the fit and, with --write, the header.
"""
import json
import statistics
import sys

GIB = 2 ** 30


def era_key(version):
    major, minor = (int(x) for x in version.split(".")[:2])
    if (major, minor) < (0, 8):
        return "v0"
    if (major, minor) < (0, 11):
        return "v1_0.8_0.10"
    if (major, minor) < (0, 17):
        return "v1_0.11_0.16"
    return "v1_0.17_plus"


def nt_key(version):
    major, minor = (int(x) for x in version.split(".")[:2])
    return "from_v018" if (major, minor) >= (0, 18) else "before_v018"


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    write = sys.argv[sys.argv.index("--write") + 1] if "--write" in sys.argv else None

    # 1. Sampler bytes per logit: rows whose activation is clearly above the forward pass (the
    # sampler is the peak), the MoE workspace taken out at the current factor estimate.
    sampler = {}
    for r in rows:
        if not r.get("last_stage_has_sampler") or r["requests"] <= 0:
            continue
        a = r.get("observed_activation_peak_gib")
        if a is None:
            # v0.8-v0.10 logs do not print the activation peak; it follows from the KV size:
            # A = budget - weights - non-torch - KV (non-torch taken as the v0.11 single-GPU median).
            kv = r.get("observed_kv_cache_gib")
            if kv is None or era_key(r["version"]) != "v1_0.8_0.10" or r["moe"]:
                continue
            a = (r["budget_bytes"] - r["weights_bytes"]) / GIB - 0.13 * (1 if r["tp"] == 1 else 4) - kv
        if r["moe"]:
            continue
        a_bytes = a * GIB - r.get("encoder_bytes", 0)
        if a_bytes < 1.3 * r["forward_bytes"]:
            continue  # forward-dominated: says nothing about the sampler
        sampler.setdefault(era_key(r["version"]), []).append(
            (a_bytes / (r["requests"] * r["vocab_padded"]), r["id"]))
    print("sampler bytes per logit (median):")
    fit_sampler = {}
    for era, vals in sorted(sampler.items()):
        med = statistics.median(v for v, _ in vals)
        fit_sampler[era] = (round(med, 1), len(vals))
        print(f"  {era:16s} {med:6.1f}  n={len(vals)}")

    # 2. MoE workspace factor: what MoE rows carry above the dense prediction.
    c_new = fit_sampler.get("v1_0.17_plus", (15.4, 0))[0]
    moe_ratios = []
    for r in rows:
        a = r.get("observed_activation_peak_gib")
        if not r["moe"] or a is None or r["moe_bytes_unit"] <= 0 or era_key(r["version"]) != "v1_0.17_plus":
            continue
        dense = max(r["forward_bytes"], c_new * r["requests"] * r["vocab_padded"]) + r.get("encoder_bytes", 0)
        moe_ratios.append((a * GIB - dense) / r["moe_bytes_unit"])
    k_moe = round(statistics.median(moe_ratios), 2) if moe_ratios else 0.8
    print(f"moe workspace factor: {k_moe}  n={len(moe_ratios)}")

    # 3. Non-torch by era and layout.
    nt = {}
    for r in rows:
        n = r.get("observed_non_torch_gib")
        if n is None or r["era"].startswith("V0"):
            continue
        layout = "tp" if r["tp"] > 1 else ("pp" if r["pp"] > 1 else "single")
        nt.setdefault((nt_key(r["version"]), layout), []).append(n)
    print("non-torch GiB (median):")
    fit_nt = {}
    for k, vals in sorted(nt.items()):
        fit_nt[k] = (round(statistics.median(vals), 2), len(vals))
        print(f"  {k[0]:12s} {k[1]:7s} {statistics.median(vals):5.2f}  n={len(vals)}")

    # 4. CUDA graphs: least squares on rows with a positive "Graph capturing ... took" value of
    # the v0.17+ era (earlier logs report the capture delta, which can be negative).
    xs, ys = [], []
    for r in rows:
        g = r.get("observed_cuda_graph_gib")
        if g is None or g <= 0 or r["enforce_eager"] or era_key(r["version"]) != "v1_0.17_plus":
            continue
        scale = r["num_graph_sizes"] / 51.0
        xs.append([r["hidden_size"] / 1024.0 * scale, r["layers_per_stage"] * scale, 1.0 if r["moe"] else 0.0])
        ys.append(g)
    coef = least_squares(xs, ys) if len(xs) >= 3 else [0.09, 0.0175, 0.4]
    print(f"graphs: {coef[0]:.4f} GiB per 1024 hidden + {coef[1]:.4f} GiB/layer (x sizes/51) + MoE {coef[2]:.3f} GiB  n={len(xs)}")

    if write:
        with open(write, "w") as f:
            f.write(render_header(fit_sampler, k_moe, len(moe_ratios), fit_nt, coef, len(xs)))
        print("wrote", write)
    return 0


def least_squares(xs, ys):
    # Normal equations for a 3-parameter linear model (no numpy needed).
    n = len(xs[0])
    ata = [[sum(x[i] * x[j] for x in xs) for j in range(n)] for i in range(n)]
    aty = [sum(x[i] * y for x, y in zip(xs, ys)) for i in range(n)]
    for i in range(n):  # Gaussian elimination
        p = max(range(i, n), key=lambda r: abs(ata[r][i]))
        ata[i], ata[p], aty[i], aty[p] = ata[p], ata[i], aty[p], aty[i]
        for r in range(i + 1, n):
            f = ata[r][i] / ata[i][i]
            for c in range(i, n):
                ata[r][c] -= f * ata[i][c]
            aty[r] -= f * aty[i]
    out = [0.0] * n
    for i in reversed(range(n)):
        out[i] = (aty[i] - sum(ata[i][c] * out[c] for c in range(i + 1, n))) / ata[i][i]
    return out


def render_header(s, k_moe, n_moe, nt, g, n_g):
    def sv(era, default):
        return s.get(era, (default, 0))

    old, new, mid = sv("v1_0.11_0.16", 38.9), sv("v1_0.17_plus", 15.4), sv("v1_0.8_0.10", 12.0)

    def ntv(era, layout, default):
        return nt.get((era, layout), (default, 0))

    b1, b2, b3 = ntv("before_v018", "single", 0.13), ntv("before_v018", "tp", 0.55), ntv("before_v018", "pp", 0.07)
    a1, a2, a3 = ntv("from_v018", "single", 0.25), ntv("from_v018", "tp", 2.13), ntv("from_v018", "pp", 0.07)
    return f"""// Empirical constants of the memory model. Written by scripts/fit_calibration.py from the
// features bench_accuracy extracts from calibration/startup.jsonl (vLLM startup logs); rerun both
// when measurements arrive. Each constant says what it was fitted on. Do not edit by hand.
#pragma once

#include "headroom/vllm_version.h"

namespace headroom::engine {{

// Sampler warm-up bytes per [request x padded vocab] logit (activation peak A), by sampler era:
//   V0 and v0.11-v0.16 (top-k/top-p through a full sort of fp32 logits): {old[0]} (median of {old[1]} rows);
//   v0.8-v0.10 (FlashInfer top-k/top-p sampling kernels, no sort): {mid[0]} (median of {mid[1]} rows,
//     activation derived from the KV size because those logs do not print it);
//   v0.17 onward (sampler rewritten without the sort path): {new[0]} (median of {new[1]} rows).
inline double sampler_bytes_per_logit(const VllmVersion& v) {{
  if (v >= VllmVersion{{0, 17}}) return {new[0]};
  if (v >= VllmVersion{{0, 8}} && v < VllmVersion{{0, 11}}) return {mid[0]};
  return {old[0]};
}}

// Fraction of the fused-MoE intermediate caches that stays in the activation peak (median of
// {n_moe} MoE rows of v0.17+).
inline constexpr double k_moe_workspace_factor = {k_moe};

struct NonTorchEra {{
  double single_gpu_gib;
  double tensor_parallel_gib;
  double pipeline_parallel_gib;
}};

// Non-torch memory increase (N) by era and layout, medians:
//   before v0.18: single GPU {b1[0]} (n={b1[1]}), TP>1 {b2[0]} (n={b2[1]}), PP>1 {b3[0]} (n={b3[1]});
//   v0.18 onward: single GPU {a1[0]} (n={a1[1]}), TP>1 {a2[0]} (n={a2[1]}), PP>1 {a3[0]} (n={a3[1]}).
// Layouts without rows take the other era's value.
inline const NonTorchEra& non_torch_era(const VllmVersion& v) {{
  static const NonTorchEra k_before_v018{{{b1[0]}, {b2[0]}, {b3[0]}}};
  static const NonTorchEra k_from_v018{{{a1[0]}, {a2[0]}, {a3[0]}}};
  return v >= VllmVersion{{0, 18}} ? k_from_v018 : k_before_v018;
}}

// CUDA context + NCCL at the init snapshot: total - free in "worker init memory snapshot" lines
// (0.47-0.63 GiB at TP 1-2; 1.18 GiB at larger TP/EP), memory model section 8.3.
inline constexpr double k_baseline_context_gib = 0.5;
inline constexpr double k_baseline_per_extra_rank_gib = 0.1;

// CUDA graph memory ("Graph capturing finished ... took X GiB") =
//   (per-1024-hidden x hidden/1024 + per-layer x layers) x sizes/51 + MoE,
// least squares on {n_g} v0.17+ rows (no intercept: a tiny model captures tiny graphs).
inline constexpr double k_graph_per_1024_hidden_gib = {g[0]:.4f};
inline constexpr double k_graph_per_layer_gib = {g[1]:.4f};
inline constexpr double k_graph_moe_extra_gib = {g[2]:.3f};

}}  // namespace headroom::engine
"""


if __name__ == "__main__":
    sys.exit(main())
