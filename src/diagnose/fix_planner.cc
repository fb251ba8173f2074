// Fix planning. Two steps, in this order:
//   1. the prediction engine (FixEngine), when the model and the GPU memory are known: it replays
//      vLLM's accounting with the measured terms of the log and searches the flags that start;
//   2. the log arithmetic of the taxonomy, which needs only the numbers in the log (vLLM's own
//      estimate of the maximum length, needed/available KV, free/total at startup, ...).
// The knowledge base's workarounds follow when neither step yields a number.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>

#include "diagnose/host_memory_fixes.h"
#include "headroom/diagnose.h"
#include "util/strings.h"

namespace headroom {

namespace {

using Changes = std::vector<std::pair<std::string, std::string>>;

// Numbers read from a log as whole numbers, clamped to the type's range (a log may say anything:
// "2.5e+67" or "nan" must not become undefined behaviour in a cast).
template <typename Int>
Int whole(double v) {
  if (std::isnan(v)) return 0;
  constexpr double lo = static_cast<double>(std::numeric_limits<Int>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<Int>::max());
  if (v <= lo) return std::numeric_limits<Int>::min();
  if (v >= hi) return std::numeric_limits<Int>::max();
  return static_cast<Int>(v);
}
std::int64_t i64(double v) { return whole<std::int64_t>(v); }
int i32(double v) { return whole<int>(v); }

double floor2(double x) { return std::floor(x * 100.0 + 1e-9) / 100.0; }
double ceil2(double x) { return std::ceil(x * 100.0 - 1e-9) / 100.0; }
std::string util_text(double u) { return util::fixed(u, 2); }
std::string gib(double g) { return util::fixed(g, 2) + " GiB"; }

std::optional<double> fact(const Finding& f, const std::string& name) {
  auto it = f.facts.find(name);
  if (it == f.facts.end()) return std::nullopt;
  return it->second;
}

// What the log tells about the engine generation: the config line, else the version.
bool is_v1(const LoggedRun& run) {
  if (run.v1_engine) return *run.v1_engine;
  if (run.version) return run.version->is_v1_engine();
  return true;
}

struct Planner {
  const Finding& f;
  const LoggedRun& run;
  const FixOptions& options;
  std::vector<FixSuggestion> fixes;
  std::vector<std::string> notes;

  double util() const {
    if (auto u = fact(f, "gpu_memory_utilization")) return *u;
    return run.flags.gpu_memory_utilization.value_or(0.9);
  }
  std::optional<double> total() const {
    if (auto t = fact(f, "total_gib")) return t;
    return run.total_gib;
  }
  std::int64_t max_model_len() const {
    if (auto l = fact(f, "max_model_len")) return i64(*l);
    return run.flags.max_model_len.value_or(0);
  }
  int block_size() const { return run.flags.block_size.value_or(16); }

  void add(Changes changes, std::string why, double confidence, std::string basis = "log arithmetic",
           std::string action = {}) {
    FixSuggestion s;
    s.action = std::move(action);
    s.command = changes.empty() ? "" : serve_command(run, changes);
    s.changes = std::move(changes);
    s.why = std::move(why);
    s.confidence = confidence;
    s.basis = std::move(basis);
    fixes.push_back(std::move(s));
  }

  // A raised utilization must stay below 0.95 and within the free memory at startup.
  std::optional<std::string> util_problem(double u) const {
    if (u > 0.95) return "it would need gpu_memory_utilization " + util_text(u) + ", above 0.95";
    if (run.free_at_start_gib && total() && u * *total() > *run.free_at_start_gib - 0.1)
      return "it would need " + gib(u * *total()) + " but only " + gib(*run.free_at_start_gib) + " was free at startup";
    return std::nullopt;
  }

  void other_processes() {
    double others = 0;
    for (std::size_t i = 0; i < f.processes.size(); ++i) others += f.processes[i].second;
    if (!f.processes.empty() && !fact(f, "this_process_gib")) {
      // Without "this process", the largest listed process is usually vLLM itself.
      double largest = 0;
      for (const auto& p : f.processes) largest = std::max(largest, p.second);
      others -= largest;
    }
    if (others > 0.05)
      notes.push_back("other processes hold " + gib(others) + " of this GPU (Process lines of the torch message)");
  }

  void kv_cache_insufficient() {
    std::int64_t len = max_model_len();
    auto capacity = fact(f, "kv_capacity_tokens");
    auto needed = fact(f, "needed_gib");
    auto available = fact(f, "available_gib");
    auto estimate = fact(f, "estimated_max_model_len");
    auto t = total();
    double u = util();
    // 1. max_model_len.
    if (capacity && *capacity > 0) {
      add({{"--max-model-len", std::to_string(i64(*capacity))}},
          "the KV cache holds " + util::with_commas(static_cast<long long>(*capacity)) +
              " tokens (GPU blocks x block size, exact in V0), less than max_model_len " + util::with_commas(len),
          0.9);
    } else if (estimate && *estimate > 0) {
      add({{"--max-model-len", std::to_string(i64(*estimate))}},
          "vLLM estimated the largest max_model_len that fits the available KV cache memory at " +
              util::with_commas(static_cast<long long>(*estimate)) + " tokens",
          0.9);
    } else if (needed && available && *needed > 0 && *available > 0 && len > 0) {
      auto n = i64(std::floor(static_cast<double>(len) * *available / *needed));
      n = n / block_size() * block_size();
      if (n > 0)
        add({{"--max-model-len", std::to_string(n)}},
            "one request of " + util::with_commas(len) + " tokens needs " + gib(*needed) + " of KV cache, " + gib(*available) +
                " is available: about " + util::with_commas(n) + " tokens fit (exact for full attention only)",
            0.7);
    }
    // 2. gpu_memory_utilization up.
    if (t && needed && available) {
      double nu = ceil2(u + (*needed - *available) / *t + 0.01);
      auto problem = util_problem(nu);
      if (!problem)
        add({{"--gpu-memory-utilization", util_text(nu)}},
            "the KV cache is short by " + gib(*needed - *available) + "; raising the budget from " + util_text(u) + " to " +
                util_text(nu) + " of " + gib(*t) + " covers it, with 0.01 to spare",
            0.7);
      else
        notes.push_back("raising gpu_memory_utilization is not enough: " + *problem);
    } else if (t && capacity && run.kv_cache_gib && run.kv_tokens && *run.kv_tokens > 0 && *capacity >= 0 && len > *capacity) {
      double per_token = *run.kv_cache_gib / static_cast<double>(*run.kv_tokens);
      double nu = ceil2(u + static_cast<double>(len - i64(*capacity)) * per_token / *t + 0.01);
      if (!util_problem(nu))
        add({{"--gpu-memory-utilization", util_text(nu)}},
            "the missing " + util::with_commas(len - i64(*capacity)) + " tokens take " +
                gib(static_cast<double>(len - i64(*capacity)) * per_token) + " of KV cache",
            0.6);
    }
    // 3. fp8 KV cache halves the bytes per token of a 16-bit cache.
    std::string kv_dtype = run.flags.kv_cache_dtype.value_or("auto");
    bool sixteen_bit = kv_dtype == "auto" || kv_dtype == "bfloat16" || kv_dtype == "float16" || kv_dtype == "half";
    if (sixteen_bit) {
      bool fits = (needed && available && *needed / 2 <= *available) || (capacity && len > 0 && 2 * *capacity >= len);
      if (fits)
        add({{"--kv-cache-dtype", "fp8"}},
            "an fp8 KV cache halves the bytes per token, and half of what one request needs fits the available memory "
            "(fp8_e4m3 needs Ada/Hopper or newer kernels; check accuracy)",
            0.6);
    }
    // 4. tensor parallelism.
    int tp = run.flags.tensor_parallel_size.value_or(1);
    if (!options.gpus || *options.gpus >= 2 * tp)
      add({{"--tensor-parallel-size", std::to_string(2 * tp)}},
          "with " + std::to_string(2 * tp) +
              " GPUs the weights and the KV cache per GPU halve (the size must divide the attention heads)",
          options.gpus ? 0.5 : 0.3);
    multimodal_pass();
  }

  // The log shows the encoder's profile pass on vLLM's largest dummy input ("Encoder cache will be
  // initialized ...", "Starting profile run for multi-modal models"): its peak is part of the
  // activation subtracted before the KV cache. --skip-mm-profiling (#22950, v0.10.2) gives it back.
  void multimodal_pass() {
    if (!run.multimodal_profile || run.flags.skip_mm_profiling || !run.version || *run.version < VllmVersion{0, 10, 2}) return;
    add({{"--skip-mm-profiling", ""}},
        "the encoder's profile pass on vLLM's largest dummy image or video is part of the activation peak taken before "
        "the KV cache; skipping it gives that memory to the KV cache, and a request with the largest inputs may then "
        "run out of memory (smaller images through --mm-processor-kwargs, or --limit-mm-per-prompt, keep the pass "
        "and shrink it)",
        0.4);
  }

  void no_kv_cache_memory() {
    auto t = total();
    double u = util();
    if (run.initial_memory_usage_gib && run.weights_gib && *run.initial_memory_usage_gib > *run.weights_gib + 1.0)
      notes.push_back("memory in use at profiling (" + gib(*run.initial_memory_usage_gib) + ") is well above the weights (" +
                      gib(*run.weights_gib) + "): another process is counted against the budget");
    if (t && run.weights_gib && run.activation_peak_gib) {
      double used = *run.weights_gib + *run.activation_peak_gib + run.non_torch_gib.value_or(0);
      double nu = ceil2(used / *t + 0.02);
      auto problem = util_problem(nu);
      if (!problem && nu > u)
        add({{"--gpu-memory-utilization", util_text(nu)}},
            "weights " + gib(*run.weights_gib) + " + activation peak " + gib(*run.activation_peak_gib) + " + non-torch " +
                gib(run.non_torch_gib.value_or(0)) + " = " + gib(used) + " already fill " + util_text(u) + " x " + gib(*t) +
                "; " + util_text(nu) + " leaves 2% for the KV cache (check that max_model_len fits)",
            0.6);
      else if (problem)
        notes.push_back("the budget cannot be raised enough: " + *problem + "; reduce the weights per GPU");
    }
    if (is_v1(run) && run.flags.max_num_seqs.value_or(1024) > 256)
      add({{"--max-num-seqs", "256"}},
          "a lower max_num_seqs shrinks the profiled activation peak (the V1 default was 1024 in 0.8.x)", 0.5);
    int tp = run.flags.tensor_parallel_size.value_or(1);
    if (!options.gpus || *options.gpus >= 2 * tp)
      add({{"--tensor-parallel-size", std::to_string(2 * tp)}}, "split the weights over more GPUs", options.gpus ? 0.5 : 0.3);
    multimodal_pass();
  }

  void startup_free_memory() {
    auto free = fact(f, "free_gib");
    auto t = fact(f, "total_gib");
    if (!free || !t || *t <= 0) return;
    notes.push_back("other processes hold " + gib(*t - *free) + " of this GPU (" + gib(*free) + " free of " + gib(*t) +
                    " at startup)");
    double nu = floor2((*free - 0.1) / *t);
    if (nu >= 0.05)
      add({{"--gpu-memory-utilization", util_text(nu)}},
          "the budget must fit in the " + gib(*free) + " that is free: floor((free - 0.1 GiB) / total, 2); check that " +
              gib(nu * *t) + " still holds the weights, activations and one max_model_len request",
          0.7);
    add({}, "the memory is held by another process; vLLM cannot use it until that process ends", 0.8, "knowledge base",
        "free the GPU: nvidia-smi --query-compute-apps=pid,used_memory --format=csv, then stop the stale process "
        "(an old EngineCore, another instance) or pick another CUDA_VISIBLE_DEVICES");
  }

  void weights_load() {
    other_processes();
    if (run.flags.dtype && (*run.flags.dtype == "float32" || *run.flags.dtype == "float"))
      add({{"--dtype", "bfloat16"}}, "fp32 weights take twice the memory of bf16", 0.8);
    int tp = run.flags.tensor_parallel_size.value_or(1);
    if (!options.gpus || *options.gpus >= 2 * tp)
      add({{"--tensor-parallel-size", std::to_string(2 * tp)}},
          "the weights do not fit one GPU at tensor-parallel size " + std::to_string(tp) +
              "; the size must divide the attention heads",
          options.gpus ? 0.6 : 0.4);
  }

  void profile_run() {
    bool v0 = !is_v1(run);
    if (v0 && !run.flags.enable_chunked_prefill.value_or(false))
      add({{"--enable-chunked-prefill", ""}, {"--max-num-batched-tokens", "8192"}},
          "without chunked prefill V0 profiles max(max_model_len, 2048) tokens at once", 0.7);
    if (run.multimodal_profile)
      add({{"--max-num-seqs", "16"}}, "the multimodal profile run builds dummy inputs in proportion to max_num_seqs", 0.6);
    if (!v0) {
      int batched = run.flags.max_num_batched_tokens.value_or(8192);
      int lower = std::max(1024, batched / 2);
      if (lower < batched)
        add({{"--max-num-batched-tokens", std::to_string(lower)}},
            "the profiled peak grows with the chunk size (max_num_batched_tokens " + std::to_string(batched) + ")", 0.5);
    }
  }

  void graph_capture() {
    add({{"--enforce-eager", ""}}, "without CUDA graphs there is no graph memory to capture (decode gets slower)", 0.9);
    double u = util();
    double graph = run.cuda_graph_estimated_gib.value_or(run.cuda_graph_gib.value_or(is_v1(run) ? 1.0 : 2.0));
    auto t = total();
    double delta = t ? std::max(0.01, (graph + 0.5) / *t) : 0.03;
    double nu = floor2(u - delta);
    if (nu > 0.05)
      add({{"--gpu-memory-utilization", util_text(nu)}},
          "graphs are allocated outside the budget; lowering it by (graph " + gib(graph) + " + 0.5 GiB)/total leaves room",
          0.6);
    if (run.flags.max_num_seqs && *run.flags.max_num_seqs > 128)
      add({{"--max-num-seqs", std::to_string(*run.flags.max_num_seqs / 2)}}, "fewer capture sizes", 0.4);
  }

  void sampler_warmup() {
    auto reqs = fact(f, "num_reqs");
    int seqs = reqs ? i32(*reqs) : run.flags.max_num_seqs.value_or(1024);
    int target = seqs > 256 ? 256 : std::max(1, seqs / 2);
    add({{"--max-num-seqs", std::to_string(target)}},
        "the sampler warm-up allocates logits for " + std::to_string(seqs) + " dummy requests x vocabulary; " +
            std::to_string(target) + " needs " + util::fixed(static_cast<double>(target) / seqs * 100, 0) + "% of that",
        0.8);
    auto t = total();
    auto tried = fact(f, "tried_gib");
    double delta = (t && tried) ? *tried / *t + 0.01 : 0.03;
    double nu = floor2(util() - delta);
    if (nu > 0.05)
      add({{"--gpu-memory-utilization", util_text(nu)}},
          tried ? "leave the failed " + gib(*tried) + " allocation outside the budget" : "leave more room outside the budget",
          0.6);
    if (run.kv_cache_memory_fit_bytes)
      add({{"--kv-cache-memory", std::to_string(*run.kv_cache_memory_fit_bytes)}},
          "the KV cache size vLLM computed to fit the requested memory", 0.7);
  }

  void runtime() {
    other_processes();
    double u = util();
    double nu = floor2(std::min(u, 0.95) - 0.05);
    if (nu > 0.05)
      add({{"--gpu-memory-utilization", util_text(nu)}},
          "more headroom outside the budget for prefill activations beyond the profiled peak (0.96 -> 0.9 and 1.0 -> 0.9 "
          "were confirmed)",
          0.7);
    int batched = run.flags.max_num_batched_tokens.value_or(0);
    if (batched > 2048)
      add({{"--max-num-batched-tokens", std::to_string(batched / 2)}}, "caps the tokens of one prefill step", 0.5);
    auto reserved = fact(f, "reserved_unallocated_gib");
    auto tried = fact(f, "tried_gib");
    if (reserved && tried && *reserved >= *tried)
      add({{"ENV", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"}},
          "PyTorch holds " + gib(*reserved) + " reserved but unallocated, more than the failed " + gib(*tried) +
              " allocation: fragmentation",
          0.5);
  }

  void graph_estimate() {
    auto estimate = fact(f, "cuda_graph_estimated_gib");
    add({{"ENV", "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0"}},
        "vLLM subtracted its CUDA-graph estimate" + (estimate ? " of " + gib(*estimate) : std::string()) +
            " from the KV budget; without the estimate the graphs are captured outside the budget, as before v0.21",
        0.8);
    double nu = floor2(util() - 0.02);
    if (nu > 0.05)
      add({{"--gpu-memory-utilization", util_text(nu)}},
          "a slightly lower budget leaves the graphs room outside it once the estimate is off, or shrinks what the "
          "estimate must cover",
          0.5);
    add({{"--enforce-eager", ""}}, "without CUDA graphs there is nothing to estimate (decode gets slower)", 0.6);
  }

  void unknown_oom() {
    other_processes();
    double u = util();
    if (u > 0.92) add({{"--gpu-memory-utilization", "0.90"}}, "util above 0.92 leaves little room outside the budget", 0.5);
    auto t = total();
    if (t && (std::abs(*t - 61.35) < 0.5 || std::abs(*t - 121.69) < 0.5 || std::abs(*t - 127.0) < 0.5))
      notes.push_back("a unified-memory GPU: the total includes the OS and page cache; lower util and max_model_len");
  }

  void plan() {
    const std::string& c = f.error_class;
    if (c == "kv_cache_insufficient") kv_cache_insufficient();
    else if (c == "no_kv_cache_memory") no_kv_cache_memory();
    else if (c == "startup_free_memory_insufficient") startup_free_memory();
    else if (c == "weights_load_oom") weights_load();
    else if (c == "profile_run_oom") profile_run();
    else if (c == "cuda_graph_capture_oom") graph_capture();
    else if (c == "sampler_warmup_oom") sampler_warmup();
    else if (c == "runtime_oom") runtime();
    else if (c == "oom_phase_unknown") unknown_oom();
    else if (c == "cuda_graph_estimate_no_kv_cache") graph_estimate();
    else if (reported_class(f) == "host_memory_exhausted") {
      for (auto& s : host_memory_fixes(f, run)) add(s.changes, s.why, s.confidence, s.basis, s.action);
    } else if (c == "kv_cache_exhausted_runtime") {
      if (f.message.find("swap space") != std::string::npos)
        add({{"--swap-space", "32"}}, "SWAP preemption filled the CPU swap space (32 GiB was confirmed)", 0.6);
      add({{"--kv-cache-dtype", "fp8"}}, "twice the tokens in the same KV cache", 0.5);
      int seqs = run.flags.max_num_seqs.value_or(256);
      add({{"--max-num-seqs", std::to_string(std::max(1, seqs / 2))}}, "fewer sequences compete for KV blocks", 0.5);
    } else if (c == "prompt_too_long") {
      auto prompt = fact(f, "prompt_tokens");
      auto requested = fact(f, "requested_tokens");
      auto limit = fact(f, "limit_tokens");
      double need = requested ? *requested : prompt.value_or(0);
      auto rounded = i64(std::ceil(need / 1024.0) * 1024);
      if (limit && prompt && run.flags.max_num_batched_tokens && *limit == *run.flags.max_num_batched_tokens)
        add({{"--max-num-batched-tokens", std::to_string(rounded)}},
            "the prompt limit is max_num_batched_tokens (" + std::to_string(i32(*limit)) + ")", 0.8);
      else if (need > 0)
        add({{"--max-model-len", std::to_string(rounded)}},
            "the request needs " + util::with_commas(static_cast<long long>(need)) +
                " tokens; only if the model's derived maximum and the KV cache allow it, else shorten the request",
            0.5);
    } else if (c == "max_model_len_exceeds_model_limit") {
      if (auto d = fact(f, "derived_max_model_len"))
        add({{"--max-model-len", std::to_string(i64(*d))}}, "the model's own limit", 0.9);
    } else if (c == "tp_size_not_divisible") {
      auto heads = fact(f, "num_attention_heads");
      auto tp = fact(f, "tensor_parallel_size");
      if (heads && tp && *heads >= 1 && *tp >= 1) {
        int h = i32(*heads);
        int best = 1;
        for (int d = 1; d <= std::min(i32(*tp), h); ++d)  // no size above the head count divides it
          if (h % d == 0) best = d;
        add({{"--tensor-parallel-size", std::to_string(best)}},
            std::to_string(best) + " is the largest size up to " + std::to_string(i32(*tp)) + " that divides " +
                std::to_string(h) + " attention heads (combine with --pipeline-parallel-size to use more GPUs)",
            0.8);
      }
    } else if (c == "unsupported_dtype_on_gpu") {
      if (f.message.find("Bfloat16") != std::string::npos)
        add({{"--dtype", "half"}}, "bfloat16 needs compute capability 8.0", 0.9);
    } else if (c == "max_num_batched_tokens_too_small") {
      if (auto l = fact(f, "max_model_len"))
        add({{"--max-num-batched-tokens", std::to_string(i64(*l))}}, "at least max_model_len", 0.8);
    } else if (c == "mm_item_exceeds_batched_tokens") {
      // compute_mm_encoder_budget's own remedy: one step must hold the largest item whole.
      if (auto item = fact(f, "max_tokens_per_mm_item"))
        add({{"--max-num-batched-tokens", std::to_string(i64(*item))}},
            "one step must hold the largest multimodal item (" + util::with_commas(i64(*item)) +
                " tokens) while chunked multimodal input is off",
            0.8);
    } else if (c == "mamba_cache_blocks_insufficient") {
      if (auto b = fact(f, "mamba_blocks"))
        add({{"--max-num-seqs", std::to_string(i64(*b))}}, "one Mamba block per decode sequence", 0.8);
    }
  }
};

}  // namespace

std::string serve_command(const LoggedRun& run, const Changes& changes) {
  // Flags in effect, as the log showed them; default-looking values are left out.
  Changes flags;
  const VllmFlags& f = run.flags;
  if (f.tensor_parallel_size && *f.tensor_parallel_size > 1) flags.push_back({"--tensor-parallel-size", std::to_string(*f.tensor_parallel_size)});
  if (f.pipeline_parallel_size && *f.pipeline_parallel_size > 1) flags.push_back({"--pipeline-parallel-size", std::to_string(*f.pipeline_parallel_size)});
  if (f.data_parallel_size && *f.data_parallel_size > 1) flags.push_back({"--data-parallel-size", std::to_string(*f.data_parallel_size)});
  if (f.max_model_len) flags.push_back({"--max-model-len", std::to_string(*f.max_model_len)});
  if (f.gpu_memory_utilization) flags.push_back({"--gpu-memory-utilization", util::fixed(*f.gpu_memory_utilization, 2)});
  if (f.max_num_seqs) flags.push_back({"--max-num-seqs", std::to_string(*f.max_num_seqs)});
  if (f.max_num_batched_tokens && f.enable_chunked_prefill == std::optional<bool>(false))
    flags.push_back({"--max-num-batched-tokens", std::to_string(*f.max_num_batched_tokens)});
  if (f.kv_cache_dtype && *f.kv_cache_dtype != "auto") flags.push_back({"--kv-cache-dtype", *f.kv_cache_dtype});
  if (f.dtype && (*f.dtype == "float32" || *f.dtype == "float")) flags.push_back({"--dtype", *f.dtype});
  if (f.quantization) flags.push_back({"--quantization", *f.quantization});
  if (f.enforce_eager) flags.push_back({"--enforce-eager", ""});
  std::string env;
  for (const auto& change : changes) {
    // A named pair, not a structured binding: lambdas may not capture those before clang 16.
    const std::string& flag = change.first;
    if (flag == "ENV") {
      env += change.second + " ";
      continue;
    }
    auto it = std::find_if(flags.begin(), flags.end(), [&](const auto& p) { return p.first == flag; });
    if (it != flags.end()) it->second = change.second;
    else flags.push_back(change);
  }
  std::string cmd = env + "vllm serve " + (run.model.empty() ? std::string("MODEL") : run.model);
  for (const auto& [flag, value] : flags) {
    cmd += " " + flag;
    if (!value.empty()) cmd += " " + value;
  }
  return cmd;
}

std::unique_ptr<FixEngine> prediction_fix_engine();

void plan_fixes(Diagnosis& d, const KnowledgeBase& kb, const FixOptions& options) {
  if (!d.primary) return;
  const Finding& f = *d.primary;
  const KbRecord* rec = kb.find(f.error_class);
  if (options.engine) {
    if (auto engine_fixes = options.engine->plan(f, d.run))
      d.fixes.insert(d.fixes.end(), engine_fixes->begin(), engine_fixes->end());
  }
  Planner p{f, d.run, options, {}, {}};
  p.plan();
  // Skip arithmetic fixes that set the same flags as an engine fix.
  for (auto& s : p.fixes) {
    bool duplicate = false;
    for (const auto& e : d.fixes)
      if (!s.changes.empty() && e.changes == s.changes) duplicate = true;
    if (!duplicate) d.fixes.push_back(std::move(s));
  }
  d.notes.insert(d.notes.end(), p.notes.begin(), p.notes.end());
  if (!rec) return;
  if (d.fixes.empty())
    for (const auto& w : rec->workarounds)
      d.fixes.push_back(FixSuggestion{{}, w.action + (w.how.empty() ? "" : ": " + w.how), "",
                                      w.condition.empty()        ? "the knowledge base's workaround"
                                      : w.condition == "always" ? "the knowledge base's workaround, in every case"
                                                                : "when " + w.condition,
                                      w.success_rate.value_or(rec->confidence * 0.5), "knowledge base"});
  d.dead_ends = rec->dead_ends;
}

}  // namespace headroom
