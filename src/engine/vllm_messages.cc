#include "engine/vllm_messages.h"

#include "util/strings.h"

namespace headroom::engine {

namespace {

// Versions at which message wording changed (merge dates from the memory model, mapped to the
// first release that contains them).
const VllmVersion k_device_in_e1{0, 13};        // #30868, 2025-12-17
const VllmVersion k_docs_url{0, 13};            // #28051, 2025-12-10
const VllmVersion k_format_gib{0, 14};          // #29493, 2026-01-07
const VllmVersion k_cpu_parenthetical{0, 21};   // #42479, 2026-05-15
const std::string k_docs = " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.";

std::string gib2(Bytes b) { return util::fixed(to_gib(b), 2); }

// Python's repr of a short float such as a utilization (0.9, 0.95, 0.875).
std::string py_float(double x) {
  std::string s = util::fixed(x, 6);
  while (s.size() > 3 && s.back() == '0') s.pop_back();
  return s;
}

}  // namespace

std::string format_gib(Bytes bytes) { return util::py_round2(to_gib(bytes)); }

std::string startup_free_memory_message(const VllmVersion& v, Bytes free, Bytes total, double util, Bytes requested) {
  std::string device = v >= k_device_in_e1 ? "cuda:0 " : "";
  return "Free memory on device " + device + "(" + format_gib(free) + "/" + format_gib(total) +
         " GiB) on startup is less than desired GPU memory utilization (" + py_float(util) +
         ", " + format_gib(requested) +
         " GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.";
}

std::string no_kv_cache_memory_message(const VllmVersion& v) {
  std::string m = "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine";
  if (v >= k_cpu_parenthetical) m += " (this flag also controls CPU memory reservation on the CPU backend, despite its name)";
  m += ".";
  if (v >= k_docs_url) m += k_docs;
  return m;
}

std::string kv_cache_insufficient_message(const VllmVersion& v, std::int64_t len, Bytes need, Bytes available,
                                          std::int64_t estimated) {
  if (v < VllmVersion{0, 9}) {
    return "To serve at least one request with the models's max seq len (" + std::to_string(len) + "), (" + gib2(need) +
           " GB KV cache is needed, which is larger than the available KV cache memory (" + gib2(available) +
           " GB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
  }
  const bool new_wording = v >= k_cpu_parenthetical;
  auto num = [&](Bytes b) { return v >= k_format_gib ? format_gib(b) : gib2(b); };
  std::string m = std::string("To serve at least one request with the ") + (new_wording ? "model's" : "models's") +
                  " max seq len (" + std::to_string(len) + "), (" + num(need) +
                  " GiB KV cache is needed, which is larger than the available KV cache memory (" + num(available) +
                  " GiB). ";
  if (estimated > 0)
    m += "Based on the available memory, the estimated maximum model length is " + std::to_string(estimated) + ". ";
  m += "Try increasing `gpu_memory_utilization`";
  if (new_wording) m += " (which also controls CPU memory on the CPU backend)";
  m += " or decreasing `max_model_len` when initializing the engine.";
  if (v >= k_docs_url) m += k_docs;
  return m;
}

std::string v0_max_len_message(std::int64_t len, std::int64_t kv_tokens) {
  return "The model's max seq len (" + std::to_string(len) +
         ") is larger than the maximum number of tokens that can be stored in KV cache (" + std::to_string(kv_tokens) +
         "). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
}

std::string auto_fit_impossible_message() {
  return "Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single token. Try increasing "
         "`gpu_memory_utilization`.";
}

std::string max_model_len_exceeds_message(std::int64_t requested, const std::string& key, std::int64_t derived) {
  return "User-specified max_model_len (" + std::to_string(requested) + ") is greater than the derived max_model_len (" +
         (key.empty() ? std::string("max_position_embeddings") : key) + "=" + std::to_string(derived) +
         " or model_max_length=None in model's config.json). To allow overriding this maximum, set the env var "
         "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the "
         "model uses relative position encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the "
         "model uses absolute position encoding, positions exceeding derived_max_model_len will cause a CUDA array "
         "out-of-bounds error.";
}

std::string tp_not_divisible_message(int heads, int tp) {
  return "Total number of attention heads (" + std::to_string(heads) +
         ") must be divisible by tensor parallel size (" + std::to_string(tp) + ").";
}

// engine/arg_utils.py _raise_or_fallback (v0.8-v0.10): the V1 oracle's refusal with VLLM_USE_V1=1,
// and its warning otherwise.
std::string v1_unsupported_message(const std::string& feature) { return "VLLM_USE_V1=1 is not supported with " + feature + "."; }

std::string v1_fallback_message(const std::string& feature) {
  return feature + " is not supported by the V1 Engine. Falling back to V0.";
}

std::string bf16_unsupported_message(const std::string& gpu_name, const std::string& cc) {
  return "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your " + gpu_name +
         " GPU has compute capability " + cc +
         ". You can use float16 instead by explicitly setting the `dtype` flag in CLI, for example: --dtype=half.";
}

std::string weights_oom_message(const VllmVersion& v, Bytes tried, Bytes total, Bytes free) {
  std::string torch = "CUDA out of memory. Tried to allocate " + util::fixed(to_mib(tried), 2) + " MiB. GPU 0 has a total capacity of " +
                      util::fixed(to_gib(total), 2) + " GiB of which " + util::fixed(to_gib(free), 2) + " GiB is free.";
  if (v >= VllmVersion{0, 14})
    return "Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory for "
           "weights, increasing --tensor-parallel-size, or using --quantization. See "
           "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more tips. (original error: " +
           torch + ")";
  return "torch.OutOfMemoryError: " + torch;
}

std::string sampler_warmup_oom_message(int requests) {
  return "CUDA out of memory occurred when warming up sampler with " + std::to_string(requests) +
         " dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.";
}

}  // namespace headroom::engine
