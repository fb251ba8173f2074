// VllmFlags: the vLLM engine arguments headroom models, as a user gives them (unset = vLLM's
// default for the version), and the parser for pasted `vllm serve` / api_server command lines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

// Where vLLM was started from: it changes the default batch sizes (arg_utils.py get_batch_defaults).
enum class UsageContext { api_server, llm_class, engine };

struct VllmFlags {
  std::optional<int> tensor_parallel_size;
  std::optional<int> pipeline_parallel_size;
  std::optional<int> data_parallel_size;
  bool enable_expert_parallel = false;
  std::optional<std::int64_t> max_model_len;  // -1 means "auto"
  bool max_model_len_auto = false;
  std::optional<double> gpu_memory_utilization;
  std::optional<int> max_num_seqs;
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
  std::optional<bool> estimate_cuda_graphs;  // VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
  UsageContext usage_context = UsageContext::api_server;
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

// Parses vLLM's human-readable byte sizes (--kv-cache-memory-bytes): "8G" = 8·1024³, "8g" = 8·10⁹.
Result<Bytes> parse_human_bytes(const std::string& text);

// Checks ranges: utilization in (0, 1], positive lengths and sizes. Errors name the flag.
Result<void> validate_flags(const VllmFlags& flags);

}  // namespace headroom
