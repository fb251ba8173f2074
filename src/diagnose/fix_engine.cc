// The engine step of fix planning (see fix_planner.cc): the run rebuilt from the log is replayed
// through predict() with the terms the log measured (weights, activation peak, non-torch memory,
// CUDA graphs) in place of the estimates, on a GPU with the total memory the log reported; then
// the flags are searched until the prediction starts. Only used when the model resolves.
#include <cmath>

#include "headroom/diagnose.h"
#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/vllm_engine.h"
#include "util/strings.h"

namespace headroom {

namespace {

std::optional<Bytes> gib_bytes(const std::optional<double>& gib) {
  if (!gib) return std::nullopt;
  return from_gib(*gib);
}

class PredictionFixEngine : public FixEngine {
 public:
  std::optional<std::vector<FixSuggestion>> plan(const Finding& f, const LoggedRun& run) override {
    if (run.model.empty()) return std::nullopt;
    std::optional<double> total = run.total_gib;
    if (auto t = f.facts.find("total_gib"); !total && t != f.facts.end()) total = t->second;
    if (!total || *total <= 0) return std::nullopt;
    auto model = load_model(run.model);
    if (!model) return std::nullopt;
    m_model = &*model;
    m_run = &run;
    m_setup = GpuSetup{};
    m_setup.gpu = custom_gpu(*total);
    int tp = run.flags.tensor_parallel_size.value_or(1);
    int pp = run.flags.pipeline_parallel_size.value_or(1);
    m_setup.count = tp * pp;
    if (auto free = f.facts.find("free_gib"); f.error_class == "startup_free_memory_insufficient" && free != f.facts.end())
      m_setup.free_bytes = from_gib(free->second);
    else if (run.free_at_start_gib)
      m_setup.free_bytes = from_gib(*run.free_at_start_gib);
    m_setup.free_measured_by_vllm = m_setup.free_bytes.has_value();
    m_version = run.version.value_or(VllmVersion::newest_modelled());
    MeasuredTerms measured;
    measured.weights = gib_bytes(run.weights_gib);
    measured.activation_peak = gib_bytes(run.activation_peak_gib);
    measured.non_torch = gib_bytes(run.non_torch_gib);
    measured.cuda_graph = gib_bytes(run.cuda_graph_gib);
    measured.source = "measured in this log";
    m_measured = measured;
    m_total = *total;

    std::vector<FixSuggestion> out;
    const std::string& c = f.error_class;
    if (c == "kv_cache_insufficient" || c == "no_kv_cache_memory" || c == "startup_free_memory_insufficient") {
      max_model_len_fix(out);
      util_fix(out);
      fp8_fix(out);
      tp_fix(out);
    } else if (c == "weights_load_oom") {
      tp_fix(out);
    } else if (c == "sampler_warmup_oom") {
      max_num_seqs_fix(out);
    }
    if (out.empty()) return std::nullopt;
    return out;
  }

 private:
  Result<Prediction> run_predict(const VllmFlags& flags, int gpus, bool same_shape) {
    GpuSetup setup = m_setup;
    setup.count = std::max(gpus, setup.count);
    PredictOptions options;
    // Measured terms belong to this tensor/pipeline split only.
    if (same_shape) options.measured = m_measured;
    return predict(*m_model, setup, flags, m_version, options);
  }

  bool starts(const VllmFlags& flags, int gpus = 0, bool same_shape = true) {
    auto p = run_predict(flags, gpus, same_shape);
    return p && p->starts;
  }

  void add(std::vector<FixSuggestion>& out, std::vector<std::pair<std::string, std::string>> changes, std::string why,
           double confidence) {
    FixSuggestion s;
    s.command = serve_command(*m_run, changes);
    s.changes = std::move(changes);
    s.why = std::move(why);
    s.confidence = confidence;
    s.basis = "prediction engine";
    out.push_back(std::move(s));
  }

  void max_model_len_fix(std::vector<FixSuggestion>& out) {
    auto base = run_predict(m_run->flags, 0, true);
    if (!base || base->largest_fitting_max_model_len <= 0) return;
    std::int64_t n = base->largest_fitting_max_model_len;
    if (m_run->flags.max_model_len && n >= *m_run->flags.max_model_len) return;
    VllmFlags flags = m_run->flags;
    flags.max_model_len = n;
    if (!starts(flags)) return;
    add(out, {{"--max-model-len", std::to_string(n)}},
        "the prediction with the measured terms of this log starts with max_model_len " + util::with_commas(n) +
            " (the largest that fits, searched as vLLM does)",
        0.85);
  }

  void util_fix(std::vector<FixSuggestion>& out) {
    // The lowest utilization that starts, and the highest the free memory allows.
    double current = m_run->flags.gpu_memory_utilization.value_or(0.9);
    double hi = 0.95;
    if (m_setup.free_bytes) hi = std::min(hi, std::floor((to_gib(*m_setup.free_bytes) - 0.1) / m_total * 100) / 100);
    std::optional<double> lo;
    for (int k = 5; k <= static_cast<int>(std::lround(hi * 100)); ++k) {
      VllmFlags flags = m_run->flags;
      flags.gpu_memory_utilization = k / 100.0;
      if (starts(flags)) {
        lo = k / 100.0;
        break;
      }
    }
    if (!lo) return;
    if (std::abs(*lo - current) < 1e-9) return;
    add(out, {{"--gpu-memory-utilization", util::fixed(*lo, 2)}},
        "the prediction starts for gpu_memory_utilization from " + util::fixed(*lo, 2) + " to " + util::fixed(hi, 2) +
            " (upper end: 0.95 and the free memory at startup)",
        0.8);
  }

  void fp8_fix(std::vector<FixSuggestion>& out) {
    std::string kv = m_run->flags.kv_cache_dtype.value_or("auto");
    if (kv.rfind("fp8", 0) == 0) return;
    VllmFlags flags = m_run->flags;
    flags.kv_cache_dtype = "fp8";
    if (starts(flags))
      add(out, {{"--kv-cache-dtype", "fp8"}}, "the prediction starts with an fp8 KV cache (half the bytes per token)", 0.7);
  }

  void tp_fix(std::vector<FixSuggestion>& out) {
    int tp = m_run->flags.tensor_parallel_size.value_or(1);
    for (int next = tp * 2; next <= 8; next *= 2) {
      if (m_model->num_attention_heads > 0 && m_model->num_attention_heads % next != 0) continue;
      VllmFlags flags = m_run->flags;
      flags.tensor_parallel_size = next;
      if (starts(flags, next * m_run->flags.pipeline_parallel_size.value_or(1), false)) {
        add(out, {{"--tensor-parallel-size", std::to_string(next)}},
            "the prediction starts on " + std::to_string(next) + " GPUs of " + util::fixed(m_total, 2) +
                " GiB (" + std::to_string(next) + " divides the " + std::to_string(m_model->num_attention_heads) +
                " attention heads)",
            0.7);
        return;
      }
    }
  }

  void max_num_seqs_fix(std::vector<FixSuggestion>& out) {
    auto base = run_predict(m_run->flags, 0, true);
    if (!base || base->starts) return;  // the engine does not reproduce this failure
    for (int seqs : {512, 256, 128, 64, 32, 16}) {
      VllmFlags flags = m_run->flags;
      flags.max_num_seqs = seqs;
      if (starts(flags)) {
        add(out, {{"--max-num-seqs", std::to_string(seqs)}}, "the prediction starts with max_num_seqs " + std::to_string(seqs),
            0.75);
        return;
      }
    }
  }

  const ModelSpec* m_model = nullptr;
  const LoggedRun* m_run = nullptr;
  GpuSetup m_setup;
  VllmVersion m_version;
  MeasuredTerms m_measured;
  double m_total = 0;
};

}  // namespace

std::unique_ptr<FixEngine> prediction_fix_engine() { return std::make_unique<PredictionFixEngine>(); }

}  // namespace headroom
