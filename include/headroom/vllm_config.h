// VllmFlags: the vLLM engine arguments headroom models, as a user gives them (unset = vLLM's
// default for the version), and the parser for pasted `vllm serve` / api_server command lines.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

// Where vLLM was started from: it changes the default batch sizes (arg_utils.py get_batch_defaults).
enum class UsageContext { api_server, llm_class, engine };

// A flag of the command that neither headroom's tables nor vLLM's flag list (data/vllm_cli_flags.json)
// know, within two edits of a flag vLLM has: a typo, which vLLM's argparse refuses.
struct UnrecognizedFlag {
  std::string name;        // "--max-modle-len"
  std::string shown;       // as written, with the value it took: "--max-modle-len 5"
  std::string suggestion;  // the nearest vLLM flag: "--max-model-len"
};

struct VllmFlags {
  std::optional<int> tensor_parallel_size;
  std::optional<int> pipeline_parallel_size;
  std::optional<int> data_parallel_size;
  bool enable_expert_parallel = false;
  std::optional<std::int64_t> max_model_len;  // -1 means "auto"
  bool max_model_len_auto = false;
  std::optional<double> gpu_memory_utilization;
  std::optional<int> max_num_seqs;
  std::optional<int> max_num_active_seqs;  // v0.31: running-request cap; startup accounting unchanged (unverified)
  std::optional<int> max_num_batched_tokens;
  std::optional<std::string> kv_cache_dtype;  // auto, fp8, fp8_e4m3, fp8_e5m2, bfloat16, ...
  std::optional<std::string> dtype;           // auto, half, float16, bfloat16, float, float32
  std::optional<std::string> quantization;
  bool enforce_eager = false;
  std::optional<int> block_size;
  std::optional<bool> enable_prefix_caching;
  std::optional<bool> enable_chunked_prefill;
  std::optional<Bytes> kv_cache_memory_bytes;
  std::optional<int> num_gpu_blocks_override;
  std::optional<double> cpu_offload_gb;  // GiB of weights per GPU kept in host memory (models/utils.py maybe_offload_to_cpu)
  // --attention-config use_fp4_indexer_cache (config/attention.py): DeepSeek-V4's indexer keys in
  // MXFP4 rows (head_dim / 2 + head_dim / 32 bytes) instead of fp8 (head_dim + 4 per 128).
  std::optional<bool> use_fp4_indexer_cache;
  // --performance-mode (v0.17, #34936): "balanced" (vLLM's default), "interactivity" (CUDA graphs
  // at every batch size from 1 to 32) or "throughput" (the default batch limits doubled).
  std::optional<std::string> performance_mode;
  // --compilation-config's CUDA graph keys (config/compilation.py CompilationConfig): the capture
  // sizes as given, the largest size of the default list, and the mode (NONE, PIECEWISE, FULL,
  // FULL_DECODE_ONLY, FULL_AND_PIECEWISE).
  std::string compilation_config;  // the JSON object as given ("" when none)
  std::optional<std::vector<int>> cudagraph_capture_sizes;
  std::optional<int> max_cudagraph_capture_size;
  std::optional<std::string> cudagraph_mode;
  // Environment variables that change memory or the startup checks (from `VAR=value vllm serve`,
  // --env, or a config file's command): envs.py of the version.
  std::optional<bool> estimate_cuda_graphs;        // VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
  std::optional<std::string> attention_backend;    // VLLM_ATTENTION_BACKEND (FLASH_ATTN, FLASHINFER, TRITON_ATTN, ...)
  std::optional<bool> use_v1_engine;               // VLLM_USE_V1 (v0.8-v0.10: 0 selects the V0 engine)
  std::optional<bool> use_flashinfer_sampler;      // VLLM_USE_FLASHINFER_SAMPLER (top-k/top-p kernels or the sort path)
  std::optional<bool> use_v2_model_runner;         // VLLM_USE_V2_MODEL_RUNNER (model runner v2 or the V1 runner)
  std::optional<bool> rocm_moe_padding;            // VLLM_ROCM_MOE_PADDING (ROCm: pad the unquantized MoE rows)
  std::optional<bool> rocm_use_aiter;              // VLLM_ROCM_USE_AITER (ROCm: AITER's kernels, its MoE shuffle)
  std::optional<std::string> pp_layer_partition;   // VLLM_PP_LAYER_PARTITION ("20,20,21,19": layers per pipeline stage)
  bool allow_long_max_model_len = false;           // VLLM_ALLOW_LONG_MAX_MODEL_LEN=1
  UsageContext usage_context = UsageContext::api_server;
  // Multimodal inputs (config/multimodal.py MultiModalConfig): --limit-mm-per-prompt's count per
  // modality ("image", "video", "audio"; {"image": 0, "video": 0} is vLLM's text-only mode),
  // --language-model-only (every modality at 0), --skip-mm-profiling, --mm-encoder-tp-mode
  // ("weights" or "data") and --mm-processor-kwargs as JSON text.
  std::map<std::string, int> limit_mm_per_prompt;
  // From v0.11 a modality of --limit-mm-per-prompt may also size the dummy input vLLM profiles
  // with ('{"image": {"count": 1, "width": 1024, "height": 1024}}'); 0 where not given.
  struct MmDummySize {
    int width = 0;
    int height = 0;
    int num_frames = 0;
  };
  std::map<std::string, MmDummySize> mm_dummy_sizes;
  bool language_model_only = false;
  bool skip_mm_profiling = false;
  // --runner pooling, --convert embed / classify / reward, or --task embed / embedding / classify /
  // score / reward: a generative class served as a pooling model (model_executor/models/adapters.py).
  bool pooling_runner = false;
  bool disable_chunked_mm_input = false;  // --disable-chunked-mm-input: one multimodal item per batch, never split
  std::optional<std::string> mm_encoder_tp_mode;
  std::string mm_processor_kwargs;
  // --hf-overrides (a JSON object merged into the model's config.json), with the older
  // --rope-scaling and --rope-theta written into it as their keys; "" when none was given.
  std::string hf_overrides;
  // Mistyped flags, in the order given; the startup checks turn them into vLLM's argparse error
  // (engine/vllm_cli_flags.h), or a warning for a version older than the flag list.
  std::vector<UnrecognizedFlag> unrecognized_flags;
};

// A parsed vLLM command line.
struct VllmCommand {
  std::string model;
  std::string revision;  // --revision (branch, tag or commit sha of a Hub model); "" when not given
  VllmFlags flags;
  std::vector<std::string> warnings;  // flags headroom does not model (they are ignored)
};

// Parses vLLM arguments: either flags alone (`--max-model-len 8192 -tp 2`), a model followed by
// flags, or a full command (`vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server
// --model MODEL ...`). Supports `--flag=value`. Unknown flags become warnings; malformed values
// are errors naming the flag ("--max-model-len: expected an integer, got 'abc'").
Result<VllmCommand> parse_vllm_command(const std::vector<std::string>& args);

// Parses a pasted Python call `LLM(model=..., gpu_memory_utilization=0.85, ...)` (entrypoints/llm.py):
// keyword arguments in EngineArgs' names, the model as `model=` or the first positional string;
// True/False, numbers and strings; None means the default. The result has usage context llm_class
// (the offline batch defaults). Errors say what was expected and at which character.
Result<VllmCommand> parse_llm_call(std::string_view text);

// The flags a `vllm serve --config FILE.yaml` file contributes (utils/argparse_utils.py
// _load_config_file): `--key=value` per top-level key, booleans as `--key=true|false`, lists and
// mappings as JSON text. `origin` names the file in errors (origin:line:col). parse_vllm_command
// reads `--config FILE` itself and puts these before the command line's flags.
Result<std::vector<std::string>> config_file_args(std::string_view yaml_text, const std::string& origin);

// Applies a memory-relevant VLLM_* environment variable (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS,
// VLLM_ATTENTION_BACKEND, VLLM_USE_V1, VLLM_USE_V2_MODEL_RUNNER, VLLM_ROCM_MOE_PADDING,
// VLLM_ROCM_USE_AITER, VLLM_ALLOW_LONG_MAX_MODEL_LEN). Returns false for a variable
// that does not change the prediction; errors for a malformed value.
Result<bool> apply_vllm_env(VllmFlags& flags, const std::string& name, const std::string& value);

// Whether `mode` is one of --performance-mode's choices (balanced, interactivity, throughput).
bool is_performance_mode(std::string_view mode);

// --limit-mm-per-prompt's value for the flags' limits, as vLLM takes it back: a count per modality,
// or from v0.11 {"count", "width", "height", "num_frames"} where a dummy size is given; "{}" for none.
std::string limit_mm_per_prompt_json(const VllmFlags& flags);

// Parses vLLM's human-readable byte sizes (--kv-cache-memory-bytes): "8G" = 8·1024³, "8g" = 8·10⁹.
Result<Bytes> parse_human_bytes(const std::string& text);

// Checks ranges: utilization in (0, 1], positive lengths and sizes. Errors name the flag.
Result<void> validate_flags(const VllmFlags& flags);

}  // namespace headroom
