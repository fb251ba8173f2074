// History accuracy benchmark: imports startup measurements (calibration/startup.jsonl, or FILE)
// into a temporary SQLite history, then predicts every imported setup three ways and prints the
// median / p90 / max % error of the KV cache GiB ("Available KV cache memory"):
//   without history      the estimate alone
//   with history         the whole history (the setup's own measured terms replace the estimates)
//   leave-one-out        the history without that row (other runs of the same setup may remain)
//   leave-model-out      the history without any run of that model: only the calibration of the
//                        empirical terms from other models on the same GPU and era applies
//
//   bench_history_accuracy [FILE.jsonl] [--rows]
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "headroom/gpu.h"
#include "headroom/history.h"
#include "headroom/model.h"
#include "headroom/vllm_engine.h"
#include "headroom/vllm_log.h"
#include "history/history_settings.h"

using namespace headroom;

namespace {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos)), hi = static_cast<std::size_t>(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

struct Setup {
  ModelSpec model;
  GpuSetup gpus;
  VllmFlags flags;
  VllmVersion version;
};

std::optional<Setup> setup_of(const RunRecord& r, std::string& why) {
  auto version = parse_logged_version(r.vllm_version);
  if (!version) return why = "no vLLM version", std::nullopt;
  if (!r.total_gib) return why = "GPU total memory unknown", std::nullopt;
  auto model = load_model(r.model);
  if (!model) return why = "model unknown", std::nullopt;
  Setup s{*model, {}, {}, *version};
  s.gpus.gpu = custom_gpu(*r.total_gib);
  std::string name = r.gpu_name.substr(0, r.gpu_name.find(" ("));
  if (auto g = GpuCatalog::builtin().find(name)) {
    s.gpus.gpu.key = g->key;
    s.gpus.gpu.name = g->name;
    s.gpus.gpu.architecture = g->architecture;
    s.gpus.gpu.bf16_supported = g->bf16_supported;
    s.gpus.gpu.fp8_supported = g->fp8_supported;
    s.gpus.gpu.compute_capability = g->compute_capability;
  }
  s.gpus.count = r.tp * r.pp;
  s.flags = history_detail::flags_from_settings(r.settings, r.tp, r.pp, *model);
  return s;
}

double kv_gib(const Prediction& p) { return to_gib(p.stages.empty() ? p.memory.kv_cache : p.stages.front().kv_cache); }

std::optional<double> predict_with(const Setup& s, const std::vector<RunRecord>& history, const Prediction& estimate) {
  auto key = setup_key(s.model, s.gpus, estimate);
  auto advice = advise(history, key, estimate);
  if (!advice.measured) return kv_gib(estimate);
  PredictOptions o;
  o.measured = advice.measured;
  auto p = predict(s.model, s.gpus, s.flags, s.version, o);
  if (!p) return std::nullopt;
  return kv_gib(*p);
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = std::string(HEADROOM_SHARED_DIR) + "/calibration/startup.jsonl";
  bool show_rows = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--rows") show_rows = true;
    else if (a.rfind("--benchmark", 0) == 0) continue;
    else path = a;
  }
  auto dir = std::filesystem::temp_directory_path() / ("headroom-history-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto store = open_sqlite_history((dir / "history.db").string(), OpenMode::create);
  if (!store) return std::fprintf(stderr, "%s\n", store.error().to_string().c_str()), 1;
  auto imported = import_jsonl(**store, path);
  if (!imported) return std::fprintf(stderr, "%s\n", imported.error().to_string().c_str()), 1;
  auto records = (*store)->list();
  if (!records) return std::fprintf(stderr, "%s\n", records.error().to_string().c_str()), 1;
  std::printf("imported %d rows from %s (%d added, %d duplicates)\n\n", imported->rows, path.c_str(), imported->added,
              imported->duplicates);

  std::vector<double> without, with, loo, lmo, complete_without, complete_with;
  std::vector<std::string> skipped;
  for (const auto& r : *records) {
    std::string id = r.source_id.empty() ? "#" + std::to_string(r.id) : r.source_id;
    if (r.outcome != RunOutcome::ok || !r.measured.kv_cache_gib) {
      skipped.push_back(id + ": no KV cache measured (outcome " + std::string(to_string(r.outcome)) + ")");
      continue;
    }
    std::string why;
    auto s = setup_of(r, why);
    if (!s) {
      skipped.push_back(id + ": " + why);
      continue;
    }
    auto estimate = predict(s->model, s->gpus, s->flags, s->version);
    if (!estimate) {
      skipped.push_back(id + ": " + estimate.error().message);
      continue;
    }
    const double observed = *r.measured.kv_cache_gib;
    auto pct = [&](double predicted) { return std::abs(predicted - observed) / std::max(std::abs(observed), 1e-9) * 100.0; };
    std::vector<RunRecord> others, other_models;
    const std::string hash = model_config_hash(s->model);
    for (const auto& o : *records) {
      if (o.id != r.id) others.push_back(o);
      if (o.model_config_hash != hash && o.model != r.model) other_models.push_back(o);
    }
    auto w = predict_with(*s, *records, *estimate);
    auto l = predict_with(*s, others, *estimate);
    auto m = predict_with(*s, other_models, *estimate);
    if (!w || !l || !m) {
      skipped.push_back(id + ": prediction with history failed");
      continue;
    }
    without.push_back(pct(kv_gib(*estimate)));
    with.push_back(pct(*w));
    loo.push_back(pct(*l));
    lmo.push_back(pct(*m));
    // The setups whose own record has every non-KV term vLLM measures in the budget.
    if (r.measured.weights_gib && r.measured.activation_peak_gib && r.measured.non_torch_gib) {
      complete_without.push_back(pct(kv_gib(*estimate)));
      complete_with.push_back(pct(*w));
    }
    if (show_rows)
      std::printf("  %-70s observed %7.2f  without %7.2f  with %7.2f  loo %7.2f  lmo %7.2f\n", id.substr(0, 70).c_str(), observed,
                  kv_gib(*estimate), *w, *l, *m);
  }
  std::printf("kv_cache_gib %% error over %zu setups     median      p90      max\n", without.size());
  auto line = [](const char* name, const std::vector<double>& v) {
    std::printf("  %-36s %7.2f%% %7.2f%% %7.2f%%\n", name, percentile(v, 0.5), percentile(v, 0.9),
                v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()));
  };
  line("without history", without);
  line("with history (all rows)", with);
  line("leave-one-out (row not in history)", loo);
  line("leave-model-out (calibration only)", lmo);
  std::printf("rows with weights, activation and non-torch measured (%zu):\n", complete_with.size());
  line("without history", complete_without);
  line("with history", complete_with);
  int within = static_cast<int>(std::count_if(with.begin(), with.end(), [](double e) { return e <= 0.5; }));
  int complete_within =
      static_cast<int>(std::count_if(complete_with.begin(), complete_with.end(), [](double e) { return e <= 0.5; }));
  std::printf("\nwith history: %d of %zu setups within 0.5%%; %d of %zu with all terms measured\n", within, with.size(),
              complete_within, complete_with.size());
  std::printf("\nskipped %zu rows:\n", skipped.size());
  for (const auto& s : skipped) std::printf("  %s\n", s.c_str());
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
