// Using the history in a prediction: measured terms of the same setup replace the estimates,
// other models' runs on the same GPU and era calibrate the empirical terms, and failed
// configurations are found and cited. All of it works on a list of records already read from the
// store, so it is cheap and the same for SQLite and PostgreSQL.
#include <algorithm>
#include <cmath>

#include "headroom/history.h"
#include "history/history_settings.h"
#include "util/strings.h"

namespace headroom {

namespace {

using nlohmann::json;
using history_detail::compare_setting;
using history_detail::same_setting;

bool model_matches(const RunRecord& r, const SetupKey& key) {
  if (!r.model_config_hash.empty() && !key.model_config_hash.empty()) return r.model_config_hash == key.model_config_hash;
  return util::iequals(r.model, key.model);
}

bool gpu_matches(const RunRecord& r, const SetupKey& key) {
  bool catalogued = !r.gpu_key.empty() && r.gpu_key != "custom" && !key.gpu_key.empty() && key.gpu_key != "custom";
  if (catalogued && r.gpu_key == key.gpu_key) return true;
  // Different catalogue rows can still be the same memory (a key guessed from a partial name), but
  // two known, different keys are different GPUs.
  if (catalogued) return false;
  return r.total_gib && key.total_gib > 0 && std::abs(*r.total_gib - key.total_gib) <= 0.05;
}

bool all_same(const json& recorded, const json& candidate, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (!same_setting(recorded, candidate, k)) return false;
  return true;
}

std::string measured_source(const RunRecord& r) {
  return "measured on " + r.run_date + " (history #" + std::to_string(r.id) + ")";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool is_memory_failure(const std::string& c) {
  static const std::vector<std::string> k_classes = {
      "kv_cache_insufficient", "no_kv_cache_memory", "weights_load_oom", "profile_run_oom", "sampler_warmup_oom",
      "cuda_graph_capture_oom", "oom_phase_unknown", "mamba_cache_blocks_insufficient", "out_of_memory"};
  return std::find(k_classes.begin(), k_classes.end(), c) != k_classes.end();
}

std::string setting_text(const json& v) {
  if (v.is_number_float()) return util::fixed(v.get<double>(), 2);
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

}  // namespace

std::optional<HistoryTerms> measured_terms_for(const std::vector<RunRecord>& records, const SetupKey& key) {
  const std::string era = history_era(key.version);
  const json candidate = history_detail::settings_json(key.settings);
  std::vector<const RunRecord*> matches;
  for (const auto& r : records)
    if (r.era == era && r.tp == key.tp && r.pp == key.pp && model_matches(r, key) && gpu_matches(r, key)) matches.push_back(&r);
  if (matches.empty()) return std::nullopt;
  // Same version first, then the newest record.
  const std::string version = key.version.to_string();
  std::stable_sort(matches.begin(), matches.end(), [&](const RunRecord* a, const RunRecord* b) {
    auto va = parse_logged_version(a->vllm_version), vb = parse_logged_version(b->vllm_version);
    bool sa = va && va->to_string() == version, sb = vb && vb->to_string() == version;
    if (sa != sb) return sa;
    return a->id > b->id;
  });
  HistoryTerms out;
  auto pick = [&](auto field, std::initializer_list<const char*> depends_on, std::optional<Bytes>& term,
                  std::string& source) {
    for (const RunRecord* r : matches) {
      const std::optional<double>& v = r->measured.*field;
      if (!v || *v < 0) continue;
      if (!all_same(r->settings, candidate, depends_on)) continue;
      term = from_gib(*v);
      source = measured_source(*r);
      if (std::find(out.record_ids.begin(), out.record_ids.end(), r->id) == out.record_ids.end()) out.record_ids.push_back(r->id);
      return;
    }
  };
  pick(&RunMeasurements::weights_gib, {"dtype", "quantization"}, out.terms.weights, out.term_sources.weights);
  pick(&RunMeasurements::activation_peak_gib, {"max_num_seqs", "max_num_batched_tokens", "dtype"}, out.terms.activation_peak,
       out.term_sources.activation_peak);
  pick(&RunMeasurements::non_torch_gib, {}, out.terms.non_torch, out.term_sources.non_torch);
  pick(&RunMeasurements::cuda_graph_gib, {"max_num_seqs", "max_num_batched_tokens", "enforce_eager"}, out.terms.cuda_graph,
       out.term_sources.cuda_graph);
  if (out.record_ids.empty()) return std::nullopt;
  if (out.record_ids.size() == 1) {
    for (const RunRecord* r : matches)
      if (r->id == out.record_ids.front()) out.terms.source = measured_source(*r);
  } else {
    std::vector<std::string> ids;
    for (auto id : out.record_ids) ids.push_back("#" + std::to_string(id));
    out.terms.source = "measured (history " + util::join(ids, ", ") + ")";
  }
  return out;
}

Calibration calibration_for(const std::vector<RunRecord>& records, const SetupKey& key) {
  const std::string era = history_era(key.version);
  std::vector<double> activation, non_torch;
  for (const auto& r : records) {
    // Other models only (the same model's own runs are measured terms, not calibration), and the
    // same TP: non-torch memory is mostly NCCL and allocator state, which scales with TP.
    if (r.era != era || r.tp != key.tp || r.pp != 1 || model_matches(r, key) || !gpu_matches(r, key)) continue;
    if (r.measured.activation_peak_gib && r.estimated_activation_gib && *r.estimated_activation_gib > 0 &&
        *r.measured.activation_peak_gib > 0)
      activation.push_back(*r.measured.activation_peak_gib / *r.estimated_activation_gib);
    if (r.measured.non_torch_gib && r.estimated_non_torch_gib && *r.estimated_non_torch_gib > 0 && *r.measured.non_torch_gib > 0)
      non_torch.push_back(*r.measured.non_torch_gib / *r.estimated_non_torch_gib);
  }
  Calibration c;
  c.activation_runs = static_cast<int>(activation.size());
  c.non_torch_runs = static_cast<int>(non_torch.size());
  if (c.activation_runs >= k_min_calibration_runs) c.activation_factor = median(activation);
  if (c.non_torch_runs >= k_min_calibration_runs) c.non_torch_factor = median(non_torch);
  return c;
}

bool FailedConfiguration::rules_out(int candidate_tp, int candidate_pp, const ResolvedSettings& candidate) const {
  if (candidate_tp != tp || candidate_pp != pp) return false;
  const json c = history_detail::settings_json(candidate);
  if (!all_same(settings, c, {"dtype", "kv_cache_dtype", "quantization"})) return false;
  if (failure_class == "startup_free_memory_insufficient")
    // vLLM asked for more than was free: any utilization at least as high asks for as much.
    return compare_setting(settings, c, "gpu_memory_utilization") <= 0;
  if (is_memory_failure(failure_class)) {
    // The candidate needs at least as much (lengths and batch no smaller) with no more memory.
    for (const char* k : {"max_model_len", "max_num_seqs", "max_num_batched_tokens"})
      if (compare_setting(settings, c, k) > 0) return false;
    if (compare_setting(settings, c, "gpu_memory_utilization") < 0) return false;
    if (!all_same(settings, c, {"enforce_eager"}) && candidate.enforce_eager) return false;
    return true;
  }
  // Other failures (configuration errors, crashes): only the same configuration.
  return all_same(settings, c,
                  {"max_model_len", "gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens", "enforce_eager",
                   "block_size"});
}

std::string FailedConfiguration::citation() const {
  std::vector<std::string> parts;
  for (const char* k : {"gpu_memory_utilization", "max_model_len", "max_num_seqs", "max_num_batched_tokens"})
    if (settings.contains(k) && !settings[k].is_null()) parts.push_back(std::string(k) + "=" + setting_text(settings[k]));
  if (tp > 1) parts.push_back("tensor_parallel_size=" + std::to_string(tp));
  if (pp > 1) parts.push_back("pipeline_parallel_size=" + std::to_string(pp));
  std::string text = "startup failed";
  if (!parts.empty()) text += " with " + util::join(parts, ", ");
  text += " on this GPU (" + (failure_class.empty() ? std::string("failure") : failure_class) + "; history #" +
          std::to_string(record_id) + ", " + run_date + (vllm_version.empty() ? "" : ", vLLM " + vllm_version) + ")";
  return text;
}

std::vector<FailedConfiguration> failed_configurations(const std::vector<RunRecord>& records, const SetupKey& key) {
  std::vector<FailedConfiguration> out;
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    const RunRecord& r = *it;
    if (r.outcome != RunOutcome::failed || !model_matches(r, key) || !gpu_matches(r, key)) continue;
    FailedConfiguration f;
    f.record_id = r.id;
    f.run_date = r.run_date;
    f.vllm_version = r.vllm_version;
    f.tp = r.tp;
    f.pp = r.pp;
    f.settings = r.settings;
    f.failure_class = r.failure_class;
    f.failure_message = r.failure_message;
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.record_id > b.record_id; });
  return out;
}

SetupKey setup_key(const ModelSpec& model, const GpuSetup& gpus, const Prediction& estimate) {
  SetupKey key;
  key.model = model.id;
  key.model_config_hash = model_config_hash(model);
  key.gpu_key = gpus.gpu.key;
  key.total_gib = gpus.gpu.total_gib();
  key.tp = estimate.settings.tensor_parallel_size;
  key.pp = estimate.settings.pipeline_parallel_size;
  key.version = estimate.version;
  key.settings = estimate.settings;
  return key;
}

HistoryAdvice advise(const std::vector<RunRecord>& records, const SetupKey& key, const Prediction& estimate) {
  HistoryAdvice a;
  MeasuredTerms terms;
  if (auto h = measured_terms_for(records, key)) {
    terms = h->terms;
    a.sources = h->term_sources;
    auto note = [&](const char* name, const std::optional<Bytes>& v, const std::string& src) {
      if (v) a.notes.push_back(std::string(name) + " " + src + ": " + util::fixed(to_gib(*v), 2) + " GiB");
    };
    note("weights", terms.weights, h->term_sources.weights);
    note("activation peak", terms.activation_peak, h->term_sources.activation_peak);
    note("non-torch memory", terms.non_torch, h->term_sources.non_torch);
    note("CUDA graph memory", terms.cuda_graph, h->term_sources.cuda_graph);
  }
  // Calibration of the empirical terms that were not measured. Single-stage only: the factor is
  // applied to the one stage's estimate (with pipeline stages each stage has its own).
  if (key.pp == 1 && (!terms.activation_peak || !terms.non_torch)) {
    Calibration c = calibration_for(records, key);
    const MemoryBreakdown& m = estimate.memory;
    auto calibrate = [&](const char* name, double factor, int runs, Bytes estimated, std::optional<Bytes>& term,
                         std::string& source) {
      if (term || runs < k_min_calibration_runs || factor == 1.0) return;
      term = static_cast<Bytes>(std::llround(static_cast<double>(estimated) * factor));
      source = "estimate × " + util::fixed(factor, 2) + " (median of " + std::to_string(runs) +
               " runs of other models on this GPU)";
      a.notes.push_back(std::string(name) + " calibrated from the history: " + util::fixed(to_gib(estimated), 2) + " GiB × " +
                        util::fixed(factor, 2) + " = " + util::fixed(to_gib(*term), 2) + " GiB (median measured/estimated over " +
                        std::to_string(runs) + " runs of other models on this GPU and vLLM era)");
    };
    calibrate("activation peak", c.activation_factor, c.activation_runs, m.activation_peak, terms.activation_peak,
              a.sources.activation_peak);
    calibrate("non-torch memory", c.non_torch_factor, c.non_torch_runs, m.non_torch, terms.non_torch, a.sources.non_torch);
  }
  if (terms.weights || terms.activation_peak || terms.non_torch || terms.cuda_graph) {
    if (terms.source.empty()) terms.source = "history";
    a.measured = terms;
  }
  a.failures = failed_configurations(records, key);
  for (const auto& f : a.failures)
    if (f.rules_out(key.tp, key.pp, key.settings)) {
      a.same_failed = f;
      break;
    }
  return a;
}

}  // namespace headroom
