// The prediction engine: reproduces vLLM's startup memory accounting (budget, weights, activation
// peak, non-torch memory, CUDA graphs, KV cache blocks/tokens, concurrency) for a model, GPUs, flags
// and vLLM version, and whether startup succeeds, with the error vLLM would raise if not.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "headroom/error.h"
#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/units.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_version.h"

namespace headroom {

// The GPUs a prediction runs on. All GPUs of one setup are the same model.
struct GpuSetup {
  GpuSpec gpu;
  int count = 1;                    // GPUs available (per node when nodes > 1)
  int nodes = 1;
  std::optional<Bytes> free_bytes;  // live free memory of the fullest GPU used (probe); nullopt = idle GPU
  // Whether free_bytes was measured by vLLM itself after its CUDA context and NCCL were set up
  // (the "Free memory on device" of a log), rather than by a probe before vLLM started.
  bool free_measured_by_vllm = false;
  std::vector<std::string> memory_holders;  // "PID 4242 python holds 3.10 GiB on GPU 0"
};

// Terms measured on a real run of the same setup (from the history); they replace the estimates.
struct MeasuredTerms {
  std::optional<Bytes> weights;
  std::optional<Bytes> activation_peak;
  std::optional<Bytes> non_torch;
  std::optional<Bytes> cuda_graph;
  std::string source;  // "measured on 2026-06-01 (history #12)"
};

struct PredictOptions {
  std::optional<MeasuredTerms> measured;
};

// The flags after vLLM's defaults for the version, GPU and model were applied.
struct ResolvedSettings {
  int tensor_parallel_size = 1;
  int pipeline_parallel_size = 1;
  int data_parallel_size = 1;
  std::int64_t max_model_len = 0;
  double gpu_memory_utilization = 0.9;
  int max_num_seqs = 0;
  int max_num_batched_tokens = 0;
  std::string kv_cache_dtype;  // resolved: "auto" stays "auto" unless the checkpoint declares fp8 KV
  std::string dtype;           // resolved torch dtype: bfloat16, float16, float32
  std::string quantization;    // "" when none
  bool enforce_eager = false;
  int block_size = 16;
  bool enable_prefix_caching = false;
  bool enable_chunked_prefill = true;
  std::optional<Bytes> kv_cache_memory_bytes;
  bool estimate_cuda_graphs = false;  // graph memory subtracted before KV sizing
  UsageContext usage_context = UsageContext::api_server;
  // --performance-mode as vLLM runs it from v0.17 (balanced, interactivity, throughput); "" before.
  std::string performance_mode;
};

// Per-GPU memory split, in bytes (rank 0, or the most constrained pipeline stage).
struct MemoryBreakdown {
  Bytes total = 0;            // what CUDA reports for the device
  Bytes budget = 0;           // ceil(total × gpu_memory_utilization) (requested memory)
  Bytes weights = 0;
  Bytes activation_peak = 0;  // torch peak increase during the profile run (incl. sampler)
  Bytes non_torch = 0;        // non-torch increase since the init snapshot
  Bytes cuda_graph = 0;       // graph memory: subtracted from the budget when estimated, else outside it
  Bytes kv_cache = 0;         // "Available KV cache memory" (may be negative)
  Bytes outside_budget = 0;   // total − budget: CUDA context, NCCL, other processes
  Bytes baseline = 0;         // CUDA context + NCCL init at the snapshot (not charged to the budget)
  // The baseline and other processes' memory where the version charges them to the budget (V0
  // v0.6.4, V1 before v0.9.1: non-KV memory is the device's whole use); 0 elsewhere.
  Bytes charged_baseline = 0;
  Bytes encoder_profile = 0;  // part of activation_peak: the multimodal encoder's pass on its dummy batch
};

struct KvCacheLayout {
  int block_size = 16;
  Bytes page_bytes = 0;               // per layer slot per block
  int group_size = 0;                 // layer slots per group (layers of this stage for dense models)
  int num_groups = 0;
  std::int64_t blocks_per_request = 0;  // blocks one max_model_len request needs
  Bytes bytes_per_token = 0;          // full-attention bytes per token per GPU, all layers
  std::string description;            // "32 full-attention layers, 8 KV heads × 128, bf16"
};

struct Failure {
  std::string error_class;  // taxonomy class: kv_cache_insufficient, no_kv_cache_memory, ...
  std::string phase;        // startup-free-memory-check, weights-load, kv-cache-alloc, config, ...
  std::string message;      // the message vLLM would print
  std::optional<std::int64_t> estimated_max_model_len;
  // mm_item_exceeds_batched_tokens: the largest multimodal item's tokens (max_tokens_per_mm_item).
  std::optional<std::int64_t> mm_item_tokens = std::nullopt;
};

// Where each number came from: "estimate", "exact (safetensors headers)", "measured ...".
struct TermSources {
  std::string weights;
  std::string activation_peak;
  std::string non_torch;
  std::string cuda_graph;
};

// The spread of the KV cache when the run lies outside what the calibration measured (another GPU
// family, a newer vLLM, an unmeasured interconnect): the empirical terms' plausible error carried
// through to tokens, with the reasons. Inside the calibrated region the stated range
// (Prediction::kv_range) is the calibrated error either side and has no reasons.
struct KvUncertainty {
  Bytes kv_cache_low = 0;
  Bytes kv_cache_high = 0;
  std::int64_t kv_tokens_low = 0;
  std::int64_t kv_tokens_high = 0;
  std::vector<std::string> reasons;  // "RTX 4090 (Ada consumer) has no calibration runs ..."
  bool calibrated = false;           // inside the calibrated region: the range is its held-out error
  bool reserved = false;             // --kv-cache-memory-bytes: the KV cache is what the user reserved
};

struct Prediction {
  VllmVersion version;
  VllmVersion rules_version;  // the version whose rules were applied (≤ VllmVersion::newest_described())
  std::string modelled_with;  // "v0.33 modelled with v0.31 rules" when they differ, else ""
  ResolvedSettings settings;
  MemoryBreakdown memory;               // the pipeline stage with the fewest KV blocks (sets num_gpu_blocks)
  std::vector<MemoryBreakdown> stages;  // every pipeline stage, first to last (rank 0 is stages[0])
  KvCacheLayout kv;
  TermSources sources;
  std::int64_t num_gpu_blocks = 0;
  std::int64_t kv_cache_tokens = 0;
  double max_concurrency = 0;
  std::int64_t largest_fitting_max_model_len = 0;  // binary-searched as vLLM's estimate does
  int gpus_used = 1;                               // tp × pp × dp
  std::optional<KvUncertainty> uncertainty;  // outside the calibrated region: the range and why
  KvUncertainty kv_range;                    // the range stated with every KV figure: `uncertainty`'s, else
                                             // the calibrated region's error either side
  bool starts = false;
  std::optional<Failure> failure;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
};

// Runs the prediction. Errors (not failures of vLLM): invalid_argument for flag combinations that
// cannot be evaluated (e.g. more GPUs requested than the setup has), unsupported for architectures
// that cannot be modelled. A configuration vLLM would reject is a Prediction with starts == false.
Result<Prediction> predict(const ModelSpec& model, const GpuSetup& gpus, const VllmFlags& flags,
                           const VllmVersion& version, const PredictOptions& options = {});

}  // namespace headroom
