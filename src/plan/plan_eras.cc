// What the plan knows of the v0.26+ choices: sparse-MLA models' fixed fp8 KV cache, hybrid
// models' align-mode state pages, and NVFP4 checkpoints that need Blackwell.
#include <algorithm>

#include "plan/plan_internal.h"
#include "util/strings.h"

namespace headroom::plan {

namespace {

bool has_state_layers(const ModelSpec& m) {
  return std::any_of(m.layer_kinds.begin(), m.layer_kinds.end(), [](LayerKind k) {
    return k == LayerKind::mamba || k == LayerKind::linear_attention || k == LayerKind::kda_attention;
  });
}

bool is_nvfp4(const ModelSpec& m) {
  if (util::to_lower(m.id).find("nvfp4") != std::string::npos) return true;
  if (!m.quantization) return false;
  const std::string raw = util::to_lower(m.quantization->raw.dump());
  return m.quantization->method == "nvfp4" || raw.find("nvfp4") != std::string::npos;
}

}  // namespace

std::optional<std::string> plan_hybrid_state_note(const ModelSpec& model, const VllmVersion& version,
                                                  const ResolvedSettings& settings) {
  if (!has_state_layers(model) || version < VllmVersion{0, 28}) return std::nullopt;
  if (!settings.enable_prefix_caching)
    return "off: each request holds one recurrent-state page (Mamba cache mode \"none\"); max_num_seqs may not exceed the "
           "state blocks";
  return "vLLM's default for hybrid models from v0.28 (Mamba cache mode \"align\"): each request holds two recurrent-state "
         "pages, and max_num_seqs may not exceed the state blocks (--no-enable-prefix-caching halves the state pages)";
}

bool checkpoint_runs_on(const ModelSpec& model, const GpuSpec& gpu) {
  if (!is_nvfp4(model)) return true;
  // NVFP4 GEMMs (ModelOpt / compressed-tensors nvfp4) need FP4 tensor cores: compute capability
  // 10.0 (B200, GB200), 10.3 (B300) or 12.0 (RTX 50, RTX PRO 6000 Blackwell).
  const std::string& cc = gpu.compute_capability;
  return cc.starts_with("10.") || cc.starts_with("11.") || cc.starts_with("12.");
}

bool kv_dtype_is_fixed_fp8(const ModelSpec& model) {
  return model.mla && (model.mla->index_head_dim > 0 || !model.mla->compress_ratios.empty());
}

}  // namespace headroom::plan
