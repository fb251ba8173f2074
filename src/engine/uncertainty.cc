#include "engine/uncertainty.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/calibration_constants.h"
#include "engine/empirical.h"
#include "util/strings.h"

namespace headroom::engine {

namespace {

// The calibration set measures the empirical terms (activation, non-torch lines) on Hopper GPUs
// (H100, H200): 50 of the 53 rows that print them; the other 3 are one run each on an RTX 2060,
// RTX 3090 and RTX PRO 6000, too few to calibrate an architecture.
bool architecture_calibrated(const GpuSpec& gpu) { return gpu.vendor != "AMD" && gpu.architecture == "Hopper"; }

std::string gib(Bytes b) { return util::fixed(to_gib(b), 2) + " GiB"; }

// Tensor parallelism over NVSwitch: what the TP group adds, and what is not known about it.
void nvswitch_allowance(const VllmVersion& version, int tp, KvUncertainty& u, double& spread, double& below) {
  // What the TP group adds besides NCCL's NVLS buffers and FlashInfer's fusion workspace (both
  // derived, empirical.cc) is the median of 4 runs (calibration_constants.h), which span
  // k_nvswitch_all_reduce_spread_gib.
  u.reasons.push_back("tensor parallelism over NVSwitch: the all-reduce buffers besides NCCL's NVLS buffers and FlashInfer's "
                      "fusion workspace are fitted on 4 runs that span " + util::fixed(k_nvswitch_all_reduce_spread_gib, 2) + " GiB");
  spread += static_cast<double>(from_gib(k_nvswitch_all_reduce_spread_gib));
  if (tp > 2 && version < VllmVersion{0, 17}) {
    // The only runs of this kind, two at TP 8 on v0.10.0 from one cluster, had 1.47 and 1.50 GiB
    // less KV cache than modelled with the sort-path sampler their logs name ("FlashInfer is not
    // available", bench/calibration_corrections.jsonl); nothing derived explains it yet.
    u.reasons.push_back("tensor parallelism over more than two GPUs before vLLM 0.17: the two TP 8 runs measured (v0.10.0) "
                        "had up to 1.5 GiB less KV cache than modelled, not explained");
    below += static_cast<double>(from_gib(1.5));
  }
  if (version.minor == 16 && version.major == 0) {
    // The fusion became the default in February 2026 (#34299), taken as first in v0.17; a v0.16
    // build may already allocate its 1.5 GiB workspace.
    u.reasons.push_back("vLLM 0.16 may already compile in FlashInfer's all-reduce fusion, whose workspace takes 1.50 GiB");
    below += static_cast<double>(from_gib(1.5));
  }
}

// The vision encoder's profile pass: what is not sized, and what is estimated, about it.
void encoder_allowance(bool dynamic_resolution_vision, const ModelUncertainty& model, KvUncertainty& u, double& spread,
                       double& below, double& above) {
  // With images and video off while audio is on, the audio encoder's is the pass vLLM runs.
  if (dynamic_resolution_vision && !model.audio_profiled) {
    // The encoder can only add memory, so this widens the low side. Where its dummy batch is
    // sized (encoder_profile.cc), the allowance is the largest KV shortfall left on the calibration
    // rows of such towers with the pass and the encoder cache modelled: 0.63 GiB (Qwen3.5-9B, L40S,
    // v0.18; dots.ocr's L4 run 0.26 GiB since its plugin is modelled, the four Qwen3-VL runs within
    // 0.21 GiB since the M-RoPE cache is, Kimi-VL 0.17), rounded up. Where it is not sized,
    // the pass may be as large as the largest one headroom models for the catalogue's towers at
    // vLLM's defaults (Gemma 3's 32 dummy images, 2.81 GiB), rounded up.
    const bool modelled = model.encoder_pass_modelled;
    const double allowance = static_cast<double>(from_gib(modelled ? 0.7 : 3.0));
    if (modelled)
      u.reasons.push_back("the vision encoder takes images of any size: its profile pass on vLLM's dummy batch is "
                          "modelled, and the runs measured with it modelled had up to 0.63 GiB less KV cache");
    else if (!model.unsized_tower.empty())
      u.reasons.push_back("headroom leaves the largest input of " + model.unsized_tower + "'s processor unsized, so the "
                          "activation estimate leaves out the vision encoder's profile pass on vLLM's dummy batch (up to 3 GiB "
                          "less KV cache)");
    else
      u.reasons.push_back("the vision encoder takes images of any size: the activation estimate leaves out its profile "
                          "pass on the largest dummy image (up to 3 GiB less KV cache)");
    below += allowance;
  }
  if (model.audio_pass_unsized) {
    // The clips vLLM profiles are 30 s each (3,000 mel frames, 750 tokens), as many as the encoder
    // budget holds (10 at 8,192 batched tokens); the pass is bounded as an unsized vision tower's is.
    u.reasons.push_back("the audio encoder's profile pass on vLLM's dummy 30 s clips is not sized: the activation estimate "
                        "leaves it out (up to 3 GiB less KV cache)");
    below += static_cast<double>(from_gib(3.0));
  }
  if (model.encoder_pass_estimate > 0) {
    // The encoder's peak is derived from the tower's widths on vLLM's dummy batch (encoder_profile.cc);
    // kernels' workspaces and the allocator's rounding are not in it, so the range allows half of
    // it either way.
    u.reasons.push_back(std::string(model.audio_profiled ? "the audio" : "the vision") + " encoder's profile pass (" +
                        gib(model.encoder_pass_estimate) +
                        " on vLLM's dummy batch) is estimated from the tower's widths");
    // For a tower of any image size the allowance above already covers the low side.
    if (dynamic_resolution_vision) above += 0.5 * static_cast<double>(model.encoder_pass_estimate);
    else spread += 0.5 * static_cast<double>(model.encoder_pass_estimate);
  }
  if (model.encoder_other_reading > 0) {
    // The encoder can only take more in the other reading (Gemma 4's position one-hot).
    u.reasons.push_back(model.encoder_other_reading_why);
    below += static_cast<double>(model.encoder_other_reading);
  }
}

// The range from what the reasons allow: `spread` either side, `below` and `above` on one side
// (bytes), and the calibrated error `base` (a fraction of the KV cache) either side. Tokens scale
// with the KV memory.
void set_range(KvUncertainty& u, Bytes kv_cache, std::int64_t kv_tokens, double spread, double below, double above,
               double base = k_calibrated_kv_error) {
  const double kv = static_cast<double>(kv_cache);
  spread += base * std::abs(kv);
  // A KV figure already below zero (the start fails) keeps its range below it; otherwise the
  // range stops at zero.
  u.kv_cache_low = static_cast<Bytes>(kv < 0 ? kv - spread - below : std::max(0.0, kv - spread - below));
  u.kv_cache_high = static_cast<Bytes>(kv + spread + above);
  if (kv > 0) {
    u.kv_tokens_low = static_cast<std::int64_t>(std::floor(static_cast<double>(kv_tokens) * static_cast<double>(u.kv_cache_low) / kv));
    u.kv_tokens_high = static_cast<std::int64_t>(std::floor(static_cast<double>(kv_tokens) * static_cast<double>(u.kv_cache_high) / kv));
  }
}

}  // namespace

std::optional<KvUncertainty> kv_uncertainty(const GpuSpec& gpu, const VllmVersion& version, int tp,
                                            const MemoryBreakdown& m, std::int64_t kv_tokens, bool graphs_in_budget,
                                            bool dynamic_resolution_vision, Bytes sampler_other_path,
                                            bool tp_spans_nodes, const ModelUncertainty& model) {
  KvUncertainty u;
  double spread = 0;  // bytes either side of the predicted KV memory
  double below = 0;   // bytes on the low side only
  double above = 0;   // bytes on the high side only
  const double a = static_cast<double>(m.activation_peak), n = static_cast<double>(m.non_torch),
               g = graphs_in_budget ? static_cast<double>(m.cuda_graph) : 0.0;
  // Relative errors per term are judgements taken from the spread of the calibrated rows
  // (docs/accuracy.md, "Uncertainty range"): activation 30 % (kernels and sampler paths differ by
  // architecture), non-torch 50 % or 0.1 GiB (kernel images differ by architecture and driver),
  // graph estimate 50 % (the spec's observed estimate-to-actual ratios).
  if (!architecture_calibrated(gpu)) {
    const std::string what = gpu.key == "custom" ? "a GPU given by its memory only" : gpu.name + " (" + gpu.architecture + ")";
    u.reasons.push_back(what + ": the calibration runs that measure activation, non-torch and graph memory are on Hopper GPUs");
    // The sampler's buffers are sized by their shapes ([R, vocab] logits, probabilities and the
    // sort's copies: the same torch allocations on every CUDA GPU; FlashInfer-or-sort is a reason
    // of its own below). Where they set the peak even with the forward pass larger by the
    // allowance, the allowance applies to the rest of the activation only.
    const double a_arch = a - static_cast<double>(std::min(m.activation_peak, model.sampler_sets_peak));
    spread += k_unmeasured_architecture_activation * a_arch + std::max(0.5 * n, static_cast<double>(from_gib(0.1))) + 0.5 * g;
  }
  if (version > k_newest_calibrated) {
    u.reasons.push_back("vLLM " + version.to_string() + " is newer than the calibration runs (up to " +
                        k_newest_calibrated.to_string() + ")");
    spread += 0.2 * a + 0.5 * g + 0.25 * n;
  }
  if (tp > 1 && interconnect_of(gpu) != Interconnect::nvswitch) {
    u.reasons.push_back("tensor parallelism without NVSwitch: its all-reduce buffers (" + gib(m.non_torch) +
                        " non-torch in total) are derived, not measured");
    spread += n;
  }
  if (tp > 1 && interconnect_of(gpu) == Interconnect::nvswitch) nvswitch_allowance(version, tp, u, spread, below);
  if (tp_spans_nodes) {
    // vLLM turns custom all-reduce off for a group that spans nodes (custom_all_reduce.py:
    // "Custom allreduce is disabled because this process group spans across nodes") and NCCL runs
    // over the network transport. The one such calibration run (Qwen2-7B, A100 40GB, one GPU per
    // node, TP 2 over Ray, v0.10.1) logged 1.02 GiB less KV cache than predicted, where the
    // same-node run on A100 80GB is within 0.04 GiB; the allowance is that shortfall, rounded up.
    u.reasons.push_back("the tensor-parallel group spans nodes: custom all-reduce is off and NCCL runs over the network, "
                        "whose buffers are not modelled (the one run measured had 1.0 GiB less KV cache)");
    below += static_cast<double>(from_gib(1.1));
  }
  if (gpu.unified_memory) {
    // vLLM sizes the KV cache from cudaMemGetInfo's free memory (the non-torch increase is what
    // left "free" beyond torch's allocations). On a memory the CPU shares, whatever the host takes
    // while vLLM profiles (page cache of the checkpoint and of torch.compile's cache, Inductor's
    // compile workers, other processes) leaves "free" too and counts against the KV cache. Not
    // modelled: the one such calibration run (GB10, NGC v0.13, gpt-oss-20b) spent 1.28 GiB more
    // besides its weights than the activation and non-torch estimates, rounded up.
    u.reasons.push_back(gpu.name + " shares its memory with the CPU: what the host allocates while vLLM profiles (page "
                        "cache, torch.compile's workers, other processes) counts as non-torch memory; not modelled (the "
                        "one run measured took 1.3 GiB more than the estimate)");
    below += static_cast<double>(from_gib(1.3));
  }
  encoder_allowance(dynamic_resolution_vision, model, u, spread, below, above);
  if (!model.architecture_assumed_from.empty())
    u.reasons.push_back("the architecture is assumed from " + model.architecture_assumed_from +
                        ", whose name this repo's extends; its own config.json was not read (a fine-tune or "
                        "re-quantization keeps its base's layers, but nothing here checked it)");
  if (model.guessed_quantization_extra > 0) {
    const std::string what = model.unknown_ignore_entries > 0
                                 ? std::to_string(model.unknown_ignore_entries) + " entries of the " + model.guessed_method +
                                       " checkpoint's ignore list are not known"
                                 : "the quantization (" + model.guessed_method + ") is a guess from the repo name";
    u.reasons.push_back(what + ": if the checkpoint also keeps attention and shared experts in 16-bit, the weights are " +
                        gib(model.guessed_quantization_extra) + " larger");
    below += static_cast<double>(model.guessed_quantization_extra);
  }
  if (sampler_other_path > 0) {
    // The estimate takes FlashInfer's sampling kernels (the constant fitted on this era's runs);
    // without FlashInfer installed vLLM falls back to the sort path, whose peak is higher.
    u.reasons.push_back("the sampler uses FlashInfer's top-k/top-p kernels only when FlashInfer is installed (vLLM's Docker "
                        "image has it; a plain pip install may not, and the log then says \"FlashInfer is not available\"): "
                        "the sort path would take " + gib(sampler_other_path) +
                        " more (VLLM_USE_FLASHINFER_SAMPLER=0 or 1 settles it)");
    below += static_cast<double>(sampler_other_path);
  } else if (sampler_other_path < 0) {
    // v0.11.0: the estimate takes the sort path its runs measured (pip installs, where FlashInfer
    // was an optional extra); with FlashInfer installed the kernels ran, whose peak is lower.
    u.reasons.push_back("vLLM 0.11.0 samples top-k/top-p with FlashInfer's kernels whenever FlashInfer is installed (its "
                        "Docker image; a plain pip install of 0.11.0 lacks it, and from 0.11.1 the kernels are opt-in): "
                        "they would take " + gib(-sampler_other_path) + " less (VLLM_USE_FLASHINFER_SAMPLER=0 or 1 settles it)");
    above += static_cast<double>(-sampler_other_path);
  }
  if (model.runner_v2_sampler_less >= from_gib(0.05)) {
    u.reasons.push_back("model runner v2 runs this model: the activation estimate takes the sampler constant fitted on the "
                        "V1 runner, and model runner v2's dummy sampler, as its code reads, keeps only the logits (its dummy "
                        "requests ask for no sampling parameters): " + gib(model.runner_v2_sampler_less) +
                        " less, which no calibration run measures");
    above += static_cast<double>(model.runner_v2_sampler_less);
  }
  if (model.gdn_graph_estimate_transient && m.kv_cache > 0) {
    u.reasons.push_back("vLLM " + version.to_string() + " estimates the CUDA graphs of Gated DeltaNet hybrids with a "
                        "profiling transient counted as graph memory (#50780, from v0.26): such models were reported with "
                        "18-24 % less KV cache; VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 avoids it");
    below += k_gdn_graph_transient_kv_share * static_cast<double>(m.kv_cache);
  }
  if (model.rocm_moe_padding > 0) {
    u.reasons.push_back("ROCm pads the unquantized MoE experts' rows (" + gib(model.rocm_moe_padding) +
                        ", counted); with AITER's fused MoE (VLLM_ROCM_USE_AITER=1) the weights "
                        "are shuffled into unpadded copies, and the KV cache has that much more (VLLM_ROCM_USE_AITER=0 or "
                        "1 settles it)");
    above += static_cast<double>(model.rocm_moe_padding);
  }
  if (u.reasons.empty()) return std::nullopt;
  set_range(u, m.kv_cache, kv_tokens, spread, below, above);
  return u;
}

KvUncertainty stated_kv_range(const std::optional<KvUncertainty>& outside, Bytes kv_cache, std::int64_t kv_tokens,
                              bool reserved) {
  if (outside) return *outside;
  KvUncertainty u;
  u.reserved = reserved;
  u.calibrated = !reserved;
  set_range(u, kv_cache, kv_tokens, 0, 0, 0, reserved ? 0.0 : k_calibrated_kv_error);
  return u;
}

}  // namespace headroom::engine
