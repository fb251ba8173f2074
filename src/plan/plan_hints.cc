// What a vLLM command says about the workload a plan should serve (headroom/plan.h plan_hints).
#include "headroom/plan.h"
#include "util/strings.h"

namespace headroom {

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
  if (f.performance_mode && !given.performance_mode) {
    h.performance_mode = f.performance_mode;
    h.taken.push_back("--performance-mode " + *f.performance_mode + " kept in every configuration");
  }
  if (f.enforce_eager && !given.allow_eager) {
    h.allow_eager = true;
    h.taken.push_back("eager mode allowed (--enforce-eager)");
  }
  return h;
}

}  // namespace headroom
