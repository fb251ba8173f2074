// When nothing fits: the reason (from the most capable layout tried) and the smallest changes that
// fit, each found by a recommendation-only search with one thing changed.
#include <algorithm>
#include <cmath>

#include "engine/startup_checks.h"
#include "plan/plan_internal.h"
#include "util/strings.h"

namespace headroom::plan {

namespace {

std::optional<PlannedConfig> fits(SearchState& s, const GpuSetup& gpus, const PlanRequest& request,
                                  std::optional<std::string> quantization = std::nullopt, const ModelSpec* model = nullptr) {
  auto p = search(model ? *model : s.model, gpus, request, s.version, s.margin, SearchDepth::recommendation_only, quantization,
                  model ? nullptr : s.searcher.cache());
  if (!p || !p->recommended) return std::nullopt;
  return p->recommended;
}

std::string config_text(const PlannedConfig& c) {
  const auto& st = c.prediction.settings;
  return "tp=" + std::to_string(st.tensor_parallel_size) + (st.pipeline_parallel_size > 1 ? " pp=" + std::to_string(st.pipeline_parallel_size) : "") +
         ", " + util::with_commas(c.prediction.kv_cache_tokens) + " KV tokens at gpu_memory_utilization " +
         util::fixed(st.gpu_memory_utilization, 2);
}

// Quantized checkpoints of the same model in the catalogue: ids that contain the model's name
// followed only by quantization words (FP8, AWQ, w4a16, quantized, ...).
std::vector<std::string> quantized_variants(const ModelSpec& model) {
  std::string base = util::to_lower(model.id.substr(model.id.rfind('/') == std::string::npos ? 0 : model.id.rfind('/') + 1));
  std::vector<std::string> out;
  if (base.empty()) return out;
  static const std::vector<std::string> k_words = {"fp8", "dynamic", "awq", "gptq", "int4", "int8", "w8a8", "w4a16", "w4a8", "quantized",
                                                   "nvfp4", "mxfp4", "fp4", "bnb", "4bit", "8bit", "static"};
  for (const auto& id : catalog_model_ids()) {
    std::string lid = util::to_lower(id);
    auto pos = lid.find(base);
    if (pos == std::string::npos || util::iequals(id, model.id)) continue;
    std::string rest = lid.substr(pos + base.size());
    if (rest.empty()) continue;
    for (char& c : rest)
      if (c == '_' || c == '.') c = '-';
    bool all_quant = true, any = false;
    for (const auto& w : util::split(rest, '-')) {
      if (w.empty()) continue;
      any = true;
      if (std::find(k_words.begin(), k_words.end(), w) == k_words.end()) all_quant = false;
    }
    if (any && all_quant) out.push_back(id);
  }
  return out;
}

}  // namespace

// More GPUs of the same model: 2, 4, 8 in one node, then 2, 4, 8 nodes of 8; the first shape that
// serves the workload.
std::optional<FitChange> more_gpus_change(SearchState& s, const PlanRequest& pinned) {
  std::vector<std::pair<int, int>> shapes;  // (nodes, per node)
  for (int n : {2, 4, 8})
    if (n > s.gpus.count && s.gpus.nodes <= 1) shapes.push_back({1, n});
  const int per_node = std::max(8, s.gpus.count);
  for (int nodes : {2, 4, 8})
    if (nodes > s.gpus.nodes) shapes.push_back({nodes, per_node});
  for (auto [nodes, per] : shapes) {
    GpuSetup more = s.gpus;
    more.count = per;
    more.nodes = nodes;
    PlanRequest q = pinned;
    q.max_gpus.reset();
    if (auto c = fits(s, more, q)) {
      const int used = c->prediction.gpus_used;
      return FitChange{"more_gpus",
                       std::to_string(used) + " × " + s.gpus.gpu.name + (nodes > 1 ? " over " + std::to_string(nodes) + " nodes" : "") +
                           " with " + config_text(*c),
                       nodes > 1 ? "--nodes " + std::to_string(nodes) + " --gpus-per-node " + std::to_string(per)
                                 : "--gpus " + std::to_string(per)};
    }
  }
  return std::nullopt;
}

NoFit analyse_no_fit(SearchState& s, const Plan& plan) {
  NoFit nf;
  const auto& r = s.request;
  const Bytes total = s.gpus.gpu.total_bytes;
  const Bytes others = s.gpus.free_bytes ? total - *s.gpus.free_bytes : 0;
  // The reason: the attempt of the layout with the most GPUs (it has the most memory).
  const Evaluation* best = nullptr;
  for (const auto& e : s.tried) {
    nf.details.push_back(layout_text(e.layout) + ": " + e.failure);
    if (!best || e.layout.gpus() > best->layout.gpus()) best = &e;
  }
  const std::string workload = std::to_string(r.concurrency) + " request(s) of " + util::with_commas(plan.context_tokens) + " tokens";
  if (!best) {
    nf.reason = "no tensor-parallel size vLLM accepts for this model fits the " + std::to_string(s.gpu_limit) + " GPU(s) allowed";
  } else if (best->failure_kind == FailureKind::weights) {
    const Bytes usable = total - others - best->at_hi.memory.baseline;
    nf.reason = "the weights need " + gib(best->at_hi.memory.weights) + " per GPU with " + layout_text(best->layout) + ", but each " +
                s.gpus.gpu.name + " has " + gib(usable) + " usable (" + gib(total) + " − " + gib(others) + " other processes − " +
                gib(best->at_hi.memory.baseline) + " CUDA context)";
    if (best->at_hi.failure && best->at_hi.failure->error_class == "profile_run_oom")
      nf.reason = "the weights (" + gib(best->at_hi.memory.weights) + ") and the activation peak (" + gib(best->at_hi.memory.activation_peak) +
                  ") per GPU with " + layout_text(best->layout) + " exceed the " + gib(usable) + " usable";
  } else if (best->failure_kind == FailureKind::kv_cache) {
    nf.reason = "with " + layout_text(best->layout) + " at the highest safe gpu_memory_utilization (" + util_text(best->k_hi) +
                "), the KV cache holds " + util::with_commas(best->at_hi.kv_cache_tokens) + " tokens (" +
                util::fixed(best->at_hi.max_concurrency, 2) + " requests); the workload needs " + workload;
  } else {
    nf.reason = "with " + layout_text(best->layout) + ": " + best->failure;
    // A class vLLM dropped: name the last release that serves it.
    if (auto note = engine::dropped_architecture_note(s.model.architecture, s.version)) nf.reason += " (" + *note + ")";
  }

  // Changes to the request first (no new hardware), then the model, then the hardware. Each
  // serves the workload the reason speaks of (plan.context_tokens), unless it is the change.
  PlanRequest pinned = r;
  pinned.context_tokens = plan.context_tokens;
  auto add = [&](std::string kind, std::string summary, std::string option) {
    nf.changes.push_back({std::move(kind), std::move(summary), std::move(option)});
  };
  if (!r.allow_fp8_kv && s.gpus.gpu.fp8_supported && s.version.is_v1_engine() && !kv_dtype_is_fixed_fp8(s.model)) {
    PlanRequest q = pinned;
    q.allow_fp8_kv = true;
    if (auto c = fits(s, s.gpus, q)) add("fp8_kv_cache", "an fp8 KV cache fits: " + config_text(*c), "--allow-fp8-kv");
  }
  if (!r.allow_eager) {
    PlanRequest q = pinned;
    q.allow_eager = true;
    if (auto c = fits(s, s.gpus, q); c && c->flags.enforce_eager)
      add("eager", "eager mode (no CUDA graphs) fits: " + config_text(*c), "--allow-eager");
  }
  if (best && best->failure_kind == FailureKind::kv_cache) {
    // Shorter context at the same concurrency, or fewer requests at the same context.
    PlanRequest q = r;
    q.context_tokens.reset();
    if (auto c = fits(s, s.gpus, q); c && c->prediction.settings.max_model_len < plan.context_tokens)
      add("shorter_context", "a context of " + util::with_commas(c->prediction.settings.max_model_len) + " tokens fits " +
                                 std::to_string(r.concurrency) + " request(s): " + config_text(*c),
          "--context " + std::to_string(c->prediction.settings.max_model_len));
    if (r.concurrency > 1) {
      // At the same context: start from the requests the most capable layout's KV cache holds
      // (more cannot fit), then step down; n - n/4 cannot overflow, and the steps are few.
      const double held = std::floor(best->at_hi.max_concurrency + 1e-9);
      int n = static_cast<int>(std::clamp<double>(held, 1.0, static_cast<double>(r.concurrency - 1)));
      for (int tries = 0; n >= 1 && tries < 12; ++tries, n = n > 8 ? n - n / 4 : n - 1) {
        PlanRequest q2 = pinned;
        q2.concurrency = n;
        if (auto c = fits(s, s.gpus, q2)) {
          add("fewer_requests", std::to_string(n) + " request(s) of " + util::with_commas(plan.context_tokens) + " tokens at once fit: " + config_text(*c),
              "--concurrency " + std::to_string(n));
          break;
        }
      }
    }
  }
  if (others > 0) {
    GpuSetup idle = s.gpus;
    idle.free_bytes.reset();
    if (auto c = fits(s, idle, pinned)) add("free_memory", "with the " + gib(others) + " other processes hold freed: " + config_text(*c), "--used-gib 0");
  }
  int quantized_found = 0;
  for (const auto& id : quantized_variants(s.model)) {
    if (quantized_found >= 3) break;
    auto qm = catalog_model(id);
    if (!qm || !checkpoint_runs_on(*qm, s.gpus.gpu)) continue;
    PlanRequest q = pinned;
    if (q.context_tokens && *q.context_tokens > 0) {
      // The variant may declare a different maximum; do not ask for more than it supports.
      q.context_tokens = std::min<std::int64_t>(*q.context_tokens, qm->max_position_embeddings > 0 ? qm->max_position_embeddings : *q.context_tokens);
    }
    if (auto c = fits(s, s.gpus, q, std::nullopt, &*qm)) {
      const bool marlin = nvfp4_kernel_note(*qm, s.gpus.gpu).has_value();
      add("quantized_checkpoint",
          id + " (" + c->prediction.settings.quantization + (marlin ? ", weight-only FP4 through Marlin on this GPU" : "") +
              ") fits: " + config_text(*c),
          id);
      ++quantized_found;
    }
  }
  if (!s.model.quantization && s.gpus.gpu.fp8_supported && !s.quantization) {
    if (auto c = fits(s, s.gpus, pinned, std::string("fp8")))
      add("fp8_weights", "quantizing the weights to fp8 at load (--quantization fp8) fits: " + config_text(*c), "--quantization fp8");
  }
  if (auto c = more_gpus_change(s, pinned)) nf.changes.push_back(std::move(*c));
  return nf;
}

}  // namespace headroom::plan
