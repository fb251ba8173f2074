// Planning: searches vLLM's flags with the prediction engine for a configuration that starts on
// the given GPUs, serves the workload, and is as capable as the hardware allows; explains each
// choice, offers alternatives with their trade-off, and, when nothing fits, the smallest change
// that would. The renderings (vllm serve, Python, YAML, Ray) live in plan_render.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "headroom/error.h"
#include "headroom/model.h"
#include "headroom/units.h"
#include "headroom/vllm_engine.h"

namespace headroom {

// What the plan optimises once the workload fits.
//   throughput: the most requests served at once over all GPUs (data-parallel replicas of the
//               smallest layout that serves them well, see docs/plan.md);
//   context:    the longest max_model_len that still serves `concurrency` requests at once;
//   latency:    the largest tensor-parallel group, no pipeline stages, max_num_seqs = concurrency.
enum class PlanGoal { throughput, context, latency };
std::string_view to_string(PlanGoal goal);
Result<PlanGoal> parse_plan_goal(std::string_view text);

// The default safety margin: max(0.5 GiB, 2% of the GPU's memory).
Bytes default_plan_margin(const GpuSpec& gpu);

struct RunRecord;  // headroom/history.h

// Flags of a pasted command that every configuration of a plan keeps as given, because they change
// what vLLM allocates but are not the plan's to choose: --performance-mode (the default batch limits,
// the CUDA graphs captured) and the multimodal ones (the limits per prompt, which may make the run
// text-only, the dummy input sizes, --mm-processor-kwargs, --mm-encoder-tp-mode,
// --language-model-only, --skip-mm-profiling).
struct KeptFlags {
  // --quantization (online fp8, bitsandbytes, ...) and --dtype change the weights the search sizes;
  // the renderer writes them with the plan's own flags, so values() leaves them out.
  std::optional<std::string> quantization;
  std::optional<std::string> dtype;
  std::string hf_overrides;  // --hf-overrides (a longer context through RoPE scaling)
  // --compilation-config (its capture sizes and cudagraph_mode set the graphs every configuration captures)
  std::string compilation_config;
  std::optional<std::vector<int>> cudagraph_capture_sizes;
  std::optional<int> max_cudagraph_capture_size;
  std::optional<std::string> cudagraph_mode;
  std::optional<std::string> performance_mode;
  std::map<std::string, int> limit_mm_per_prompt;
  std::map<std::string, VllmFlags::MmDummySize> mm_dummy_sizes;
  std::string mm_processor_kwargs;
  std::optional<std::string> mm_encoder_tp_mode;
  bool language_model_only = false;
  bool skip_mm_profiling = false;

  static KeptFlags from(const VllmFlags& flags);
  bool empty() const;
  void apply(VllmFlags& flags) const;
  // (flag without its dashes, value; "" for a switch) in vLLM's spelling, JSON for the limits and kwargs.
  std::vector<std::pair<std::string, std::string>> values() const;
};

struct PlanRequest {
  std::optional<std::int64_t> context_tokens;  // longest request to serve; nullopt: as long as fits
  int concurrency = 1;                         // simultaneous requests at context_tokens
  PlanGoal goal = PlanGoal::throughput;
  std::optional<int> max_gpus;                 // at most this many GPUs in all (default: all of the setup)
  bool allow_fp8_kv = false;                   // kv_cache_dtype fp8 may be chosen
  bool allow_eager = false;                    // enforce_eager may be chosen when CUDA graphs do not fit
  // Flags of a pasted command that every configuration keeps as given (plan_hints).
  KeptFlags kept;
  // Memory every recommended configuration leaves unused on each GPU: it still starts when other
  // processes take this much more, or when the terms outside the budget are this much larger.
  // nullopt: default_plan_margin(gpu).
  std::optional<Bytes> safety_margin_bytes;
  // Recorded runs (headroom/history.h) to consult: measured terms replace estimates for the same
  // setup, and configurations recorded as failing are avoided and cited. Null: no history.
  const std::vector<RunRecord>* history = nullptr;
};

// One decision of a configuration and the number that drove it.
struct PlanChoice {
  std::string setting;  // vLLM's name: "gpu_memory_utilization"
  std::string value;    // as vLLM takes it: "0.87"
  std::string reason;   // "the startup check allows at most 0.87: 13.57 GiB free at start − 0.50 GiB margin"
};

// A configuration the search found, with its prediction on the setup as given.
struct PlannedConfig {
  std::string label;      // "recommended", "longer context", "fp8 KV cache", "eager mode", "one replica, tp=4"
  std::string trade_off;  // one line, for alternatives
  VllmFlags flags;        // every flag the plan sets (explicit, so the renderings all predict the same)
  Prediction prediction;  // on the setup as given (no margin taken off)
  double utilization_min = 0;  // the safe interval of gpu_memory_utilization (0.01 steps)
  double utilization_max = 0;
  std::string utilization_min_reason;
  std::string utilization_max_reason;
  int replica_gpus = 1;               // tensor × pipeline parallel size
  double requests_at_context = 0;     // requests of max_model_len the KV cache holds at once, per replica
  std::vector<PlanChoice> choices;
};

// A change to the request or the hardware after which a plan exists.
struct FitChange {
  std::string kind;     // more_gpus, quantized_checkpoint, fp8_weights, fp8_kv_cache, eager, shorter_context,
                        // fewer_requests, free_memory
  std::string summary;  // "4 × RTX 4080 with tensor_parallel_size 4: 18,432 tokens of KV cache"
  std::string option;   // the headroom option that applies it: "--gpus 4", "--context 3072", a model id
};

struct NoFit {
  std::string reason;                // "the weights (16.1 GiB per GPU at tp=1) do not fit in the 14.6 GiB usable"
  std::vector<std::string> details;  // what each layout ran into
  std::vector<FitChange> changes;    // the smallest changes that fit, most direct first
};

struct Plan {
  std::string model_id;
  GpuSetup gpus;
  VllmVersion version;
  PlanRequest request;
  Bytes safety_margin_bytes = 0;    // the margin used
  std::int64_t context_tokens = 0;  // the context the plan serves (request's, or the longest that fits)
  std::int64_t model_max_len = 0;   // the model's derived max_model_len
  std::optional<PlannedConfig> recommended;
  std::vector<PlannedConfig> alternatives;  // at most three
  std::vector<std::string> explanation;     // why the recommendation, the utilization story, warnings
  std::optional<NoFit> no_fit;              // set when recommended is empty
  int predictions_run = 0;                  // predict() calls the search made
};

// Searches for a plan. Errors: invalid_argument for requests that cannot be planned (context
// longer than the model supports, concurrency < 1, max_gpus < nodes or above the GPUs given,
// a margin larger than the GPU); errors of predict() for models it cannot model. When nothing
// fits, the Plan has no recommendation and no_fit says why and what would fit.
// What a vLLM command says about the workload to plan for (`plan -- vllm serve ...`, /v1/plan's
// "command"): --max-model-len as the context, TP x PP x DP as the GPUs, an fp8 --kv-cache-dtype and
// --enforce-eager as what the plan may choose. Only what `given` (the request as stated) and
// `gpus_given` leave open is returned; `taken` says each in words, for a note.
struct CommandHints {
  std::optional<std::int64_t> context;
  int gpus = 0;  // 0: the command runs on one GPU
  bool allow_fp8_kv = false;
  bool allow_eager = false;
  KeptFlags kept;  // --performance-mode and the multimodal flags, kept in every configuration
  std::vector<std::string> taken;
};
CommandHints plan_hints(const VllmFlags& flags, const PlanRequest& given, bool gpus_given);

Result<Plan> make_plan(const ModelSpec& model, const GpuSetup& gpus, const PlanRequest& request,
                       const VllmVersion& version);

}  // namespace headroom
