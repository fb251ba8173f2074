// What the calibration set covers (../shared/calibration/startup.jsonl: the runs whose empirical
// terms were measured) and how far the KV cache may move for a run outside it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "headroom/gpu.h"
#include "headroom/vllm_engine.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

// The newest vLLM version in the calibration set.
inline const VllmVersion k_newest_calibrated{0, 26, 1};

// The KV error headroom has inside the calibrated region, taken on runs held out from the
// calibration: the 90th percentile of |predicted − logged KV cache| / logged, 1.1 % over the
// H100 text-model starts nobody on the team had seen (issue 25's statement of them; median
// 0.28 %). On the calibration rows themselves it is smaller (`bench_accuracy`, "KV error inside
// the calibrated region": p90 0.30 % over 45 rows, 2026-11-29), which would overstate what a new
// run can expect. The range stated inside the region is this either side; a range outside it
// allows it on top of what its reasons add, since those runs' terms carry the same error.
inline constexpr double k_calibrated_kv_error = 0.011;

// How far the activation peak may move on a GPU architecture the calibration does not measure: a
// judgement from the spread of the calibrated rows (docs/accuracy.md, "Uncertainty range").
inline constexpr double k_unmeasured_architecture_activation = 0.3;

// What the CUDA graph estimate of v0.26+ takes from a Gated DeltaNet hybrid's KV cache by charging
// a profiling transient as graph memory: 18-24 % of the KV pool (#50780, open; ../shared/spec/
// vllm-v026-v033.md §2.3). The larger figure, as a share of the predicted KV memory.
inline constexpr double k_gdn_graph_transient_kv_share = 0.24;

// The KV range for a prediction outside the calibrated region, nullopt inside it. Each reason adds
// the plausible error of the empirical terms it affects (activation A, non-torch N, graphs G when
// they are charged to the budget) to the available KV memory; tokens scale with it.
// `dynamic_resolution_vision`: a multimodal model whose vision tower takes images of any size
// (no fixed image_size), or whose processor's largest input headroom does not size, and whose
// encoder pass vLLM runs (not text-only, no --skip-mm-profiling);
// what that pass takes is less certain than a fixed tower's, and more so where it is not modelled
// (ModelUncertainty::encoder_pass_modelled).
// `sampler_other_path`: how much the activation peak moves when the sampler takes its other path,
// for a version where an installed FlashInfer decides it (v0.8-v0.11.0 without
// VLLM_USE_FLASHINFER_SAMPLER): > 0 PyTorch's sort path takes more than the estimate, < 0
// FlashInfer's kernels take less; 0 otherwise.
// `tp_spans_nodes`: the tensor-parallel group has more ranks than a node has GPUs, so its
// all-reduce crosses the network.
// What the model side adds to the range: an encoder pass that is modelled but estimated, and a
// quantization method that was guessed (its other reading's extra weight bytes).
struct ModelUncertainty {
  Bytes encoder_pass_estimate = 0;    // the modelled encoder peak (encoder_profile.h), when it sets the activation peak
  bool encoder_pass_modelled = false; // encoder_profile.cc sized vLLM's dummy batch for this tower
  std::string unsized_tower;          // the architecture, when vLLM runs a pass headroom does not size
  // An audio-only model (Qwen2-Audio) whose audio encoder vLLM profiles on its dummy clips: not sized.
  bool audio_pass_unsized = false;
  bool audio_profiled = false;  // the audio encoder, not the vision one, is what vLLM profiles
  Bytes encoder_other_reading = 0;    // the encoder pass's other reading (EncoderProfile::other_reading)
  std::string encoder_other_reading_why;
  Bytes guessed_quantization_extra = 0;  // weights_under_the_other_reading − weights_under_the_guess (≥ 0)
  std::string guessed_method;           // the guessed method, for the reason
  // The method was read but part of its ignore list is not known (QuantizationConfig::
  // ignore_entries_unaccounted): the other reading keeps attention and shared experts 16-bit too.
  int unknown_ignore_entries = 0;
  // The sampler's [R, vocab] buffers where they set the activation peak (RankProfile::sampler_sets_peak).
  Bytes sampler_sets_peak = 0;
  // Model runner v2 runs the model: the activation peak with its dummy sampler as its code reads,
  // below the fitted estimate by this much (RankProfile::runner_v2_sampler_less).
  Bytes runner_v2_sampler_less = 0;
  // ROCm's padding of the unquantized MoE rows, counted in the weights, where nothing says whether
  // AITER's MoE shuffle drops it (LoadedWeights::rocm_moe_padding_unsettled).
  Bytes rocm_moe_padding = 0;
  // A Gated DeltaNet hybrid whose CUDA graphs vLLM v0.26+ estimates before sizing the KV cache:
  // its estimate charges a profiling transient as graph memory (#50780).
  bool gdn_graph_estimate_transient = false;
  // The catalogue model whose architecture a repo not read was assumed to share (by its name).
  std::string architecture_assumed_from;
};

std::optional<KvUncertainty> kv_uncertainty(const GpuSpec& gpu, const VllmVersion& version, int tensor_parallel_size,
                                            const MemoryBreakdown& memory, std::int64_t kv_tokens, bool graphs_in_budget,
                                            bool dynamic_resolution_vision = false, Bytes sampler_other_path = 0,
                                            bool tp_spans_nodes = false, const ModelUncertainty& model = {});

// The range stated with a prediction: `outside` (kv_uncertainty's) where the run lies outside
// the calibrated region; inside it the calibrated error either side; with --kv-cache-memory-bytes
// (`reserved`) the KV cache is what the user reserved, and the range is that figure.
KvUncertainty stated_kv_range(const std::optional<KvUncertainty>& outside, Bytes kv_cache, std::int64_t kv_tokens,
                              bool reserved);

}  // namespace headroom::engine
