// What a vLLM command says about the workload a plan should serve (headroom/plan.h plan_hints).
#include "headroom/plan.h"
#include "util/strings.h"

namespace headroom {

KeptFlags KeptFlags::from(const VllmFlags& f) {
  KeptFlags k;
  k.quantization = f.quantization;
  k.dtype = f.dtype;
  k.hf_overrides = f.hf_overrides;
  k.compilation_config = f.compilation_config;
  k.cudagraph_capture_sizes = f.cudagraph_capture_sizes;
  k.max_cudagraph_capture_size = f.max_cudagraph_capture_size;
  k.cudagraph_mode = f.cudagraph_mode;
  k.performance_mode = f.performance_mode;
  k.limit_mm_per_prompt = f.limit_mm_per_prompt;
  k.mm_dummy_sizes = f.mm_dummy_sizes;
  k.mm_processor_kwargs = f.mm_processor_kwargs;
  k.mm_encoder_tp_mode = f.mm_encoder_tp_mode;
  k.language_model_only = f.language_model_only;
  k.skip_mm_profiling = f.skip_mm_profiling;
  return k;
}

bool KeptFlags::empty() const {
  return !quantization && !dtype && hf_overrides.empty() && compilation_config.empty() && !performance_mode &&
         limit_mm_per_prompt.empty() && mm_processor_kwargs.empty() && !mm_encoder_tp_mode && !language_model_only &&
         !skip_mm_profiling;
}

void KeptFlags::apply(VllmFlags& f) const {
  f.quantization = quantization;
  f.dtype = dtype;
  f.hf_overrides = hf_overrides;
  f.compilation_config = compilation_config;
  f.cudagraph_capture_sizes = cudagraph_capture_sizes;
  f.max_cudagraph_capture_size = max_cudagraph_capture_size;
  f.cudagraph_mode = cudagraph_mode;
  f.performance_mode = performance_mode;
  f.limit_mm_per_prompt = limit_mm_per_prompt;
  f.mm_dummy_sizes = mm_dummy_sizes;
  f.mm_processor_kwargs = mm_processor_kwargs;
  f.mm_encoder_tp_mode = mm_encoder_tp_mode;
  f.language_model_only = language_model_only;
  f.skip_mm_profiling = skip_mm_profiling;
}

std::vector<std::pair<std::string, std::string>> KeptFlags::values() const {
  std::vector<std::pair<std::string, std::string>> out;
  if (!hf_overrides.empty()) out.emplace_back("hf-overrides", hf_overrides);
  if (!compilation_config.empty()) out.emplace_back("compilation-config", compilation_config);
  if (performance_mode && *performance_mode != "balanced") out.emplace_back("performance-mode", *performance_mode);
  if (!limit_mm_per_prompt.empty()) {
    VllmFlags f;
    f.limit_mm_per_prompt = limit_mm_per_prompt;
    f.mm_dummy_sizes = mm_dummy_sizes;
    out.emplace_back("limit-mm-per-prompt", limit_mm_per_prompt_json(f));
  }
  if (!mm_processor_kwargs.empty()) out.emplace_back("mm-processor-kwargs", mm_processor_kwargs);
  if (mm_encoder_tp_mode) out.emplace_back("mm-encoder-tp-mode", *mm_encoder_tp_mode);
  if (language_model_only) out.emplace_back("language-model-only", "");
  if (skip_mm_profiling) out.emplace_back("skip-mm-profiling", "");
  return out;
}

CommandHints plan_hints(const VllmFlags& f, const PlanRequest& given, bool gpus_given) {
  CommandHints h;
  if (f.max_model_len && !f.max_model_len_auto && *f.max_model_len > 0 && !given.context_tokens) {
    h.context = *f.max_model_len;
    h.taken.push_back("requests up to " + std::to_string(*h.context) + " tokens (--max-model-len)");
  }
  const int used = f.tensor_parallel_size.value_or(1) * f.pipeline_parallel_size.value_or(1) * f.data_parallel_size.value_or(1);
  if (used > 1 && !gpus_given) {
    h.gpus = used;
    h.taken.push_back(std::to_string(used) + " GPUs (tensor x pipeline x data parallel sizes)");
  }
  if (f.kv_cache_dtype && util::to_lower(*f.kv_cache_dtype).starts_with("fp8") && !given.allow_fp8_kv) {
    h.allow_fp8_kv = true;
    h.taken.push_back("an fp8 KV cache allowed (--kv-cache-dtype " + *f.kv_cache_dtype + ")");
  }
  if (given.kept.empty()) {
    h.kept = KeptFlags::from(f);
    if (h.kept.quantization) h.taken.push_back("--quantization " + *h.kept.quantization + " kept in every configuration");
    if (h.kept.dtype) h.taken.push_back("--dtype " + *h.kept.dtype + " kept in every configuration");
    for (const auto& [name, value] : h.kept.values())
      h.taken.push_back("--" + name + (value.empty() ? "" : " " + value) + " kept in every configuration");
  }
  if (f.enforce_eager && !given.allow_eager) {
    h.allow_eager = true;
    h.taken.push_back("eager mode allowed (--enforce-eager)");
  }
  return h;
}

}  // namespace headroom
