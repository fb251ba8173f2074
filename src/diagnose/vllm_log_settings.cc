// Settings lines of a vLLM log: the engine config line (engine/arg_utils.py, v1/engine/core.py),
// `non-default args` (entrypoints/utils.py log_non_default_args) and argparse's Namespace.
#include "diagnose/vllm_log_settings.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "util/strings.h"

namespace headroom {

namespace {

std::optional<double> to_double(std::string_view s) { return util::parse_log_number(s, false); }

std::optional<std::int64_t> to_int(std::string_view s) {
  auto d = to_double(s);
  if (!d || std::fabs(*d) >= 9.2e18) return std::nullopt;  // past int64's range
  return static_cast<std::int64_t>(*d);
}

// Splits "a=1, b=[x, y], c='p, q'" (or a Python dict body) at the commas of depth 0.
std::vector<std::string_view> split_top_level(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  char quote = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    else if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') --depth;
    else if (c == ',' && depth == 0) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  if (start < s.size()) parts.push_back(s.substr(start));
  return parts;
}

std::string unquote(std::string_view v) {
  std::string t = util::trim(v);
  if (t.size() >= 2 && (t.front() == '\'' || t.front() == '"') && t.back() == t.front()) return t.substr(1, t.size() - 2);
  return t;
}

std::optional<bool> to_bool(std::string_view v) {
  std::string t = unquote(v);
  if (t == "True" || t == "true") return true;
  if (t == "False" || t == "false") return false;
  return std::nullopt;
}

// Applies one key/value of the engine config line, the non-default args or an argparse Namespace.
void apply_setting(LoggedRun& run, std::string_view key_view, std::string_view raw) {
  std::string key = unquote(key_view);
  std::string value = unquote(raw);
  if (value == "None" || value.empty()) return;
  VllmFlags& f = run.flags;
  auto set_int = [&](std::optional<int>& out) {
    if (auto v = to_int(value)) out = static_cast<int>(*v);
  };
  if (key == "model") run.model = value;
  else if (key == "model_tag") { if (run.model.empty()) run.model = value; }
  else if (key == "max_model_len" || key == "max_seq_len") {
    if (auto v = to_int(value)) {
      if (*v == -1) f.max_model_len_auto = true;
      else f.max_model_len = *v;
    }
  } else if (key == "gpu_memory_utilization" || key == "device_memory_utilization") {
    // v0.31 accepts --device-memory-utilization as an alias (#56547).
    f.gpu_memory_utilization = to_double(value);
  } else if (key == "cpu_offload_gb") {
    f.cpu_offload_gb = to_double(value);
  } else if (key == "max_num_active_seqs") set_int(f.max_num_active_seqs);
  else if (key == "tensor_parallel_size") set_int(f.tensor_parallel_size);
  else if (key == "pipeline_parallel_size") set_int(f.pipeline_parallel_size);
  else if (key == "data_parallel_size") set_int(f.data_parallel_size);
  else if (key == "max_num_seqs") set_int(f.max_num_seqs);
  else if (key == "max_num_batched_tokens") set_int(f.max_num_batched_tokens);
  else if (key == "block_size") set_int(f.block_size);
  else if (key == "num_gpu_blocks_override") set_int(f.num_gpu_blocks_override);
  else if (key == "kv_cache_dtype" || key == "cache_dtype") f.kv_cache_dtype = value;
  else if (key == "dtype") f.dtype = value.rfind("torch.", 0) == 0 ? value.substr(6) : value;
  else if (key == "quantization") f.quantization = value;
  else if (key == "enforce_eager") { if (auto b = to_bool(value)) f.enforce_eager = *b; }
  else if (key == "enable_expert_parallel") { if (auto b = to_bool(value)) f.enable_expert_parallel = *b; }
  else if (key == "enable_prefix_caching") f.enable_prefix_caching = to_bool(value);
  else if (key == "enable_chunked_prefill" || key == "chunked_prefill_enabled") f.enable_chunked_prefill = to_bool(value);
  else if (key == "kv_cache_memory_bytes" || key == "kv_cache_memory") { if (auto v = to_int(value)) f.kv_cache_memory_bytes = *v; }
  else if (key == "skip_mm_profiling") { if (auto b = to_bool(value)) f.skip_mm_profiling = *b; }
  else if (key == "performance_mode") { if (is_performance_mode(value)) f.performance_mode = value; }
}

// "key=value, key=value" (engine config line, Namespace) or "'key': value" (a dict).
}  // namespace

void apply_logged_settings(LoggedRun& run, std::string_view body, char separator) {
  for (auto part : split_top_level(body)) {
    auto pos = part.find(separator);
    if (pos == std::string_view::npos) continue;
    apply_setting(run, part.substr(0, pos), part.substr(pos + 1));
  }
}

}  // namespace headroom
