// Stage 2 of predict(): the checks vLLM makes before it allocates anything, in its order
// (startup_checks.h, docs/startup-checks.md): the engine configuration
// (engine/arg_utils.py create_engine_config → config/*.py), then the worker's initialisation
// (v1/worker/gpu_worker.py init_device → platforms/cuda.py check_if_supports_dtype).
#include "engine/predict_stages.h"
#include "engine/startup_checks.h"

namespace headroom::engine {

namespace {

// config/attention.py: use_fp4_indexer_cache is DeepSeek-V4's alone; before v0.26 its layout is
// not modelled (the configuration keeps the fp8 rows).
std::optional<std::string> fp4_indexer_cache_warning(const ModelSpec& model, const VllmFlags& flags, const EraRules& era) {
  if (!flags.use_fp4_indexer_cache.value_or(false)) return std::nullopt;
  if (!model.mla || model.mla->compress_ratios.empty())
    return "attention_config.use_fp4_indexer_cache applies to DeepSeek-V4's indexer cache only; " + model.id + " ignores it";
  if (!era.v4_dense_packing)
    return "attention_config.use_fp4_indexer_cache before v0.26 is not modelled: the indexer cache is sized with fp8 rows";
  return std::nullopt;
}

}  // namespace

ChecksBeforeAllocation checks_before_allocation(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags,
                                                const ResolvedConfig& config) {
  const StartupCheckInputs in{model, gpu, flags, config.version, config.settings, config.derived_max_model_len};
  ChecksBeforeAllocation out;
  out.failure = engine_config_failure(in);
  // The V1 oracle runs in create_engine_config after the model's own checks.
  if (!out.failure) out.failure = config.engine_failure;
  out.warnings = startup_warnings(in);
  if (!out.failure) out.failure = worker_init_failure(in, config.dtype_failure);
  if (auto w = fp4_indexer_cache_warning(model, flags, config.era)) out.warnings.push_back(*w);
  return out;
}

}  // namespace headroom::engine
