#!/usr/bin/env python3
"""Fits headroom's empirical memory constants on vLLM startup measurements.

    build/bench_accuracy --features /tmp/features.jsonl     # structural inputs per calibration row
    scripts/fit_calibration.py /tmp/features.jsonl [--write src/engine/calibration_constants.h]

The engine computes everything derivable (weights, pages, blocks); this script fits only the terms
vLLM measures at startup, each as a model of how it depends on the inputs:
  activation A = max(forward, c_sampler(era) * R * V) + k_moe * moe_workspace + encoder cache
               (V1 before v0.17: max(forward + k_moe * moe_workspace, sampler) + encoder cache)
  non-torch  N = single-GPU median per era; + all-reduce buffers at TP > 1 on NVSwitch boards
               (median of TP rows minus the single-GPU value, per era); PP rows: their median
  graphs     G = (g0 * hidden/1024 + g1 * layers + g2 * moe_units) * graphs/102   (least squares;
               graphs = PIECEWISE sizes + FULL decode sizes <= max_num_seqs from v0.11; every
               captured graph holds its own fused-MoE caches, so the MoE term scales too;
               moe_units = (3 * moe_intermediate / TP + hidden) / (3 * moe_intermediate + hidden): the
               share of the fused-MoE caches per token one GPU holds, 1 on one GPU, 0 for dense models)
  graph estimate  vLLM's own profile estimate (what v0.21+ subtracts before KV sizing): the same
               form, least squares on the rows that log "Estimated CUDA graph memory"
Rows are grouped by mechanism, never keyed by model. Prints the fit with each constant's residuals,
then leave-one-GPU-family-out and leave-one-version-era-out errors (each group's rows predicted by
constants fitted without them), and with --write the header.
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


def fit(rows, verbose):
    """Fits every constant on `rows`; returns them (printing each with its row count when verbose)."""
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
            if kv is None or era_key(r["version"]) != "v1_0.8_0.10" or r["moe"] or r["tp"] != 1:
                continue  # TP rows carry all-reduce buffers that would be read as activation
            a = (r["budget_bytes"] - r["weights_bytes"]) / GIB - 0.13 * (1 if r["tp"] == 1 else 4) - kv
        if r["moe"]:
            continue
        if r.get("encoder_bytes", 0) > 0:
            continue  # multimodal: the vision encoder's own profile peak is not modelled (docs/accuracy.md)
        if 100.0 * r["requests"] * r["vocab_padded"] < r["forward_bytes"]:
            continue  # even 100 B per logit stays below the forward pass: the sampler cannot be the peak
        a_bytes = a * GIB - r.get("encoder_bytes", 0)
        if a_bytes < 1.3 * r["forward_bytes"]:
            continue  # forward-dominated: says nothing about the sampler
        sampler.setdefault(era_key(r["version"]), []).append(
            (a_bytes / (r["requests"] * r["vocab_padded"]), r["id"]))
    if verbose:
        print("sampler bytes per logit (median):")
    fit_sampler = {}
    for era, vals in sorted(sampler.items()):
        med = statistics.median(v for v, _ in vals)
        fit_sampler[era] = (round(med, 1), len(vals))
        if verbose:
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
    if verbose:
        print(f"moe workspace factor: {k_moe}  n={len(moe_ratios)}")

    # 3. Non-torch: single GPU by era; TP on NVSwitch boards adds the all-reduce buffers; PP apart.
    single, tp_nv, pp_rows = {}, {}, []
    for r in rows:
        n = r.get("observed_non_torch_gib")
        if n is None or r["era"].startswith("V0"):
            continue
        if r["tp"] > 1:
            if r.get("interconnect") == "nvswitch":
                # NCCL's NVLS buffers at TP > 2 are derived, not fitted (engine::nvls_buffer_bytes).
                tp_nv.setdefault(nt_key(r["version"]), []).append(n - r.get("nvls_bytes", 0) / GIB)
        elif r["pp"] > 1:
            pp_rows.append(n)
        else:
            single.setdefault(nt_key(r["version"]), []).append(n)
    fit_nt = {}
    all_single = [v for vals in single.values() for v in vals]
    for era in ("before_v018", "from_v018"):
        s1 = single.get(era, [])
        # An era without rows takes the median of the others (no constant leaks into a held-out era).
        base = statistics.median(s1) if s1 else (statistics.median(all_single) if all_single else 0.2)
        fit_nt[(era, "single")] = (round(base, 2), len(s1))
        t = tp_nv.get(era, [])
        fit_nt[(era, "nvswitch")] = (round(statistics.median(t) - base, 2) if t else None, len(t))
    fit_nt[("any", "pp")] = (round(statistics.median(pp_rows), 2) if pp_rows else 0.07, len(pp_rows))
    if verbose:
        print("non-torch GiB:")
        for k, (v, n) in sorted(fit_nt.items(), key=lambda kv: str(kv[0])):
            print(f"  {k[0]:12s} {k[1]:9s} {v if v is not None else '-':>5}  n={n}")

    # 4. CUDA graphs: least squares on rows with a positive "Graph capturing ... took" value of
    # the v0.17+ era (earlier logs report the capture delta, which can be negative).
    xs, ys = [], []
    for r in rows:
        g = r.get("observed_cuda_graph_gib")
        if g is None or g <= 0 or r["enforce_eager"] or era_key(r["version"]) != "v1_0.17_plus":
            continue
        scale = r["num_graphs"] / 102.0
        xs.append([r["hidden_size"] / 1024.0 * scale, r["layers_per_stage"] * scale, r.get("moe_graph_units", 0.0) * scale])
        ys.append(g)
    coef = least_squares(xs, ys) if len(xs) >= 3 else [0.1161, 0.0127, 0.502]
    if verbose:
        print(f"graphs: ({coef[0]:.4f} GiB per 1024 hidden + {coef[1]:.4f} GiB/layer + {coef[2]:.3f} GiB per MoE unit) x graphs/102  n={len(xs)}")

    # 5. vLLM's own profile estimate of the graphs ("Estimated CUDA graph memory: X GiB total"),
    # which is what v0.21+ subtracts before sizing the KV cache: the same form, on the rows that log it.
    ex, ey = [], []
    for r in rows:
        e = r.get("observed_graph_estimate_gib")
        if e is None or e <= 0 or r["enforce_eager"] or r["num_graphs"] <= 0:
            continue
        scale = r["num_graphs"] / 102.0
        ex.append([r["hidden_size"] / 1024.0 * scale, r["layers_per_stage"] * scale, r.get("moe_graph_units", 0.0) * scale])
        ey.append(e)
    coef_est = least_squares(ex, ey) if len(ex) >= 3 else list(coef)
    if verbose:
        print(f"graph estimate: ({coef_est[0]:.4f} GiB per 1024 hidden + {coef_est[1]:.4f} GiB/layer + {coef_est[2]:.3f} GiB per MoE unit)"
              f" x graphs/102  n={len(ex)}")
    return {"sampler": fit_sampler, "k_moe": k_moe, "n_moe": len(moe_ratios), "nt": fit_nt, "graph": coef, "n_graph": len(xs),
            "graph_est": coef_est, "n_graph_est": len(ex)}


DEFAULT_SAMPLER = {"v0": 38.9, "v1_0.8_0.10": 12.5, "v1_0.11_0.16": 38.9, "v1_0.17_plus": 15.4}


def predict_terms(params, r):
    """The empirical terms (GiB) the fitted constants give for a row: activation, non-torch, graphs."""
    era = era_key(r["version"])
    fitted = params["sampler"]
    if era == "v0" and era not in fitted:
        era = "v1_0.11_0.16"  # V0's sampler is the sort path, as v0.11-v0.16
    if era in fitted:
        c = fitted[era][0]
    else:  # held out: the nearest fitted era
        order = ["v0", "v1_0.8_0.10", "v1_0.11_0.16", "v1_0.17_plus"]
        i = order.index(era)
        near = sorted((abs(order.index(e) - i), e) for e in fitted)
        c = fitted[near[0][1]][0] if near else DEFAULT_SAMPLER[era]
    sampler = c * r["requests"] * r["vocab_padded"] if r.get("last_stage_has_sampler") else 0
    moe = params["k_moe"] * r["moe_bytes_unit"]
    if era_key(r["version"]) in ("v1_0.8_0.10", "v1_0.11_0.16"):
        # Before v0.17 the fused-MoE workspace lives only through the forward pass.
        a = (max(r["forward_bytes"] + moe, sampler) + r.get("encoder_bytes", 0)) / GIB
    else:
        a = (max(r["forward_bytes"], sampler) + moe + r.get("encoder_bytes", 0)) / GIB
    nt = params["nt"]
    key = nt_key(r["version"])
    n = nt[(key, "single")][0]
    if r["tp"] > 1:
        if r.get("interconnect") == "nvswitch":
            extra = nt[(key, "nvswitch")][0]
            if extra is None:  # no rows of that era: the other era's value
                other = "from_v018" if key == "before_v018" else "before_v018"
                extra = nt[(other, "nvswitch")][0] or 0.0
            n += extra + r.get("nvls_bytes", 0) / GIB
        else:  # NVLink before Hopper, or PCIe: NCCL's buffers (no NVLS without NVSwitch)
            n += 0.0625 * (r["tp"] - 1)
    elif r["pp"] > 1:
        n = nt[("any", "pp")][0]
    g0, g1, g2 = params["graph"]
    scale = r["num_graphs"] / 102.0
    g = 0.0 if r["enforce_eager"] else (g0 * r["hidden_size"] / 1024.0 + g1 * r["layers_per_stage"] + g2 * r.get("moe_graph_units", 0.0)) * scale
    return a, n, g


def errors(params, rows):
    """Per term, absolute % errors of the rows that observe it; and the KV error (% of observed KV)
    that the activation and non-torch errors cause (graphs are outside the budget before v0.21)."""
    out = {"activation": [], "non_torch": [], "graphs": [], "graph_estimate": [], "kv_from_terms": []}
    for r in rows:
        a, n, g = predict_terms(params, r)
        oe = r.get("observed_graph_estimate_gib")
        if oe and oe > 0 and not r["enforce_eager"] and r["num_graphs"] > 0:
            e0, e1, e2 = params["graph_est"]
            ge = (e0 * r["hidden_size"] / 1024.0 + e1 * r["layers_per_stage"] + e2 * r.get("moe_graph_units", 0.0)) * r["num_graphs"] / 102.0
            out["graph_estimate"].append(abs(ge - oe) / oe * 100)
        oa, on, og, okv = (r.get(k) for k in ("observed_activation_peak_gib", "observed_non_torch_gib",
                                               "observed_cuda_graph_gib", "observed_kv_cache_gib"))
        if oa:
            out["activation"].append(abs(a - oa) / oa * 100)
        if on:
            out["non_torch"].append(abs(n - on) / on * 100)
        if og and og > 0 and era_key(r["version"]) == "v1_0.17_plus":
            out["graphs"].append(abs(g - og) / og * 100)
        if okv and oa is not None and on is not None and okv > 0:
            out["kv_from_terms"].append(abs((a - oa) + (n - on)) / okv * 100)
    return out


def summary(vals):
    if not vals:
        return "    -"
    v = sorted(vals)
    p90 = v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]
    return f"median {statistics.median(v):6.2f}%  p90 {p90:6.2f}%  n={len(v)}"


def leave_one_out(rows, key, label):
    """Each group's rows predicted by constants fitted on the other groups."""
    print(f"\nleave-one-{label}-out (constants refitted without the group, errors on the group):")
    for group in sorted({r[key] for r in rows}):
        test = [r for r in rows if r[key] == group]
        params = fit([r for r in rows if r[key] != group], verbose=False)
        e = errors(params, test)
        if not any(e.values()):
            continue
        print(f"  {group}")
        for term, vals in e.items():
            if vals:
                print(f"    {term:14s} {summary(vals)}")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    write = sys.argv[sys.argv.index("--write") + 1] if "--write" in sys.argv else None
    params = fit(rows, verbose=True)
    print("\nresiduals in-sample (all rows):")
    for term, vals in errors(params, rows).items():
        print(f"  {term:14s} {summary(vals)}")
    for r in rows:
        r["version_era"] = era_key(r["version"])
    leave_one_out(rows, "family", "GPU-family")
    leave_one_out(rows, "version_era", "version-era")
    if write:
        with open(write, "w") as f:
            f.write(render_header(params))
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


def render_header(params):
    s, k_moe, n_moe, nt, g, n_g = (params["sampler"], params["k_moe"], params["n_moe"], params["nt"], params["graph"],
                                   params["n_graph"])
    ge, n_ge = params["graph_est"], params["n_graph_est"]

    def sv(era, default):
        return s.get(era, (default, 0))

    old, new, mid = sv("v1_0.11_0.16", 38.9), sv("v1_0.17_plus", 15.4), sv("v1_0.8_0.10", 12.0)

    def ntv(era, layout, default):
        v = nt.get((era, layout), (default, 0))
        return (default if v[0] is None else v[0], v[1])

    b1, b2 = ntv("before_v018", "single", 0.13), ntv("before_v018", "nvswitch", 0.42)
    a1, a2 = ntv("from_v018", "single", 0.25), ntv("from_v018", "nvswitch", 1.88)
    pp = ntv("any", "pp", 0.07)
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
  double single_gpu_gib;           // kernel images loaded during the profile run
  double nvswitch_all_reduce_gib;  // added at TP > 1 on Hopper/Blackwell NVLink boards
}};

// Non-torch memory increase (N), single GPU, medians by era: before v0.18 {b1[0]} (n={b1[1]}), v0.18
// onward {a1[0]} (n={a1[1]}). All-reduce buffers at TP > 1 on NVSwitch boards, above the single-GPU
// value (median of the TP rows minus it, after taking out the NVLS buffers that
// nvls_buffer_bytes derives for TP > 2): {b2[0]} before v0.18 (n={b2[1]}), {a2[0]} from v0.18
// (n={a2[1]}); an era without TP rows takes the other era's value.
inline const NonTorchEra& non_torch_era(const VllmVersion& v) {{
  static const NonTorchEra k_before_v018{{{b1[0]}, {b2[0]}}};
  static const NonTorchEra k_from_v018{{{a1[0]}, {a2[0]}}};
  return v >= VllmVersion{{0, 18}} ? k_from_v018 : k_before_v018;
}}

// TP > 1 without NVSwitch (PCIe boards, and NVLink before Hopper, which has no NVLS: NVLink SHARP
// needs Hopper's NVSwitch): NCCL's buffers, derived from NCCL's defaults (NCCL_BUFFSIZE 4 MiB x
// send/recv x up to 8 channels per peer = 64 MiB); custom all-reduce adds a few MiB where it runs.
// Not fitted; the one same-node A100 TP 2 row (v0.10.1) implies about 0.08 GiB at TP 2.
inline constexpr double k_nccl_buffers_per_peer_gib = 0.0625;
// Pipeline-parallel runs (TP 1): the first stage's whole N, median of {pp[1]} rows; lower than a
// single GPU's because that stage never runs the sampler's kernels.
inline constexpr double k_pipeline_non_torch_gib = {pp[0]};

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
// least squares on {n_g} v0.17+ rows (no intercept: a tiny model captures tiny graphs).
inline constexpr double k_graph_per_1024_hidden_gib = {g[0]:.4f};
inline constexpr double k_graph_per_layer_gib = {g[1]:.4f};
inline constexpr double k_graph_per_moe_unit_gib = {g[2]:.3f};

// vLLM's own profile estimate of the graphs ("Estimated CUDA graph memory: X GiB total"), which
// v0.21+ subtracts before sizing the KV cache: the same form, least squares on the {n_ge} rows that
// log it (v0.19 onward; the estimate extrapolates the second-largest capture over the others).
inline constexpr double k_graph_est_per_1024_hidden_gib = {ge[0]:.4f};
inline constexpr double k_graph_est_per_layer_gib = {ge[1]:.4f};
inline constexpr double k_graph_est_per_moe_unit_gib = {ge[2]:.3f};

}}  // namespace headroom::engine
"""


if __name__ == "__main__":
    sys.exit(main())
