// The words of a plan: each choice with the number that drove it, and why the utilization is
// what it is — including what vLLM's default and the usual advice ("lower it to 0.80") would do.
#include <cmath>

#include "engine/vllm_defaults.h"
#include "plan/plan_internal.h"
#include "util/strings.h"

namespace headroom::plan {

std::string gib(Bytes b) { return util::fixed(to_gib(b), 2) + " GiB"; }
std::string util_text(int percent) { return util::fixed(percent / 100.0, 2); }
std::string util_text(double fraction) { return util::fixed(fraction, 2); }
std::string layout_text(Layout l) { return "tp=" + std::to_string(l.tp) + " pp=" + std::to_string(l.pp); }

namespace {

Bytes other_processes(const GpuSetup& g) { return g.free_bytes ? g.gpu.total_bytes - *g.free_bytes : 0; }

std::string requests_text(double n) { return util::fixed(std::floor(n * 100.0) / 100.0, 2); }

}  // namespace

std::string upper_reason(const SearchState& s, const Evaluation& e) {
  if (!e.above_hi || !e.above_hi->failure) return util_text(e.k_hi) + " is the highest value the plan sets";
  const Prediction& p = *e.above_hi;
  const auto& c = p.failure->error_class;
  const Bytes total = s.gpus.gpu.total_bytes;
  const std::string next = util_text(e.k_hi + 1);
  if (c == "startup_free_memory_insufficient") {
    const Bytes free_at_start = s.gpus.free_bytes.value_or(total) - p.memory.baseline;
    return "vLLM's startup check needs total × utilization ≤ free memory at start: " + gib(free_at_start) + " (" + gib(total) +
           " − " + gib(other_processes(s.gpus)) + " other processes − " + gib(p.memory.baseline) + " CUDA context) − " +
           gib(s.margin) + " margin = " + util::fixed(static_cast<double>(free_at_start - s.margin) / static_cast<double>(total), 4) +
           " × total; " + next + " asks for " + gib(static_cast<Bytes>(std::ceil(static_cast<double>(total) * (e.k_hi + 1) / 100.0)));
  }
  if (c == "cuda_graph_capture_oom")
    return "CUDA graphs (" + gib(p.memory.cuda_graph) + ") are captured after the KV cache is allocated; at " + next +
           " they no longer fit beside it with the " + gib(s.margin) + " margin";
  return "the sampler warm-up after the KV cache allocation would run out of memory at " + next + " (with the " + gib(s.margin) +
         " margin)";
}

std::string lower_reason(const SearchState& s, const Evaluation& e) {
  const std::string need = std::to_string(e.concurrency) + " request" + (e.concurrency == 1 ? "" : "s") + " of " +
                           util::with_commas(e.max_model_len) + " tokens";
  if (!e.below_lo) return "the KV cache holds " + need + " even at " + util_text(e.k_lo);
  return "the KV cache must hold " + need + "; at " + util_text(e.k_lo - 1) + " it holds " + requests_text(e.below_lo->max_concurrency);
}

void explain(SearchState& s, const Evaluation& chosen, Plan& plan) {
  PlannedConfig& rec = *plan.recommended;
  const Prediction& p = rec.prediction;
  const auto& st = p.settings;
  const auto& m = p.memory;
  auto& ch = rec.choices;
  const auto& r = s.request;

  // Layout.
  {
    std::string why;
    std::vector<std::string> smaller;
    for (const auto& t : s.tried)
      if (!t.feasible && t.layout.gpus() < chosen.layout.gpus()) smaller.push_back(layout_text(t.layout) + ": " + t.failure);
    if (r.goal == PlanGoal::latency) why = "goal latency: the largest tensor-parallel group that serves the workload";
    else if (r.goal == PlanGoal::context) why = "goal context: the fewest GPUs that reach the longest context";
    else why = "goal throughput: the layout that serves the most requests at once over the GPUs allowed";
    why += "; weights " + gib(m.weights) + " per GPU";
    if (!smaller.empty()) why += "; smaller layouts fail (" + smaller.front() + ")";
    ch.push_back({"tensor_parallel_size", std::to_string(st.tensor_parallel_size), why});
    if (st.pipeline_parallel_size > 1)
      ch.push_back({"pipeline_parallel_size", std::to_string(st.pipeline_parallel_size),
                    "tensor parallelism stops at " + std::to_string(st.tensor_parallel_size) +
                        " GPUs (one node, or the heads do not split further); pipeline stages take the rest"});
    if (st.data_parallel_size > 1)
      ch.push_back({"data_parallel_size", std::to_string(st.data_parallel_size),
                    std::to_string(st.data_parallel_size) + " replicas of " + std::to_string(rec.replica_gpus) + " GPU(s) use the " +
                        std::to_string(s.gpu_limit) + " GPUs allowed"});
  }
  // Context.
  {
    std::string why;
    if (r.context_tokens && r.goal != PlanGoal::context) why = "--context";
    else if (st.max_model_len == plan.model_max_len) why = "the model's maximum (" + util::with_commas(plan.model_max_len) + ")";
    else why = "the longest that holds " + std::to_string(r.concurrency) + " request(s) (the model allows " + util::with_commas(plan.model_max_len) + ")";
    ch.push_back({"max_model_len", std::to_string(st.max_model_len), why});
  }
  ch.push_back({"gpu_memory_utilization", util::fixed(st.gpu_memory_utilization, 2),
                "safe from " + util_text(rec.utilization_min) + " to " + util_text(rec.utilization_max) + ": the top, for the largest KV cache. Up: " +
                    rec.utilization_max_reason + ". Down: " + rec.utilization_min_reason});
  ch.push_back({"max_num_seqs", std::to_string(st.max_num_seqs),
                chosen.variant.max_num_seqs
                    ? (r.goal == PlanGoal::throughput ? "lowered from vLLM's default: its activation and CUDA graph memory did not leave room for the KV cache"
                                                      : "the workload's concurrency; fewer sequences mean a smaller activation peak and fewer CUDA graphs")
                    : "vLLM's default for this GPU; the KV cache holds " + requests_text(p.max_concurrency) + " requests of " +
                          util::with_commas(st.max_model_len) + " tokens at once, shorter ones more"});
  ch.push_back({"max_num_batched_tokens", std::to_string(st.max_num_batched_tokens),
                "vLLM's default chunked-prefill step here; activation peak " + gib(m.activation_peak)});
  ch.push_back({"kv_cache_dtype", st.kv_cache_dtype,
                st.kv_cache_dtype == "fp8_ds_mla"
                    ? "the sparse-MLA default: vLLM stores this model's latent as fp8_ds_mla (" +
                          util::with_commas(p.kv.bytes_per_token) + " bytes per token per GPU)"
                : st.kv_cache_dtype == "auto" ? "the model's dtype (" + st.dtype + "), " + util::with_commas(p.kv.bytes_per_token) +
                                                  " bytes per token per GPU" + (r.allow_fp8_kv ? "" : "; fp8 not allowed (--allow-fp8-kv)")
                                            : "fp8 halves the bytes per token (" + util::with_commas(p.kv.bytes_per_token) + " per GPU)"});
  ch.push_back({"enforce_eager", st.enforce_eager ? "true" : "false",
                st.enforce_eager ? "CUDA graphs did not fit; eager mode frees their memory (allowed by --allow-eager)"
                                 : "CUDA graphs (" + gib(m.cuda_graph) + ") fit" + (st.estimate_cuda_graphs ? " inside the budget" : " outside the budget")});
  ch.push_back({"enable_prefix_caching", st.enable_prefix_caching ? "true" : "false",
                plan_hybrid_state_note(s.model, s.version, st).value_or("vLLM's default for this model and version")});
  ch.push_back({"enable_chunked_prefill", st.enable_chunked_prefill ? "true" : "false", "vLLM's default for this version"});

  // The utilization story, with the numbers of this setup.
  auto& ex = plan.explanation;
  const Bytes others = other_processes(s.gpus);
  ex.push_back("Lowering gpu_memory_utilization shrinks only the KV cache: the weights (" + gib(m.weights) + "), activation peak (" +
               gib(m.activation_peak) + "), non-torch memory (" + gib(m.non_torch) + ")" +
               (st.estimate_cuda_graphs ? " and CUDA graphs (" + gib(m.cuda_graph) + ")" : "") +
               " come out of the budget at any value, and the memory outside it (CUDA context " + gib(m.baseline) +
               (others > 0 ? ", other processes " + gib(others) : "") +
               (st.estimate_cuda_graphs ? "" : ", CUDA graphs " + gib(m.cuda_graph)) + ") does not shrink.");
  auto at = [&](double u) {
    VllmFlags f = rec.flags;
    f.gpu_memory_utilization = u;
    return predict(s.model, s.gpus, f, s.version);
  };
  const double dflt = engine::default_gpu_memory_utilization(s.version);
  bool default_starts = false;
  if (auto d = at(dflt)) {
    default_starts = d->starts;
    if (d->starts)
      ex.push_back("vLLM's default " + util_text(dflt) + " starts here too (" + util::with_commas(d->kv_cache_tokens) + " KV tokens)" +
                   (dflt > rec.utilization_max ? ", but leaves less than the " + gib(s.margin) + " safety margin" : "") + ".");
    else
      ex.push_back("vLLM's default " + util_text(dflt) + " fails at " + d->failure->phase + ": " + d->failure->message);
  }
  if (std::fabs(rec.flags.gpu_memory_utilization.value_or(0) - 0.80) > 1e-9) {
    if (auto a = at(0.80)) {
      std::string line = "The usual advice, 0.80: ";
      if (!a->starts) {
        line += "fails at " + a->failure->phase + " (" + a->failure->message + ")";
        if (is_kv_failure(a->failure->error_class)) line += " — lowering is the wrong direction here";
      } else if (0.80 < st.gpu_memory_utilization) {
        const double loss = 1.0 - static_cast<double>(a->kv_cache_tokens) / static_cast<double>(std::max<std::int64_t>(1, p.kv_cache_tokens));
        line += "starts, with " + util::with_commas(a->kv_cache_tokens) + " KV tokens instead of " + util::with_commas(p.kv_cache_tokens) +
                " at " + util::fixed(st.gpu_memory_utilization, 2) + " (" + util::fixed(loss * 100.0, 0) + "% less)";
        if (!st.estimate_cuda_graphs && !st.enforce_eager && !default_starts)
          line += ". In this version CUDA graphs (" + gib(m.cuda_graph) + ") and the sampler warm-up need room outside the budget, so "
                  "lowering is the right direction down to " + util::fixed(st.gpu_memory_utilization, 2) +
                  "; going further only shrinks the KV cache";
        else
          line += " for no gain: nothing else gets smaller";
      } else {
        line += "starts with " + util::with_commas(a->kv_cache_tokens) + " KV tokens but leaves less than the " + gib(s.margin) +
                " margin outside the budget";
      }
      ex.push_back(line + ".");
    }
  }
  if (others > 0)
    ex.push_back("Other processes hold " + gib(others) + " on each GPU: vLLM (v0.9.1 on) checks at startup that total × utilization is free, "
                 "so they lower the highest value that starts; they do not take from the KV cache.");
  if (auto note = nvfp4_kernel_note(s.model, s.gpus.gpu)) ex.push_back(*note);
  for (const auto& w : p.warnings) ex.push_back("warning: " + w);
}

}  // namespace headroom::plan
