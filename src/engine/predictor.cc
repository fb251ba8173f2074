// predict(): vLLM's startup memory accounting as a pipeline of vLLM's own startup steps, in the
// order vLLM takes them (memory model §8.2). Each stage is a function in src/engine/stage_*.cc
// that names the vLLM file and function it follows; predict_stages.h holds the state they hand on.
#include "engine/hf_overrides.h"
#include "engine/predict_stages.h"
#include "headroom/vllm_engine.h"

namespace headroom {

Result<Prediction> predict(const ModelSpec& published, const GpuSetup& gpus, const VllmFlags& flags,
                           const VllmVersion& requested_version, const PredictOptions& options) {
  // config/model.py: the HF config with --hf-overrides merged in, before anything is derived from it.
  auto overridden = engine::apply_hf_overrides(published, flags, requested_version);
  if (!overridden) return tl::unexpected(overridden.error());
  const ModelSpec& model = overridden->model ? *overridden->model : published;
  // engine/arg_utils.py create_engine_config: the settings after vLLM's defaults.
  auto config = engine::resolve_configuration(model, gpus, flags, requested_version);
  if (!config) return tl::unexpected(config.error());
  // config/*.py validation, then gpu_worker.py init_device, before anything is allocated.
  const auto before_allocation = engine::checks_before_allocation(model, gpus.gpu, flags, *config);
  // v1/worker/utils.py request_memory and init_device's free-memory check.
  const auto budget = engine::request_memory(gpus, *config);
  // gpu_model_runner.py load_model: each pipeline stage's weights.
  const auto weights = engine::load_weights(model, gpus.gpu, flags, *config, budget, options);
  // gpu_worker.py determine_available_memory: activation, non-torch memory, graph estimate.
  const auto profile = engine::profile_run(model, gpus.gpu, flags, *config, budget, weights, options);
  // kv_cache_utils.py get_kv_cache_configs: the layout and the blocks the memory holds.
  auto layout = engine::kv_cache_layout(model, flags, *config, weights, profile);
  if (!layout) return tl::unexpected(layout.error());
  // kv_cache_utils.py check_enough_kv_cache_memory, _report_kv_cache_config; the allocation's checks.
  const auto capacity = engine::kv_cache_capacity(model, gpus.gpu, flags, *config, *layout);
  // gpu_worker.py compile_or_warm_up_model: graph capture, then the sampler warm-up.
  const auto after_kv = engine::checks_after_kv_sizing(model, flags, *config, budget, weights, profile, *layout);
  Prediction prediction = engine::verdict_and_notes(model, gpus, options,
                                                    {*config, before_allocation, budget, weights, profile, *layout, capacity, after_kv});
  for (auto& note : overridden->notes) prediction.warnings.push_back(std::move(note));
  return prediction;
}

}  // namespace headroom
