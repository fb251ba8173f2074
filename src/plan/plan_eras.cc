// What the plan knows of the v0.26+ choices: sparse-MLA models' fixed fp8 KV cache, hybrid
// models' align-mode state pages, and the GPUs NVFP4 checkpoints run on (natively or through
// Marlin's weight-only FP4 kernel).
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

namespace {

// FP4 tensor cores: compute capability 10.x (B200, B300, GB200), 11.x (Thor) and 12.x (RTX 50,
// RTX PRO 6000 Blackwell) run NVFP4 GEMMs natively.
bool native_fp4(int cc) { return cc >= 100 && cc < 130; }

}  // namespace

bool checkpoint_runs_on(const ModelSpec& model, const GpuSpec& gpu) {
  if (!is_nvfp4(model)) return true;
  // vLLM (main, 2026) model_executor/layers/quantization/modelopt.py: ModelOptNvFp4Config.
  // get_min_capability() is 75, and utils/marlin_utils_fp4.py is_fp4_marlin_supported() is
  // "current_platform.is_cuda() and has_device_capability(75)": below Blackwell the checkpoint
  // runs through Marlin's weight-only FP4 kernel. Marlin is CUDA-only.
  if (gpu.vendor == "AMD") return false;
  const int cc = gpu.capability();
  return cc == 0 || cc >= 75;
}

std::optional<std::string> nvfp4_kernel_note(const ModelSpec& model, const GpuSpec& gpu) {
  if (!is_nvfp4(model)) return std::nullopt;
  const int cc = gpu.capability();
  if (cc == 0 || native_fp4(cc)) return std::nullopt;
  const std::string name = gpu.name + " (compute capability " + gpu.compute_capability + ")";
  if (!checkpoint_runs_on(model, gpu))
    return "This NVFP4 checkpoint does not run on the " + name +
           ": vLLM needs compute capability 7.5 for its FP4 kernels (Marlin's weight-only FP4 below Blackwell); "
           "native FP4 needs 10.x or 12.x (B200, B300, RTX 50, RTX PRO 6000 Blackwell).";
  return "This NVFP4 checkpoint runs on the " + name +
         " through vLLM's Marlin weight-only FP4 kernel: the weights keep their 4-bit size, the matrix products run in 16-bit, "
         "and vLLM warns that the GPU has no native FP4 support (slower for compute-heavy batches). Native FP4 needs "
         "compute capability 10.x or 12.x (B200, B300, RTX 50, RTX PRO 6000 Blackwell).";
}

bool kv_dtype_is_fixed_fp8(const ModelSpec& model) {
  return model.mla && (model.mla->index_head_dim > 0 || !model.mla->compress_ratios.empty());
}

}  // namespace headroom::plan
