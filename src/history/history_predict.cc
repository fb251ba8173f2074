// A prediction with the run history applied, shared by check and plan.
#include "headroom/history.h"

namespace headroom {

Result<std::vector<RunRecord>> read_history(const std::string& location) {
  auto store = open_history(location, OpenMode::existing_only);
  if (!store) return tl::unexpected(store.error());
  if (!*store) return std::vector<RunRecord>{};
  return (*store)->list();
}

Result<Prediction> predict_with_history(const ModelSpec& model, const GpuSetup& gpus, const VllmFlags& flags,
                                        const VllmVersion& version, const std::vector<RunRecord>& records,
                                        HistoryAdvice* advice_out) {
  auto prediction = predict(model, gpus, flags, version);
  if (!prediction || records.empty()) return prediction;
  auto key = setup_key(model, gpus, *prediction);
  HistoryAdvice advice = advise(records, key, *prediction);
  if (advice.measured) {
    PredictOptions options;
    options.measured = advice.measured;
    auto with_history = predict(model, gpus, flags, version, options);
    if (!with_history) return with_history;
    prediction = std::move(with_history);
    auto set = [](std::string& target, const std::string& source) {
      if (!source.empty()) target = source;
    };
    set(prediction->sources.weights, advice.sources.weights);
    set(prediction->sources.activation_peak, advice.sources.activation_peak);
    set(prediction->sources.non_torch, advice.sources.non_torch);
    set(prediction->sources.cuda_graph, advice.sources.cuda_graph);
  }
  for (const auto& n : advice.notes) prediction->notes.push_back(n);
  if (advice.same_failed) {
    const auto& f = *advice.same_failed;
    prediction->notes.push_back(f.citation() + (f.failure_message.empty() ? "" : ": " + f.failure_message));
    // An observed failure of this configuration with this very version outweighs the arithmetic.
    auto failed_version = parse_logged_version(f.vllm_version);
    if (prediction->starts && failed_version && *failed_version == version) {
      prediction->starts = false;
      prediction->failure = Failure{f.failure_class.empty() ? "startup_failed" : f.failure_class, "history",
                                    "recorded in the run history: " + f.citation(), {}};
    }
  }
  if (advice_out) *advice_out = std::move(advice);
  return prediction;
}

}  // namespace headroom
