// make_plan(): validates the request, enumerates the parallel layouts vLLM accepts for the model,
// finds for each the first flag variant that serves the workload with the safety margin, picks
// one by the goal and adds the alternatives (docs/plan.md describes the order of preference).
#include <algorithm>
#include <cmath>

#include "engine/hf_overrides.h"
#include "engine/vllm_defaults.h"
#include "headroom/engine_limits.h"
#include "headroom/history.h"
#include "plan/plan_internal.h"
#include "util/strings.h"

namespace headroom {

std::string_view to_string(PlanGoal goal) {
  switch (goal) {
    case PlanGoal::throughput: return "throughput";
    case PlanGoal::context: return "context";
    case PlanGoal::latency: return "latency";
  }
  return "?";
}

Result<PlanGoal> parse_plan_goal(std::string_view text) {
  if (text == "throughput") return PlanGoal::throughput;
  if (text == "context") return PlanGoal::context;
  if (text == "latency") return PlanGoal::latency;
  return make_error(ErrorCode::invalid_argument, "expected throughput, context or latency, got '" + std::string(text) + "'",
                    "--goal");
}

Bytes default_plan_margin(const GpuSpec& gpu) {
  return std::max<Bytes>(512 * k_mib, static_cast<Bytes>(static_cast<double>(gpu.total_bytes) * 0.02));
}

namespace plan {

namespace {

// Tensor-parallel sizes vLLM accepts for the model: attention heads divide evenly, KV heads divide
// or are replicated, and 4-bit group-quantized MLP widths stay whole groups per rank.
bool valid_tp(const ModelSpec& m, int tp) {
  if (m.num_attention_heads > 0 && m.num_attention_heads % tp != 0) return false;
  if (m.num_kv_heads > 0 && m.num_kv_heads % tp != 0 && tp % m.num_kv_heads != 0) return false;
  if (m.quantization && m.quantization->group_size > 0) {
    int width = m.moe && m.moe->moe_intermediate_size > 0 ? m.moe->moe_intermediate_size : m.intermediate_size;
    if (width > 0 && (width % tp != 0 || (width / tp) % m.quantization->group_size != 0)) return false;
  }
  return true;
}

// TP inside a node (vLLM's guidance: tensor parallel within a node, pipeline parallel across
// nodes); PP only once TP cannot grow further.
std::vector<Layout> layouts(const ModelSpec& m, const GpuSetup& g, int limit) {
  std::vector<int> tps;
  for (int t = 1; t <= std::min(g.count, limit); ++t)
    if (valid_tp(m, t)) tps.push_back(t);
  std::vector<Layout> out;
  for (int t : tps) out.push_back({t, 1});
  if (tps.empty()) return out;
  const int tmax = tps.back();
  for (int p = 2; p * tmax <= limit && p <= m.num_layers; ++p) out.push_back({tmax, p});
  return out;
}

bool fp8_kv_possible(const SearchState& s) {
  return s.gpus.gpu.fp8_supported && s.version.is_v1_engine() && !kv_dtype_is_fixed_fp8(s.model);
}

// Flag variants in order of preference: vLLM's batch defaults before smaller batches, CUDA graphs
// before eager mode; the fp8 KV cache first where it is allowed and the goal wants capacity.
std::vector<Variant> variants(const SearchState& s, int default_seqs) {
  const auto& r = s.request;
  std::vector<std::string> kv = {"auto"};
  if (r.allow_fp8_kv && fp8_kv_possible(s)) {
    if (r.goal == PlanGoal::latency) kv.push_back("fp8");
    else kv.insert(kv.begin(), "fp8");
  }
  std::vector<std::optional<int>> seqs;
  if (r.goal == PlanGoal::throughput) {
    seqs.push_back(std::nullopt);
    for (int n : {128, 64, 32, 16, 8, 4, 2, 1})
      if (n < default_seqs && n >= r.concurrency) seqs.push_back(n);
    if (r.concurrency < default_seqs && std::find(seqs.begin(), seqs.end(), std::optional<int>(r.concurrency)) == seqs.end())
      seqs.push_back(r.concurrency);
  } else {
    seqs.push_back(r.concurrency);
  }
  std::vector<bool> eager = {false};
  if (r.allow_eager) eager.push_back(true);
  std::vector<Variant> out;
  for (bool e : eager)
    for (const auto& k : kv)
      for (const auto& n : seqs) out.push_back(Variant{k, n, e});
  return out;
}

// The first variant of the layout that serves the workload; the last attempt when none does.
Evaluation best_variant(SearchState& s, Layout layout, const std::vector<Variant>& vs, std::int64_t len) {
  Evaluation last;
  for (const auto& v : vs) {
    Evaluation e = s.searcher.evaluate(layout, v, len, s.request.concurrency);
    if (e.feasible) return e;
    const bool first = last.failure.empty();
    // Weights that do not load and configurations vLLM rejects do not depend on the variant.
    if (e.failure_kind == FailureKind::weights && e.at_hi.failure && e.at_hi.failure->error_class == "weights_load_oom") return e;
    if (e.failure_kind == FailureKind::config || e.failure_kind == FailureKind::error) return e;
    if (first || e.failure_kind != FailureKind::weights) last = e;
  }
  return last;
}

std::int64_t round_context(std::int64_t len, std::int64_t model_max) {
  if (len >= model_max) return model_max;
  if (len >= 8192) return len / 1024 * 1024;
  if (len >= 1024) return len / 256 * 256;
  if (len >= 16) return len / 16 * 16;
  return len;
}

int data_parallel_for(const SearchState& s, Layout layout) {
  if (s.request.goal != PlanGoal::throughput || s.gpus.nodes > 1 || s.version < VllmVersion{0, 9}) return 1;
  return std::max(1, s.gpu_limit / layout.gpus());
}

// Requests served at once over all replicas, discounted 10% per doubling of the replica's GPUs
// for the all-reduce and pipeline bubbles a larger group pays (docs/plan.md).
double throughput_score(const SearchState& s, const Evaluation& e) {
  const double per_replica = std::min<double>(e.at_hi.settings.max_num_seqs, std::floor(e.at_hi.max_concurrency + 1e-9));
  return data_parallel_for(s, e.layout) * per_replica * std::pow(0.9, std::log2(static_cast<double>(e.layout.gpus())));
}

// The longest context (rounded as a user writes it) that some layout serves for `requests`
// requests at once, at least `at_least` tokens; 0 when none does.
std::int64_t longest_served(SearchState& s, const std::vector<Layout>& layouts, const std::vector<Variant>& vs, int requests,
                            std::optional<std::int64_t> at_least) {
  std::int64_t best = 0;
  for (Layout l : layouts) {
    for (const auto& v : vs) {
      std::int64_t reach = s.searcher.longest_context(l, v, requests, s.model_max_len);
      if (reach <= 0) continue;
      if (at_least && reach < *at_least) continue;
      best = std::max(best, round_context(reach, s.model_max_len));
      break;
    }
  }
  return best;
}

// Without --context, a throughput or latency plan is sized for at least this many requests at
// once: the longest context that holds only one leaves a single utilization at which it starts, so
// the plan's own uncertainty (the KV range `check` prints) has no room. Not shorter than
// k_min_default_context unless nothing longer serves them.
constexpr int k_several_requests = 4;
constexpr std::int64_t k_min_default_context = 4096;

struct ContextChoice {
  std::int64_t tokens = 0;
  int requests = 1;  // the requests at once it was sized for
};

// The context the plan serves: the request's; for the context goal the longest that serves
// `concurrency` requests; otherwise the longest that serves several (the longest for one request is
// then the "longer context" alternative).
ContextChoice choose_context(SearchState& s, const std::vector<Layout>& layouts, const std::vector<Variant>& vs) {
  const auto& r = s.request;
  if (r.context_tokens && r.goal != PlanGoal::context) return {*r.context_tokens, r.concurrency};
  const std::int64_t longest = longest_served(s, layouts, vs, r.concurrency, r.context_tokens);
  if (longest <= 0) return {r.context_tokens.value_or(s.model_max_len), r.concurrency};
  if (r.goal == PlanGoal::context || r.concurrency >= k_several_requests) return {longest, r.concurrency};
  const std::int64_t several = longest_served(s, layouts, vs, k_several_requests, std::nullopt);
  if (several < std::min(longest, k_min_default_context)) return {longest, r.concurrency};
  return {several, k_several_requests};
}

// The max_model_len choice says why a context sized for several requests was picked.
void explain_default_context(const ContextChoice& context, const SearchState& s, Plan& plan) {
  if (!plan.recommended || context.requests <= s.request.concurrency) return;
  for (auto& c : plan.recommended->choices) {
    if (c.setting != "max_model_len" || std::stoll(c.value) == plan.model_max_len) continue;
    c.reason = "no --context given: the longest that holds " + std::to_string(context.requests) +
               " requests at once, so several are served and the utilization keeps room for the prediction's uncertainty "
               "(the model allows " + util::with_commas(plan.model_max_len) + "; a longer context for fewer requests is an alternative)";
  }
}

// vLLM's default max_num_seqs for this GPU (arg_utils.py get_batch_defaults; it does not depend
// on the layout), from one prediction.
Result<int> default_max_num_seqs(SearchState& s) {
  auto p = s.searcher.predict_with_margin({1, 1}, s.searcher.flags_for({1, 1}, Variant{"auto", std::nullopt, false},
                                                                       s.request.context_tokens.value_or(s.model_max_len), 90));
  if (!p) return tl::unexpected(p.error());
  return p->settings.max_num_seqs;
}

// Each layout's first variant that serves `len` (kept in s.tried); the feasible ones.
std::vector<Evaluation> evaluate_layouts(SearchState& s, const std::vector<Layout>& all_layouts, const std::vector<Variant>& vs,
                                         std::int64_t len) {
  std::vector<Evaluation> feasible;
  for (Layout l : all_layouts) {
    Evaluation e = best_variant(s, l, vs, len);
    s.tried.push_back(e);
    if (e.feasible) feasible.push_back(e);
  }
  return feasible;
}

// The feasible layout the goal prefers (docs/plan.md, step 6).
const Evaluation* choose_by_goal(const SearchState& s, const std::vector<Evaluation>& feasible) {
  const PlanRequest& request = s.request;
  const Evaluation* chosen = &feasible.front();
  for (const auto& e : feasible) {
    if (request.goal == PlanGoal::throughput) {
      if (throughput_score(s, e) > throughput_score(s, *chosen) * 1.01) chosen = &e;
    } else if (request.goal == PlanGoal::latency) {
      auto key = [](const Evaluation& x) { return std::make_pair(-x.layout.pp, x.layout.tp); };
      if (key(e) > key(*chosen)) chosen = &e;
    } else if (e.at_hi.kv_cache_tokens > chosen->at_hi.kv_cache_tokens * 1.01 && chosen->layout.gpus() == e.layout.gpus()) {
      chosen = &e;  // context: every layout here reaches the context; prefer fewer GPUs, then more KV
    }
  }
  return chosen;
}

// Alternatives to the recommendation, each on the same search, at most three: another
// context/concurrency balance, the other KV cache dtype, another layout, eager mode.
void add_alternatives(SearchState& s, const Evaluation* chosen, const std::vector<Evaluation>& feasible, Plan& plan) {
  const PlanRequest& request = s.request;
  const GpuSetup& gpus = s.gpus;
  const VllmVersion& version = s.version;
  auto add = [&](std::optional<PlannedConfig> c, std::string trade_off) {
    if (!c || plan.alternatives.size() >= 3) return;
    c->trade_off = std::move(trade_off);
    plan.alternatives.push_back(std::move(*c));
  };
  const auto& rp = plan.recommended->prediction;
  const std::int64_t rec_len = rp.settings.max_model_len;
  const double rec_requests = plan.recommended->requests_at_context;
  // 1. Longer context for fewer requests, or more requests at a shorter context.
  if (request.goal != PlanGoal::context) {
    std::int64_t reach = round_context(s.searcher.longest_context(chosen->layout, chosen->variant, 1, s.model_max_len),
                                       s.model_max_len);
    if (reach > rec_len + rec_len / 4) {
      Evaluation e = s.searcher.evaluate(chosen->layout, chosen->variant, reach, 1);
      if (e.feasible) {
        auto c = build_config(s, e, data_parallel_for(s, e.layout), "longer context");
        if (c)
          add(c, "requests up to " + util::with_commas(reach) + " tokens, but " + util::fixed(c->requests_at_context, 1) +
                     " of them at once per replica (vs " + util::fixed(rec_requests, 1) + " at " + util::with_commas(rec_len) + ")");
      }
    }
  } else {
    std::int64_t shorter = request.context_tokens && *request.context_tokens < rec_len ? *request.context_tokens : rec_len / 4;
    if (shorter >= 16) {
      Variant v = chosen->variant;
      Evaluation e = s.searcher.evaluate(chosen->layout, v, shorter, request.concurrency);
      if (e.feasible) {
        auto c = build_config(s, e, 1, "more concurrent requests");
        if (c)
          add(c, util::fixed(c->requests_at_context, 1) + " requests of " + util::with_commas(shorter) +
                     " tokens at once instead of " + util::fixed(rec_requests, 1) + " of " + util::with_commas(rec_len));
      }
    }
  }
  // 2. The other KV cache dtype.
  if (fp8_kv_possible(s)) {
    Variant v = chosen->variant;
    v.kv_cache_dtype = v.kv_cache_dtype == "fp8" ? "auto" : "fp8";
    Evaluation e = s.searcher.evaluate(chosen->layout, v, rec_len, request.concurrency);
    if (e.feasible) {
      auto c = build_config(s, e, data_parallel_for(s, e.layout), v.kv_cache_dtype == "fp8" ? "fp8 KV cache" : "full-precision KV cache");
      if (c) {
        std::string t = util::with_commas(c->prediction.kv_cache_tokens) + " tokens of KV cache instead of " +
                        util::with_commas(rp.kv_cache_tokens);
        if (v.kv_cache_dtype == "fp8")
          t += "; fp8 keys and values cost a little accuracy" +
               std::string(request.allow_fp8_kv ? "" : " (--allow-fp8-kv lets the plan choose it)");
        else
          t += "; no fp8 rounding of keys and values";
        add(c, t);
      }
    }
  }
  // 3. Another layout: the latency pick for throughput plans, the throughput pick otherwise.
  {
    const Evaluation* other = nullptr;
    for (const auto& e : feasible) {
      if (e.layout == chosen->layout) continue;
      if (request.goal == PlanGoal::throughput) {
        if (!other || (e.layout.pp <= other->layout.pp && e.layout.tp > other->layout.tp)) other = &e;
      } else if (!other || e.layout.gpus() < other->layout.gpus()) {
        other = &e;
      }
    }
    if (other) {
      int dp = other->layout.gpus() < chosen->layout.gpus() ? std::max(1, s.gpu_limit / other->layout.gpus()) : 1;
      if (gpus.nodes > 1 || version < VllmVersion{0, 9}) dp = 1;
      auto c = build_config(s, *other, dp, layout_text(other->layout) + (dp > 1 ? " × " + std::to_string(dp) + " replicas" : ""));
      if (c) {
        std::string t = other->layout.gpus() > chosen->layout.gpus()
                            ? "one larger replica: lower latency per token and " +
                                  util::fixed(c->requests_at_context, 1) + " requests of " + util::with_commas(rec_len) +
                                  " tokens at once in it, but fewer replicas"
                            : "smaller replicas: " + std::to_string(dp) + " of them with " + util::fixed(c->requests_at_context, 1) +
                                  " requests each; more throughput, slower tokens";
        add(c, t);
      }
    }
  }
  // 4. Eager mode: the CUDA graph memory goes to the KV cache, decoding gets slower.
  if (!chosen->variant.enforce_eager && plan.alternatives.size() < 3) {
    Variant v = chosen->variant;
    v.enforce_eager = true;
    Evaluation e = s.searcher.evaluate(chosen->layout, v, rec_len, request.concurrency);
    if (e.feasible) {
      auto c = build_config(s, e, data_parallel_for(s, e.layout), "eager mode");
      if (c && c->prediction.kv_cache_tokens > rp.kv_cache_tokens)
        add(c, "no CUDA graphs (" + gib(rp.memory.cuda_graph) + "): " + util::with_commas(c->prediction.kv_cache_tokens) +
                   " KV tokens instead of " + util::with_commas(rp.kv_cache_tokens) +
                   ", but every decode step runs eagerly (slower, most at small batches)");
    }
  }
}

}  // namespace

Result<Plan> search(const ModelSpec& model, const GpuSetup& gpus, const PlanRequest& request, const VllmVersion& version,
                    Bytes margin, SearchDepth depth, std::optional<std::string> quantization,
                    std::shared_ptr<WeightsCache> cache) {
  const int available = gpus.count * std::max(1, gpus.nodes);
  SearchState s{model, gpus, request, version, margin, std::min(available, request.max_gpus.value_or(available)),
                engine::derived_max_model_len(model), quantization, Searcher(model, gpus, version, margin, quantization, std::move(cache)), depth, {}};
  s.searcher.set_history(request.history);
  s.searcher.set_kept(request.kept);
  Plan plan;
  plan.model_id = model.id;
  plan.gpus = gpus;
  plan.version = version;
  plan.request = request;
  plan.safety_margin_bytes = margin;
  plan.model_max_len = s.model_max_len;

  auto default_seqs = default_max_num_seqs(s);
  if (!default_seqs) return tl::unexpected(default_seqs.error());
  const auto all_layouts = layouts(model, gpus, s.gpu_limit);
  const auto vs = variants(s, *default_seqs);

  const ContextChoice context = choose_context(s, all_layouts, vs);
  const std::int64_t len = context.tokens;
  plan.context_tokens = len;

  const std::vector<Evaluation> feasible = evaluate_layouts(s, all_layouts, vs, len);
  plan.predictions_run = s.searcher.predictions();
  if (feasible.empty()) {
    if (depth == SearchDepth::full) plan.no_fit = analyse_no_fit(s, plan);
    plan.predictions_run = s.searcher.predictions();
    return plan;
  }

  const Evaluation* chosen = choose_by_goal(s, feasible);
  auto rec = build_config(s, *chosen, data_parallel_for(s, chosen->layout), "recommended");
  if (!rec) {
    if (depth == SearchDepth::full) plan.no_fit = analyse_no_fit(s, plan);
    return plan;
  }
  plan.recommended = std::move(*rec);
  if (depth == SearchDepth::full) {
    explain(s, *chosen, plan);
    explain_default_context(context, s, plan);
    add_alternatives(s, chosen, feasible, plan);
  }
  plan.predictions_run = s.searcher.predictions();
  return plan;
}

std::optional<PlannedConfig> build_config(SearchState& s, const Evaluation& e, int dp, std::string label) {
  // Verify with the model's own weights inventory, with and without the margin; step the
  // utilization down inside the interval should the compacted search have been optimistic.
  for (int k = e.k_hi; k >= e.k_lo; --k) {
    VllmFlags f = s.searcher.flags_for(e.layout, e.variant, e.max_model_len, k);
    if (dp > 1) f.data_parallel_size = dp;
    // The margin check runs on the compacted weights (the same bytes, fewer tensors); the
    // prediction that is shown runs on the model as loaded, so its sources read right.
    const ModelSpec& compact = s.searcher.cache()->model_for(e.layout.pp);
    const auto* history = s.searcher.history();
    auto through_history = [&](const ModelSpec& m, const GpuSetup& g) {
      return history && !history->empty() ? predict_with_history(m, g, f, s.version, *history) : predict(m, g, f, s.version);
    };
    auto checked = through_history(compact, s.searcher.margin_setup());
    if (!checked || !checked->starts || checked->max_concurrency + 1e-9 < e.concurrency) continue;
    // Every choice explicit, so the serve command, the Python code and the YAML predict the same.
    f.max_num_seqs = checked->settings.max_num_seqs;
    f.max_num_batched_tokens = checked->settings.max_num_batched_tokens;
    auto real = through_history(s.depth == SearchDepth::full ? s.model : compact, s.gpus);
    if (!real || !real->starts) continue;
    PlannedConfig c;
    c.label = std::move(label);
    c.flags = f;
    c.prediction = std::move(*real);
    c.utilization_min = e.k_lo / 100.0;
    c.utilization_max = k / 100.0;
    c.utilization_min_reason = lower_reason(s, e);
    c.utilization_max_reason = k == e.k_hi ? upper_reason(s, e) : "the prediction with the model's full weights list allows at most " + util_text(k);
    c.replica_gpus = e.layout.gpus();
    c.requests_at_context = c.prediction.max_concurrency;
    return c;
  }
  return std::nullopt;
}

}  // namespace plan

Result<Plan> make_plan(const ModelSpec& published, const GpuSetup& gpus, const PlanRequest& request, const VllmVersion& version) {
  // A kept --hf-overrides (a RoPE scaling that lengthens the model) sets the longest context.
  VllmFlags kept_flags;
  request.kept.apply(kept_flags);
  auto overridden = engine::apply_hf_overrides(published, kept_flags, version);
  if (!overridden) return tl::unexpected(overridden.error());
  const ModelSpec& model = overridden->model ? *overridden->model : published;
  const std::int64_t model_max = engine::derived_max_model_len(model);
  if (request.context_tokens && *request.context_tokens < 1)
    return make_error(ErrorCode::invalid_argument, "expected a positive number of tokens, got " + std::to_string(*request.context_tokens),
                      "--context");
  if (request.context_tokens && *request.context_tokens > model_max)
    return make_error(ErrorCode::invalid_argument,
                      std::to_string(*request.context_tokens) + " tokens is longer than " + model.id + " supports: " +
                          (model.max_length_key.empty() ? "its maximum" : model.max_length_key) + " gives " +
                          std::to_string(model_max) + " (vLLM refuses a longer max_model_len unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)" +
                          (overridden->notes.empty() ? "" : "; " + overridden->notes.front()),
                      "--context");
  if (request.concurrency < 1)
    return make_error(ErrorCode::invalid_argument, "expected at least 1 request, got " + std::to_string(request.concurrency),
                      "--concurrency");
  // Sizes before the search: its work grows with the GPUs, the context and the concurrency.
  if (auto ok = validate_plan_sizes(request.context_tokens, request.concurrency, request.max_gpus); !ok)
    return tl::unexpected(ok.error());
  if (auto ok = validate_gpu_setup_size(gpus); !ok) return tl::unexpected(ok.error());
  const int nodes = std::max(1, gpus.nodes);
  const int available = gpus.count * nodes;
  if (request.max_gpus) {
    if (*request.max_gpus < 1)
      return make_error(ErrorCode::invalid_argument, "expected at least 1 GPU, got " + std::to_string(*request.max_gpus), "--max-gpus");
    if (*request.max_gpus > available)
      return make_error(ErrorCode::invalid_argument,
                        std::to_string(*request.max_gpus) + " GPUs allowed, but the setup has only " + std::to_string(available) +
                            " (" + std::to_string(nodes) + " node(s) × " + std::to_string(gpus.count) +
                            " GPUs); give more with --gpus or --nodes",
                        "--max-gpus");
    if (nodes > 1 && *request.max_gpus < nodes)
      return make_error(ErrorCode::invalid_argument,
                        std::to_string(*request.max_gpus) + " GPUs cannot span the " + std::to_string(nodes) +
                            " nodes given: a multi-node plan uses at least one GPU per node",
                        "--max-gpus");
  }
  const Bytes margin = request.safety_margin_bytes.value_or(default_plan_margin(gpus.gpu));
  const Bytes free = gpus.free_bytes.value_or(gpus.gpu.total_bytes);
  if (margin < 0 || margin >= free)
    return make_error(ErrorCode::invalid_argument,
                      "a safety margin of " + plan::gib(margin) + " leaves nothing of the " + plan::gib(free) + " free on each GPU",
                      "--margin-gib");
  auto plan = plan::search(model, gpus, request, version, margin, plan::SearchDepth::full);
  if (!plan || !request.history || request.history->empty()) return plan;
  // Cite the configurations recorded as failing on this GPU and say why the recommendation differs.
  auto estimate = predict(model, gpus, VllmFlags{}, version);
  if (!estimate) return plan;
  for (const auto& f : failed_configurations(*request.history, setup_key(model, gpus, *estimate))) {
    std::string line = f.citation();
    if (plan->recommended) {
      // The recommendation avoids it: the searched predictions consult the same records.
      const auto& st = plan->recommended->prediction.settings;
      line += "; avoided: recommending gpu_memory_utilization=" + util::fixed(st.gpu_memory_utilization, 2) +
              ", max_num_seqs=" + std::to_string(st.max_num_seqs) + ", max_model_len=" + std::to_string(st.max_model_len) +
              (st.enforce_eager ? ", enforce_eager" : "") + " (" + plan->recommended->utilization_max_reason + ")";
    }
    plan->explanation.push_back(line);
  }
  return plan;
}

}  // namespace headroom
