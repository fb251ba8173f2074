#include "history/history_settings.h"

#include <cmath>

#include "util/strings.h"

namespace headroom::history_detail {

using nlohmann::json;

namespace {

template <class T>
std::optional<T> get(const json& s, const char* key) {
  if (!s.contains(key) || s[key].is_null()) return std::nullopt;
  try {
    return s[key].get<T>();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string dtype_name(std::string d) {
  d = util::to_lower(d);
  if (d == "half" || d == "fp16") return "float16";
  if (d == "bf16") return "bfloat16";
  if (d == "float" || d == "fp32") return "float32";
  return d;
}

}  // namespace

VllmFlags flags_from_settings(const json& s, int tp, int pp, const ModelSpec& model) {
  VllmFlags f;
  f.tensor_parallel_size = tp;
  f.pipeline_parallel_size = pp;
  f.max_model_len = get<std::int64_t>(s, "max_model_len");
  f.gpu_memory_utilization = get<double>(s, "gpu_memory_utilization");
  f.max_num_seqs = get<int>(s, "max_num_seqs");
  f.max_num_batched_tokens = get<int>(s, "max_num_batched_tokens");
  f.block_size = get<int>(s, "block_size");
  if (auto d = get<std::string>(s, "dtype"); d && *d != "auto") f.dtype = *d;
  if (auto d = get<std::string>(s, "kv_cache_dtype"); d && *d != "auto") f.kv_cache_dtype = *d;
  if (auto q = get<std::string>(s, "quantization"); q && util::to_lower(*q) == "fp8" && !model.quantization) f.quantization = "fp8";
  f.enforce_eager = get<bool>(s, "enforce_eager").value_or(false);
  f.enable_prefix_caching = get<bool>(s, "enable_prefix_caching");
  f.use_flashinfer_sampler = get<bool>(s, "flashinfer_sampler");
  if (auto m = get<std::string>(s, "performance_mode"); m && is_performance_mode(*m)) f.performance_mode = *m;
  if (get<std::string>(s, "usage_context").value_or("") == "llm") f.usage_context = UsageContext::llm_class;
  return f;
}

json settings_json(const ResolvedSettings& r) {
  json s;
  s["max_model_len"] = r.max_model_len;
  s["gpu_memory_utilization"] = r.gpu_memory_utilization;
  s["max_num_seqs"] = r.max_num_seqs;
  s["max_num_batched_tokens"] = r.max_num_batched_tokens;
  s["dtype"] = r.dtype;
  s["kv_cache_dtype"] = r.kv_cache_dtype;
  s["quantization"] = r.quantization;
  s["enforce_eager"] = r.enforce_eager;
  s["block_size"] = r.block_size;
  s["enable_prefix_caching"] = r.enable_prefix_caching;
  return s;
}

void add_resolved_settings(json& settings, const ResolvedSettings& resolved) {
  json r = settings_json(resolved);
  for (const char* key : {"max_model_len", "gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens", "dtype",
                          "kv_cache_dtype", "enforce_eager"}) {
    bool unknown = !settings.contains(key) || settings[key].is_null() ||
                   (settings[key].is_string() && settings[key].get<std::string>() == "auto" && std::string(key) == "dtype");
    if (unknown) settings[key] = r[key];
  }
  // Quantization: what the engine resolved (the checkpoint's method, or online fp8) replaces what a
  // source wrote ("fp8" for a compressed-tensors checkpoint), so records compare with predictions.
  settings["quantization"] = resolved.quantization;
}

bool same_setting(const json& recorded, const json& candidate, const std::string& key) {
  if (!recorded.contains(key) || recorded[key].is_null()) return true;
  if (!candidate.contains(key) || candidate[key].is_null()) return true;
  const json& a = recorded[key];
  const json& b = candidate[key];
  if (a.is_number() && b.is_number()) return std::abs(a.get<double>() - b.get<double>()) < 1e-6;
  if (a.is_string() && b.is_string()) {
    std::string x = a.get<std::string>(), y = b.get<std::string>();
    if (key == "dtype" || key == "kv_cache_dtype") {
      if (x == "auto" || y == "auto") return true;
      return dtype_name(x) == dtype_name(y);
    }
    return util::iequals(x, y);
  }
  if (a.is_boolean() && b.is_boolean()) return a == b;
  return a == b;
}

int compare_setting(const json& recorded, const json& candidate, const std::string& key) {
  if (!recorded.contains(key) || !recorded[key].is_number()) return 0;
  if (!candidate.contains(key) || !candidate[key].is_number()) return 0;
  double a = recorded[key].get<double>(), b = candidate[key].get<double>();
  if (std::abs(a - b) < 1e-6) return 0;
  return a < b ? -1 : 1;
}

}  // namespace headroom::history_detail
