// The search's unit of work: one parallel layout and one set of flag choices, evaluated with the
// prediction engine over the whole range of gpu_memory_utilization (0.01 steps). Internal to src/plan/.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "headroom/plan.h"

namespace headroom::plan {

struct Layout {
  int tp = 1;
  int pp = 1;
  int gpus() const { return tp * pp; }
  bool operator==(const Layout&) const = default;
};

// The flag choices besides the layout and the utilization.
struct Variant {
  std::string kv_cache_dtype = "auto";
  std::optional<int> max_num_seqs;  // nullopt: vLLM's default
  bool enforce_eager = false;
};

enum class FailureKind { none, config, weights, kv_cache, outside_budget, error };

struct Evaluation {
  bool feasible = false;
  Layout layout;
  Variant variant;
  std::int64_t max_model_len = 0;
  int concurrency = 1;
  int k_lo = 0, k_hi = 0;  // utilization × 100: the safe interval
  FailureKind failure_kind = FailureKind::none;
  std::string failure;     // why it is infeasible (vLLM's message or the search's)
  Prediction at_hi;        // with the margin taken off, at k_hi (at the probe when infeasible early)
  std::optional<Prediction> above_hi;  // at k_hi + 1, the first that fails outside the budget
  std::optional<Prediction> below_lo;  // at k_lo − 1, the last whose KV cache is too small
};

// The model's weights inventory and its compacted forms per pipeline size, shared by the searches
// of one plan (the no-fit analysis runs several on the same model).
struct WeightsCache {
  explicit WeightsCache(const ModelSpec& model);
  const ModelSpec& model_for(int pipeline_parallel_size);

  const ModelSpec& model;
  WeightsInventory full;  // routed experts merged per layer
  std::map<int, ModelSpec> compacted;
};

// Runs predict() for a model whose weights inventory is compacted per pipeline size, on the setup
// with the safety margin taken off the free memory. Counts the calls.
class Searcher {
 public:
  static constexpr int k_min_util = 5;   // 0.05
  static constexpr int k_max_util = 99;  // 0.99

  Searcher(const ModelSpec& model, const GpuSetup& gpus, const VllmVersion& version, Bytes margin,
           std::optional<std::string> quantization = std::nullopt, std::shared_ptr<WeightsCache> cache = nullptr);

  VllmFlags flags_for(Layout layout, const Variant& variant, std::int64_t max_model_len, int util_percent) const;

  // The safe utilization interval for the layout and variant serving `concurrency` requests of
  // `max_model_len` tokens, or why there is none.
  Evaluation evaluate(Layout layout, const Variant& variant, std::int64_t max_model_len, int concurrency);

  // The longest max_model_len in [1, upper] whose KV cache holds `concurrency` requests at the
  // highest safe utilization; 0 when none.
  std::int64_t longest_context(Layout layout, const Variant& variant, int concurrency, std::int64_t upper);

  // predict() with the margin taken off (compacted weights), through the history when one is set.
  Result<Prediction> predict_with_margin(Layout layout, const VllmFlags& flags);

  // Consult recorded runs in every prediction (null: none).
  void set_history(const std::vector<RunRecord>* history) { m_history = history; }
  // Flags every candidate runs with as given (a pasted command's: PlanRequest::kept).
  void set_kept(KeptFlags kept) { m_kept = std::move(kept); }
  const std::vector<RunRecord>* history() const { return m_history; }

  const GpuSetup& margin_setup() const { return m_margin_setup; }
  Bytes margin() const { return m_margin; }
  int predictions() const { return m_predictions; }
  const std::shared_ptr<WeightsCache>& cache() const { return m_cache; }

 private:
  const ModelSpec& m_model;
  GpuSetup m_margin_setup;
  VllmVersion m_version;
  Bytes m_margin;
  std::optional<std::string> m_quantization;
  KeptFlags m_kept;
  std::shared_ptr<WeightsCache> m_cache;
  const std::vector<RunRecord>* m_history = nullptr;
  int m_predictions = 0;
};

bool is_outside_budget_failure(const std::string& error_class);
bool is_kv_failure(const std::string& error_class);

}  // namespace headroom::plan
