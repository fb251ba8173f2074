#include "engine/vllm_defaults.h"

#include <algorithm>
#include <set>

#include "util/strings.h"

namespace headroom::engine {

double default_gpu_memory_utilization(const VllmVersion& version) {
  return version >= VllmVersion{0, 21} ? 0.92 : 0.90;
}

double vllm_device_memory_gib(const GpuSpec& gpu) {
  return gpu.nvml_memory_unsupported ? 0.0 : gpu.total_gib();
}

bool is_big_gpu(const VllmVersion& version, const GpuSpec& gpu) {
  std::string name = util::to_lower(gpu.name + " " + gpu.key);
  if (version >= VllmVersion{0, 9}) return vllm_device_memory_gib(gpu) >= 70.0 && name.find("a100") == std::string::npos;
  return name.find("h100") != std::string::npos || name.find("h200") != std::string::npos;
}

BatchLimits resolve_batch_limits(const VllmVersion& version, const GpuSpec& gpu, const VllmFlags& flags,
                                 std::int64_t max_model_len, bool chunked_prefill) {
  BatchLimits out;
  int default_seqs = 0, default_tokens = 0;
  if (!version.is_v1_engine()) {
    // V0 (config.py SchedulerConfig): 256 sequences; batched tokens max(max_model_len, 2048)
    // without chunked prefill, 512 (v0.5-v0.6) or 2048 (v0.7) with it.
    default_seqs = 256;
    if (chunked_prefill) default_tokens = version >= VllmVersion{0, 7} ? 2048 : 512;
    else default_tokens = static_cast<int>(std::max<std::int64_t>(max_model_len, 2048));
  } else {
    const bool big = is_big_gpu(version, gpu);
    const bool server = flags.usage_context == UsageContext::api_server;
    if (flags.usage_context == UsageContext::engine) {
      default_seqs = 128;
      default_tokens = 2048;
    } else if (version < VllmVersion{0, 8, 3}) {
      // v0.8.0-v0.8.2: 1024 sequences everywhere; tokens by name (H100/H200) and context.
      default_seqs = 1024;
      default_tokens = big ? (server ? 8192 : 16384) : (server ? 2048 : 8192);
    } else if (version >= VllmVersion{0, 28} && vllm_device_memory_gib(gpu) >= 160.0) {
      // ≥ 160 GiB devices (B200/B300/GB200/GB300, MI300X...): 16384 tokens for the API server too,
      // with no A100 exclusion (arg_utils.py get_batch_defaults, #51726, v0.28.0).
      default_seqs = 1024;
      default_tokens = 16384;
    } else {
      default_seqs = big ? 1024 : 256;
      default_tokens = big ? (server ? 8192 : 16384) : (server ? 2048 : 8192);
    }
    // --performance-mode throughput doubles whichever of the two the user left to the default,
    // before the adjustments to max_model_len below (arg_utils.py, #34936).
    if (performance_mode(version, flags) == "throughput") {
      default_seqs *= 2;
      default_tokens *= 2;
    }
    if (!chunked_prefill) default_tokens = static_cast<int>(std::max<std::int64_t>(max_model_len, default_tokens));
  }
  out.max_num_seqs = flags.max_num_seqs.value_or(default_seqs);
  if (flags.max_num_batched_tokens) {
    out.max_num_batched_tokens = *flags.max_num_batched_tokens;
  } else {
    std::int64_t t = default_tokens;
    if (version.is_v1_engine()) t = std::min<std::int64_t>(t, static_cast<std::int64_t>(out.max_num_seqs) * max_model_len);
    out.max_num_batched_tokens = static_cast<int>(t);
  }
  if (!flags.max_num_seqs && version.is_v1_engine())
    out.max_num_seqs = std::min(out.max_num_seqs, out.max_num_batched_tokens);
  return out;
}

std::int64_t derived_max_model_len(const ModelSpec& model) {
  std::int64_t derived = model.max_position_embeddings > 0 ? model.max_position_embeddings : 2048;
  if (model.rope_scaling && model.model_type.rfind("gemma3", 0) != 0) {
    const auto& rs = *model.rope_scaling;
    // RoPE types that already describe the full length are not multiplied (config/model.py).
    if (rs.type != "su" && rs.type != "longrope" && rs.type != "llama3" && rs.type != "default" && rs.type != "mrope" &&
        rs.factor > 1.0) {
      std::int64_t base = derived;
      if (rs.type == "yarn" && rs.original_max_position_embeddings) base = *rs.original_max_position_embeddings;
      derived = static_cast<std::int64_t>(static_cast<double>(base) * rs.factor);
    }
  }
  if (model.tokenizer_model_max_length && *model.tokenizer_model_max_length > 0)
    derived = std::min(derived, *model.tokenizer_model_max_length);
  return derived;
}

std::string performance_mode(const VllmVersion& version, const VllmFlags& flags) {
  if (!version.is_v1_engine() || version < VllmVersion{0, 17}) return "";
  return flags.performance_mode.value_or("balanced");
}

std::vector<int> cudagraph_capture_sizes(const VllmVersion& version, int max_num_seqs, int max_num_batched_tokens,
                                         const CaptureOptions& options) {
  std::set<int> sizes;
  if (!version.is_v1_engine()) {
    // V0 <= v0.7: [1, 2, 4] + multiples of 8 up to the first value >= max_num_seqs.
    for (int s : {1, 2, 4}) sizes.insert(s);
    for (int s = 8;; s += 8) {
      sizes.insert(s);
      if (s >= max_num_seqs || s >= 256) break;
    }
    return {sizes.begin(), sizes.end()};
  }
  if (options.given_sizes && !options.given_sizes->empty()) {
    // The user's list, as given (deduplicated, sorted); sizes above the batch limit cannot run.
    for (int s : *options.given_sizes)
      if (s > 0 && s <= max_num_batched_tokens) sizes.insert(s);
    return {sizes.begin(), sizes.end()};
  }
  int max_capture;
  if (options.max_capture_size && *options.max_capture_size > 0) {
    max_capture = *options.max_capture_size;  // the default list's step pattern up to the given largest size
  } else if (version < VllmVersion{0, 10}) {
    max_capture = 512;  // v0.8-v0.9: [1, 2, 4] + 8..512 step 8, filtered by mnbt
  } else {
    // Data-center Blackwell (SM100 family) captures up to 1024 from v0.28 (#49390).
    const int ceiling = options.sm100_family && version >= VllmVersion{0, 28} ? 1024 : 512;
    max_capture = std::min(max_num_seqs * 2, ceiling);
  }
  max_capture = std::min(max_capture, max_num_batched_tokens);
  if (options.interactivity && version >= VllmVersion{0, 17}) {
    for (int s = 1; s <= std::min(max_capture, 32); ++s) sizes.insert(s);
  } else {
    for (int s : {1, 2, 4})
      if (s <= max_capture) sizes.insert(s);
  }
  const bool step16_above_256 = version >= VllmVersion{0, 12};
  for (int s = 8; s <= max_capture; s += (step16_above_256 && s >= 256) ? 16 : 8) sizes.insert(s);
  if (version >= VllmVersion{0, 12} && max_num_batched_tokens <= max_capture) sizes.insert(max_num_batched_tokens);
  return {sizes.begin(), sizes.end()};
}

}  // namespace headroom::engine
