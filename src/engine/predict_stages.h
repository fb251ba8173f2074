// The stages of predict() (predictor.cc) in the order vLLM starts, and the state each hands to the
// next. Each stage is a function in a file named for it (stage_*.cc) that mirrors one vLLM step,
// takes what it needs and returns what it made; no stage reaches into another's state. Results
// that vLLM computes once per pipeline-parallel rank are vectors with one entry per stage of the
// pipeline (rank 0 of each TP group), first to last.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/vllm_eras.h"
#include "engine/weights.h"
#include "headroom/kv_cache_spec.h"
#include "headroom/vllm_engine.h"
#include "util/strings.h"

namespace headroom::engine {

// "12.34 GiB", as the messages and notes print sizes.
inline std::string gib(Bytes b) { return util::fixed(to_gib(b), 2) + " GiB"; }

// --- 1. The configuration (stage_configuration.cc) ---
struct ResolvedConfig {
  VllmVersion requested_version;  // what the user asked for
  VllmVersion version;            // whose accounting applies (v0.7.3 when vLLM runs its V0 engine)
  EraRules era;                   // the rules of `version` for this model
  ResolvedSettings settings;      // after vLLM's defaults; block size and max_model_len before KV sizing
  std::int64_t derived_max_model_len = 0;
  double model_dtype_bytes = 2;
  double kv_element_bytes = 2;
  std::string online_quantization;       // "fp8" / "bitsandbytes" quantized at load, else ""
  bool fp4_indexer_cache = false;        // DeepSeek-V4's indexer keys in MXFP4 rows
  std::optional<Failure> dtype_failure;  // the dtype the GPU cannot run (a worker-init failure)
  std::optional<Failure> engine_failure;  // VLLM_USE_V1=1 where the V1 oracle refuses (a config failure)
  int gpus_used = 1;                     // tp × pp × dp
  std::vector<std::string> warnings;     // the dtype the model runs in instead of its own
  std::vector<std::string> notes;
};

// --- 2. The checks before allocation (stage_checks_before_allocation.cc) ---
struct ChecksBeforeAllocation {
  std::optional<Failure> failure;  // the first, in vLLM's order
  std::vector<std::string> warnings;
};

// --- 3. The budget (stage_budget.cc) ---
struct Budget {
  Bytes total = 0;            // what CUDA reports for the device
  Bytes budget = 0;           // ceil(total × gpu_memory_utilization)
  Bytes baseline = 0;         // CUDA context + NCCL at vLLM's init snapshot
  Bytes free_at_start = 0;    // free memory at the snapshot
  Bytes other_processes = 0;  // what other processes hold on the GPU
  Bytes usable = 0;           // total − baseline − other processes: what loading and profiling may take
  std::optional<Failure> free_memory_failure;
  std::vector<std::string> notes;  // what to change when the free memory falls short
};

// --- 4. The weights per stage (stage_weights.cc) ---
struct RankWeights {
  StageWeights layout;         // the checkpoint's share: layers [first, end), bytes with load buffers
  Bytes resident = 0;          // on the GPU: after --cpu-offload-gb, or the measured figure
  std::optional<Failure> oom;  // weights_load_oom: `resident` exceeds the usable memory
};

struct LoadedWeights {
  WeightPlan plan;
  std::vector<RankWeights> ranks;  // one per pipeline stage
  std::optional<Failure> construction_failure;  // model construction (before any weight is read)
  std::string source;              // "exact (safetensors headers)", "from the architecture", measured
  std::vector<std::string> notes;
  // ROCm's padding of the unquantized MoE rows on the first stage, when VLLM_ROCM_USE_AITER does
  // not say whether AITER's shuffle copies them back unpadded (the KV range's other reading).
  Bytes rocm_moe_padding_unsettled = 0;
};

// --- 5. The profile run (stage_profile.cc) ---
struct RankProfile {
  Bytes activation = 0;          // torch peak of the dummy forward and sampler
  Bytes sampler = 0;             // part of `activation`: the sampler's [R, vocab] buffers
  // The sampler's buffers where they set the activation peak even with the forward pass larger by
  // the architecture allowance (uncertainty.h); 0 otherwise, and when the peak was measured.
  Bytes sampler_sets_peak = 0;
  // How much the peak moves when the sampler takes its other path where an installed FlashInfer
  // decides it (v0.8-v0.11.0): > 0 the sort path takes more than the estimate, < 0 FlashInfer's
  // kernels take less.
  Bytes sampler_other_path = 0;
  // On model runner v2: how much less the activation peak is when its dummy sampler takes what its
  // code reads instead of the V1 runner's fitted constant (ActivationInputs::runner_v2_sampler).
  Bytes runner_v2_sampler_less = 0;
  Bytes non_torch = 0;           // non-torch increase since the init snapshot
  Bytes graph = 0;               // what the full graph capture after the KV allocation takes
  Bytes graph_estimate = 0;      // what the profile subtracts for graphs before the KV cache (0: none)
  Bytes kv_available = 0;        // "Available KV cache memory" (may be negative)
  Bytes encoder_pass_estimate = 0;  // the encoder pass's peak when it sets `activation` (an estimate)
  Bytes encoder_share = 0;          // how much the encoder pass and its cached outputs add to `activation`
  bool encoder_pass_modelled = false;  // the encoder's dummy batch was sized (encoder_profile.h)
  Bytes fusion_workspace = 0;          // FlashInfer's all-reduce fusion workspace, part of non_torch
  Bytes runner_buffers = 0;            // v0.26+: the model runner's persistent buffers, part of non_torch
  Bytes encoder_other_reading = 0;     // what the encoder's other reading would add (EncoderProfile::other_reading)
  std::string encoder_other_reading_why;
  // vLLM runs no encoder pass at all: every modality limited to 0, --language-model-only or
  // --skip-mm-profiling (compute_mm_encoder_budget; profile_run's skip_mm_profiling branch).
  bool encoder_pass_off = false;
  // vLLM profiles an audio encoder headroom does not size: an audio-only model (Qwen2-Audio), or an
  // omni model whose image and video inputs are limited to 0 while audio stays on (Gemma 4's
  // few-millisecond dummy clip excepted).
  bool audio_pass_unsized = false;
  // The audio encoder is what vLLM profiles (images and video off, audio on), sized or not.
  bool audio_profiled = false;
  // vLLM runs the pass but the tower's family is not sized (EncoderProfile::family_unsized).
  bool encoder_pass_unsized = false;
  std::string encoder_note;  // the dummy batch the encoder runs on, as the report says it ("" when none)
  std::optional<Failure> oom;    // profile_run_oom (only when the weights themselves fit)
};

struct Profile {
  std::vector<RankProfile> ranks;  // one per pipeline stage
};

// --- 6. The KV cache layout (stage_kv_layout.cc) and capacity (stage_kv_capacity.cc) ---
// Whether any decoder layer is of this kind.
bool has_kind(const ModelSpec& m, LayerKind kind);

struct RankKvCache {
  KvCacheConfig config;
  std::int64_t num_blocks = 0;
  int block_size = 16;
  int layers = 0;                       // decoder layers of the stage
  std::vector<LayerKvSpec> check_specs;  // V1 v0.8-v0.9 with sliding layers: the specs the check sums
};

struct KvLayout {
  std::vector<RankKvCache> ranks;  // one per pipeline stage
  std::size_t binding = 0;         // the rank with the fewest blocks: the engine takes its count
  std::int64_t in_flight_tokens = 0;  // tokens in flight per request (sliding / chunked layers)
  std::int64_t num_gpu_blocks = 0;    // the binding rank's blocks, or --num-gpu-blocks-override
  Bytes block_bytes = 0;              // one block of every layer
  Bytes kv_available = 0;             // what the checks see: the profile's figure, or the override's blocks
  KvCacheLayout summary;              // the report's layout (blocks_per_request is the capacity's)
  std::vector<std::string> notes;
};

struct KvCapacity {
  std::int64_t max_model_len = 0;  // after --max-model-len auto
  std::int64_t largest_fitting_max_model_len = 0;
  std::int64_t kv_cache_tokens = 0;
  double max_concurrency = 0;
  std::int64_t blocks_per_request = 0;
  std::vector<Failure> failures;   // in the order vLLM meets them
  std::vector<std::string> notes;
};

// --- 7. The checks after KV sizing (stage_checks_after_kv.cc) ---
struct AfterKvChecks {
  std::optional<Failure> failure;  // graph capture, then the sampler warm-up
  std::vector<std::string> notes;  // said only when this failure is the verdict
};

// The stages, in vLLM's order.

// 1. config/model.py, config/cache.py, config/scheduler.py, engine/arg_utils.py create_engine_config.
Result<ResolvedConfig> resolve_configuration(const ModelSpec& model, const GpuSetup& gpus, const VllmFlags& flags,
                                             const VllmVersion& requested_version);

// 2. The checks before anything is allocated (startup_checks.h): engine configuration, worker init.
ChecksBeforeAllocation checks_before_allocation(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags,
                                                const ResolvedConfig& config);

// 3. v1/worker/utils.py request_memory and gpu_worker.py init_device's free-memory check.
Budget request_memory(const GpuSetup& gpus, const ResolvedConfig& config);

// 4. v1/worker/gpu_model_runner.py load_model: each pipeline stage's weights.
LoadedWeights load_weights(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags,
                           const ResolvedConfig& config, const Budget& budget, const PredictOptions& options);

// 5. v1/worker/gpu_worker.py determine_available_memory (gpu_model_runner.py profile_run).
Profile profile_run(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags, const ResolvedConfig& config,
                    const Budget& budget, const LoadedWeights& weights, const PredictOptions& options);

// 6a. gpu_model_runner.py get_kv_cache_spec and v1/core/kv_cache_utils.py get_kv_cache_configs.
// Errors: unsupported when the layers' pages cannot share one block layout.
Result<KvLayout> kv_cache_layout(const ModelSpec& model, const VllmFlags& flags, const ResolvedConfig& config,
                                 const LoadedWeights& weights, const Profile& profile);

// 6b. kv_cache_utils.py check_enough_kv_cache_memory and _report_kv_cache_config, and the
// allocation's own checks.
KvCapacity kv_cache_capacity(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags,
                             const ResolvedConfig& config, const KvLayout& layout);

// 7. gpu_worker.py compile_or_warm_up_model: graph capture, then the sampler warm-up.
AfterKvChecks checks_after_kv_sizing(const ModelSpec& model, const VllmFlags& flags, const ResolvedConfig& config,
                                     const Budget& budget, const LoadedWeights& weights, const Profile& profile,
                                     const KvLayout& layout);

// 8. The verdict (the first failure in vLLM's order) and the report's notes.
struct StageResults {
  const ResolvedConfig& config;
  const ChecksBeforeAllocation& before_allocation;
  const Budget& budget;
  const LoadedWeights& weights;
  const Profile& profile;
  const KvLayout& layout;
  const KvCapacity& capacity;
  const AfterKvChecks& after_kv;
};
Prediction verdict_and_notes(const ModelSpec& model, const GpuSetup& gpus, const PredictOptions& options,
                             const StageResults& stages);

}  // namespace headroom::engine
