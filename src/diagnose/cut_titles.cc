// The titles are quoted from the messages' sources: torch's CUDACachingAllocator.cpp (OutOfMemoryError,
// printed as torch.OutOfMemoryError from torch 2.5, torch.cuda.OutOfMemoryError before, RuntimeError
// up to 1.13), vLLM's v1/worker/gpu_model_runner.py _dummy_sampler_run, v1/core/kv_cache_utils.py
// _check_enough_kv_cache_memory, worker/worker.py raise_if_cache_size_invalid, v1/worker/utils.py
// request_memory, v1/worker/gpu_worker.py (the profiling assert), config/model.py
// (_get_and_verify_max_len, verify_with_parallel_config), worker/worker.py
// _check_if_gpu_supports_dtype; the wordings by version are in error-taxonomy.md §1-§5.
#include "diagnose/cut_titles.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace headroom {

namespace {

constexpr std::size_t k_min_title_chars = 20;
constexpr std::size_t k_min_message_chars = 8;  // past "Exception: "

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::string_view(".^$|()[]{}*+?\\").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

std::size_t common_prefix(std::string_view a, std::string_view b) {
  std::size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

}  // namespace

const std::vector<CutTitle>& cut_titles() {
  static const std::vector<CutTitle> titles = {
      {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ", "oom_phase_unknown", 0},
      {"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate ", "oom_phase_unknown", 0},
      {"torch.OutOfMemoryError: HIP out of memory. Tried to allocate ", "oom_phase_unknown", 0},
      {"RuntimeError: CUDA out of memory. Tried to allocate ", "oom_phase_unknown", 0},
      {"RuntimeError: CUDA out of memory occurred when warming up sampler with ", "sampler_warmup_oom", 1},
      {"RuntimeError: CUDA error: out of memory", "oom_phase_unknown", 1},
      {"torch.AcceleratorError: CUDA error: out of memory", "oom_phase_unknown", 1},
      {"RuntimeError: CUDA error: an illegal memory access was encountered", "illegal_memory_access", 0},
      {"torch.AcceleratorError: CUDA error: an illegal memory access was encountered", "illegal_memory_access", 0},
      {"ValueError: No available memory for the cache blocks", "no_kv_cache_memory", 0},
      {"ValueError: To serve at least one request with the model's max seq len (", "kv_cache_insufficient", 1},
      {"ValueError: To serve at least one request with the models's max seq len (", "kv_cache_insufficient", 1},
      {"ValueError: The model's max seq len (", "kv_cache_insufficient", 0},
      {"ValueError: Free memory on device ", "startup_free_memory_insufficient", 0},
      {"AssertionError: Error in memory profiling", "memory_profiling_error", 0},
      {"ValueError: User-specified max_model_len (", "max_model_len_exceeds_model_limit", 0},
      {"ValueError: Total number of attention heads (", "tp_size_not_divisible", 0},
      {"ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0", "unsupported_dtype_on_gpu", 0},
  };
  return titles;
}

std::size_t unambiguous_length(const std::vector<CutTitle>& titles, std::size_t i) {
  std::string_view t = titles[i].title;
  std::size_t shared = 0;
  for (std::size_t j = 0; j < titles.size(); ++j) {
    bool same_target = std::strcmp(titles[j].record, titles[i].record) == 0 && titles[j].pattern == titles[i].pattern;
    if (!same_target) shared = std::max(shared, common_prefix(t, titles[j].title));
  }
  std::size_t message = t.find(": ");
  std::size_t least = std::max(k_min_title_chars, message == std::string_view::npos ? 0 : message + 2 + k_min_message_chars);
  return std::min(t.size(), std::max(shared + 1, least));
}

std::string cut_title_regex(const std::vector<CutTitle>& titles, std::size_t i) {
  std::string_view t = titles[i].title;
  std::size_t keep = unambiguous_length(titles, i);
  // prefix (c1 (c2 ( ... (cn [^\n]{0,24})? ...)?)?)? then the end of the line.
  std::string re = escape(t.substr(0, keep));
  std::string tail = "[^\\n]{0,24}";
  for (std::size_t k = t.size(); k > keep; --k) tail = escape(t.substr(k - 1, 1)) + "(?:" + tail + ")?";
  if (keep < t.size()) re += "(?:" + tail + ")?";
  else re += "(?:" + tail + ")";
  return re + "[. ]*$";
}

}  // namespace headroom
