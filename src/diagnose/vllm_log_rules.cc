// The line rules of the startup-log parser. Templates by version are in the memory-model notes
// (§7): V1 lines carry a "[file.py:LINE]" prefix, V0 lines "file.py:LINE]"; GiB figures come as
// "%.2f" or Python's round(x, 2) ("5.0"), token counts with or without thousands separators.
// Each reader names the vLLM message it reads and the file that prints it.
#include "diagnose/vllm_log_rules.h"

#include <re2/re2.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "diagnose/vllm_log_settings.h"
#include "util/strings.h"

namespace headroom {

namespace {

using Stage = std::optional<StartupStage>;
constexpr Stage k_no_stage = std::nullopt;

std::optional<double> to_double(std::string_view s) { return util::parse_log_number(s, false); }

std::optional<std::int64_t> to_int(std::string_view s) {
  auto d = to_double(s);
  if (!d || std::fabs(*d) >= 9.2e18) return std::nullopt;  // past int64's range
  return static_cast<std::int64_t>(*d);
}

// Finds the first capture of `re` in `line` as a double.
std::optional<double> capture_double(const RE2& re, std::string_view line) {
  re2::StringPiece m;
  if (!RE2::PartialMatch(line, re, &m)) return std::nullopt;
  return to_double(m);
}

void set_version(LoggedRun& r, std::string_view version) {
  r.version_text = std::string(version);
  r.version = parse_logged_version(version);
}

// "Initializing a V1 LLM engine (v0.9.1) with config: model=..., max_seq_len=..." (engine/llm_engine.py,
// v1/engine/core.py).
Stage engine_config(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(Initializing an? (V1 )?LLM engine (?:\(v([^)\s]+)\) )?with config: (.*))");
  re2::StringPiece v1, version, body;
  if (!RE2::PartialMatch(s, re, &v1, &version, &body)) return k_no_stage;
  r.v1_engine = !v1.empty();
  if (!version.empty()) set_version(r, version);
  apply_logged_settings(r, body, '=');
  return StartupStage::configured;
}

// "vLLM API server version 0.7.1" (entrypoints/openai/api_server.py), "... serving model X".
Stage server_version(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(vLLM (?:API )?server version (\S+?)(?:,|$| ))");
  static const RE2 model_re(R"(serving model (\S+))");
  re2::StringPiece version, model;
  if (RE2::PartialMatch(s, re, &version)) set_version(r, version);
  if (RE2::PartialMatch(s, model_re, &model) && r.model.empty()) r.model = std::string(model);
  return k_no_stage;
}

// "non-default args: {'model': ..., 'max_model_len': ...}" (entrypoints/utils.py log_non_default_args).
Stage non_default_args(LoggedRun& r, std::string_view s) {
  auto pos = s.find("non-default args: {");
  if (pos == std::string_view::npos) return k_no_stage;
  std::string_view body = s.substr(pos + 19);
  if (auto end = body.rfind('}'); end != std::string_view::npos) body = body.substr(0, end);
  apply_logged_settings(r, body, ':');
  return StartupStage::configured;
}

// "args: Namespace(model=..., ...)" (entrypoints/openai/api_server.py, before log_non_default_args).
Stage namespace_args(LoggedRun& r, std::string_view s) {
  auto pos = s.find("Namespace(");
  std::string_view body = s.substr(pos + 10);
  if (auto end = body.rfind(')'); end != std::string_view::npos) body = body.substr(0, end);
  apply_logged_settings(r, body, '=');
  return StartupStage::configured;
}

// "Chunked prefill is enabled with max_num_batched_tokens=8192." (config/scheduler.py).
Stage chunked_prefill(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(max_num_batched_tokens=(\d+))");
  if (auto v = capture_double(re, s)) {
    if (!r.flags.max_num_batched_tokens) r.flags.max_num_batched_tokens = static_cast<int>(*v);
    r.flags.enable_chunked_prefill = true;
  }
  return k_no_stage;
}

// "Using max model len 32768" (config/model.py).
Stage max_model_len(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(Using max model len (\d+))");
  if (auto v = capture_double(re, s)) r.flags.max_model_len = static_cast<std::int64_t>(*v);
  return k_no_stage;
}

// "Model loading took 14.99 GiB memory and 11.42 seconds" (v1 gpu_model_runner.py load_model),
// V0 "Loading model weights took 15.5083 GB" (worker/model_runner.py).
Stage weights(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"((?:Model loading|Loading model weights) took ([\d.]+) ?(?:GiB|GB))");
  if (auto v = capture_double(re, s)) r.weights_gib = v;
  return StartupStage::weights_loaded;
}

// "Memory profiling takes 1.21 seconds. Total non KV cache memory: 11.76GiB; torch peak memory
// increase: 0.71GiB; non-torch forward increase memory: 0.21GiB; weights memory: 10.84GiB."
// (v1/worker/gpu_worker.py determine_available_memory).
Stage v1_profile(LoggedRun& r, std::string_view s) {
  static const RE2 non_kv(R"(Total non KV cache memory: (-?[\d.]+) ?GiB)");
  static const RE2 peak(R"(torch peak memory increase: (-?[\d.]+) ?GiB)");
  static const RE2 non_torch(R"(non-torch forward increase memory: (-?[\d.]+) ?GiB)");
  static const RE2 weights_re(R"(weights memory: ([\d.]+) ?GiB)");
  // v0.26+ (#49208): "total consumed (from mem_get_info)" replaces the non-torch figure; the
  // device free-memory drop covers weights plus everything else that stayed allocated.
  static const RE2 consumed(R"(total consumed \(from mem_get_info\): (-?[\d.]+) ?GiB)");
  if (auto v = capture_double(non_kv, s)) r.non_kv_total_gib = v;
  if (auto v = capture_double(peak, s)) r.activation_peak_gib = v;
  if (auto v = capture_double(non_torch, s)) r.non_torch_gib = v;
  if (auto v = capture_double(weights_re, s)) r.weights_gib = v;
  if (auto c = capture_double(consumed, s); c && !r.non_torch_gib && r.weights_gib)
    r.non_torch_gib = std::round((*c - *r.weights_gib) * 100.0) / 100.0;
  return StartupStage::weights_loaded;
}

// "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB ..." (V0 0.6.4 worker.py).
Stage v064_profile(LoggedRun& r, std::string_view s) {
  static const RE2 total(R"(total_gpu_memory=([\d.]+)GiB)");
  static const RE2 initial(R"(initial_memory_usage=([\d.]+)GiB)");
  static const RE2 non_torch(R"(non_torch_memory=([\d.]+)GiB)");
  static const RE2 kv(R"(kv_cache_size=(-?[\d.]+)GiB)");
  static const RE2 util(R"(gpu_memory_utilization=([\d.]+))");
  if (auto v = capture_double(total, s)) r.total_gib = v;
  if (auto v = capture_double(initial, s)) r.initial_memory_usage_gib = v;
  if (auto v = capture_double(non_torch, s)) r.non_torch_gib = v;
  if (auto v = capture_double(kv, s)) r.kv_cache_gib = v;
  if (auto v = capture_double(util, s)) r.flags.gpu_memory_utilization = v;
  return StartupStage::weights_loaded;
}

// "the current vLLM instance can use total_gpu_memory (23.55GiB) x gpu_memory_utilization (0.78) = 18.28GiB"
// (V0 0.6.5-0.8 worker.py determine_num_available_blocks).
Stage v0_budget(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(total_gpu_memory \(([\d.]+) ?GiB\) x gpu_memory_utilization \(([\d.]+)\) = ([\d.]+) ?GiB)");
  re2::StringPiece t, u, q;
  if (!RE2::PartialMatch(s, re, &t, &u, &q)) return k_no_stage;
  r.total_gib = to_double(t);
  r.flags.gpu_memory_utilization = to_double(u);
  r.requested_gib = to_double(q);
  return k_no_stage;
}

// "model weights take 0.52GiB; non_torch_memory takes 0.07GiB; PyTorch activation peak memory takes
// 1.61GiB; the rest of the memory reserved for KV Cache is 16.09GiB." (V0 worker.py).
Stage v0_split(LoggedRun& r, std::string_view s) {
  static const RE2 re(
      R"(model weights take ([\d.]+) ?GiB; non_torch_memory takes (-?[\d.]+) ?GiB; PyTorch activation peak memory takes ([\d.]+) ?GiB; the rest of the memory reserved for KV Cache is (-?[\d.]+) ?GiB)");
  re2::StringPiece w, n, p, k;
  if (!RE2::PartialMatch(s, re, &w, &n, &p, &k)) return k_no_stage;
  r.weights_gib = to_double(w);
  r.non_torch_gib = to_double(n);
  r.activation_peak_gib = to_double(p);
  r.kv_cache_gib = to_double(k);
  return StartupStage::weights_loaded;
}

// "# GPU blocks: 1478, # CPU blocks: 2048" / "# cuda blocks: 87853" (V0 executor/gpu_executor.py).
Stage blocks(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(# (?:GPU|cuda|CUDA) blocks: (\d+))");
  if (auto v = capture_double(re, s)) {
    r.num_gpu_blocks = static_cast<std::int64_t>(*v);
    r.kv_tokens = *r.num_gpu_blocks * r.flags.block_size.value_or(16);
  }
  return StartupStage::kv_cache_sized;
}

// "Available KV cache memory: 16.46 GiB" (v1/worker/gpu_worker.py determine_available_memory).
Stage available_kv(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(Available KV cache memory: (-?[\d.]+) ?GiB)");
  if (auto v = capture_double(re, s)) r.kv_cache_gib = v;
  return StartupStage::kv_cache_sized;
}

// "Maximum concurrency for 131,072 tokens per request: 3.44x" (v1/core/kv_cache_utils.py).
Stage concurrency(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x)");
  re2::StringPiece len, x;
  if (!RE2::PartialMatch(s, re, &len, &x)) return k_no_stage;
  r.concurrency_len = to_int(len);
  r.max_concurrency = to_double(x);
  return StartupStage::kv_cache_sized;
}

// "GPU KV cache size: 442,160 tokens" (v1/core/kv_cache_utils.py); v0.30 prints the concurrency
// on the same line.
Stage kv_tokens(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(GPU KV cache size: ([\d,]+) tokens)");
  if (auto v = capture_double(re, s)) r.kv_tokens = static_cast<std::int64_t>(*v);
  concurrency(r, s);
  return StartupStage::kv_cache_sized;
}

// "Graph capturing finished in 23 secs, took 0.96 GiB" (v1/worker/gpu_model_runner.py capture_model).
Stage graph_finished(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(Graph capturing finished in [\d.]+ secs?, took (-?[\d.]+) ?GiB)");
  if (auto v = capture_double(re, s)) r.cuda_graph_gib = v;
  return StartupStage::graphs_captured;
}

// "CUDA graph pool memory: 0.9 GiB (actual), 1.1 GiB (estimated)" (v0.21+ gpu_model_runner.py).
Stage graph_pool(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(CUDA graph pool memory: ([\d.]+) GiB \(actual\), ([\d.]+) GiB \(estimated\))");
  re2::StringPiece a, e;
  if (RE2::PartialMatch(s, re, &a, &e)) {
    r.cuda_graph_gib = to_double(a);
    r.cuda_graph_estimated_gib = to_double(e);
  }
  return StartupStage::graphs_captured;
}

// "Estimated CUDA graph memory: 1.23 GiB" (v0.21+ gpu_worker.py); the v0.29+ model runner v2
// prints "Estimated MRV2 CUDA graph memory" (#53306; the wording is from a stored fork of it).
Stage graph_estimate(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(Estimated (?:MRV2 )?CUDA graph memory: ([\d.]+) ?GiB)");
  if (auto v = capture_double(re, s)) r.cuda_graph_estimated_gib = v;
  return k_no_stage;
}

// "worker init memory snapshot: ... free_memory=77.1GiB total_memory=79.2GiB" (v1/worker/utils.py).
Stage init_snapshot(LoggedRun& r, std::string_view s) {
  static const RE2 free_re(R"(free_memory=([\d.]+) ?GiB)");
  static const RE2 total_re(R"(total_memory=([\d.]+) ?GiB)");
  if (auto v = capture_double(free_re, s)) r.free_at_start_gib = v;
  if (auto v = capture_double(total_re, s)) r.total_gib = v;
  return k_no_stage;
}

// "Initial free memory: 77.1 GiB; Requested memory: 0.90 (util), 71.2 GiB" (v1 gpu_worker.py init_device).
Stage initial_free(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(Initial free memory: ([\d.]+) ?GiB; Requested memory: ([\d.]+) \(util\), ([\d.]+) ?GiB)");
  re2::StringPiece f, u, q;
  if (RE2::PartialMatch(s, re, &f, &u, &q)) {
    r.free_at_start_gib = to_double(f);
    r.flags.gpu_memory_utilization = to_double(u);
    r.requested_gib = to_double(q);
  }
  return k_no_stage;
}

// The MRV2 summary's usage split and its --kv-cache-memory suggestions (v1/worker/gpu_worker.py).
Stage mrv2_usage(LoggedRun& r, std::string_view s) {
  static const RE2 mrv2(
      R"(Actual usage is ([\d.]+) GiB for weight, ([\d.]+) GiB for peak activation, ([\d.]+) GiB for non-torch memory, and ([\d.]+) GiB for CUDAGraph memory)");
  // v0.26+ wording (#47374 at INFO, #49208): consumed memory replaces weight and non-torch.
  static const RE2 consumed(
      R"(Actual usage is ([\d.]+) GiB for consumed memory \(weights \+ non-torch\), ([\d.]+) GiB for peak activation, and ([\d.]+) GiB for CUDAGraph memory)");
  static const RE2 kv_fit(R"(--kv-cache-memory=(\d+)`? \([\d.]+ GiB\) to fit into requested memory)");
  static const RE2 kv_full(R"(--kv-cache-memory=(\d+)`? \([\d.]+ GiB\) to fully utilize)");
  static const RE2 kv_now(R"(Current kv cache memory in use is ([\d.]+) GiB)");
  Stage stage;
  re2::StringPiece w, a, n, g;
  if (RE2::PartialMatch(s, mrv2, &w, &a, &n, &g)) {
    r.weights_gib = to_double(w);
    r.activation_peak_gib = to_double(a);
    r.non_torch_gib = to_double(n);
    r.cuda_graph_gib = to_double(g);
    stage = StartupStage::graphs_captured;
  }
  if (RE2::PartialMatch(s, consumed, &w, &a, &g)) {
    if (r.weights_gib && !r.non_torch_gib) r.non_torch_gib = std::round((to_double(w).value_or(0) - *r.weights_gib) * 100.0) / 100.0;
    r.activation_peak_gib = to_double(a);
    r.cuda_graph_gib = to_double(g);
    stage = StartupStage::graphs_captured;
  }
  if (auto v = capture_double(kv_fit, s)) r.kv_cache_memory_fit_bytes = static_cast<std::int64_t>(*v);
  if (auto v = capture_double(kv_full, s)) r.kv_cache_memory_full_bytes = static_cast<std::int64_t>(*v);
  if (auto v = capture_double(kv_now, s)) r.kv_cache_gib = v;
  return stage;
}

// "Free memory on device (77.57/79.11 GiB) on startup. Desired GPU memory utilization is (0.92,
// 72.78 GiB)..." (v1/worker/utils.py request_memory): the startup check error and the MRV2
// summary (an INFO line) start alike.
Stage free_on_startup(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(Free memory on device(?: \S+)? \(([\d.]+)/([\d.]+) GiB\) on startup)");
  static const RE2 util_re(R"(utilization (?:is )?\(([\d.]+), ([\d.]+) GiB\))");
  re2::StringPiece f, t, u, q;
  if (!RE2::PartialMatch(s, re, &f, &t)) return k_no_stage;
  r.free_at_start_gib = to_double(f);
  r.total_gib = to_double(t);
  if (RE2::PartialMatch(s, util_re, &u, &q)) {
    r.flags.gpu_memory_utilization = to_double(u);
    r.requested_gib = to_double(q);
  }
  return mrv2_usage(r, s);
}

// "The current --gpu-memory-utilization=%.4f is equivalent to ..." (gpu_worker.py, v0.21+).
Stage graph_profiling_enabled(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(The current --gpu-memory-utilization=([\d.]+))");
  if (auto v = capture_double(re, s)) r.flags.gpu_memory_utilization = v;
  return k_no_stage;
}

// "Mamba cache mode is set to 'align'" (v0.28, #50991): hybrid models start with prefix caching
// on in align mode.
Stage mamba_align(LoggedRun& r, std::string_view) {
  r.flags.enable_prefix_caching = true;
  return k_no_stage;
}

// A landmark that only says how far startup got.
template <StartupStage reached>
Stage landmark(LoggedRun&, std::string_view) {
  return reached;
}

Stage profiling(LoggedRun& r, std::string_view) {
  r.multimodal_profile = true;
  return StartupStage::profiling;
}

// "Resolved architecture: LlamaForCausalLM" (config/model.py).
Stage architecture(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(Resolved architecture: (\S+))");
  re2::StringPiece a;
  if (RE2::PartialMatch(s, re, &a)) r.architecture = std::string(a);
  return k_no_stage;
}

// "Auto-fit max_model_len: reduced from 131072 to 40960" (v1/core/kv_cache_utils.py, max_model_len=-1).
Stage auto_fit(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(reduced from \d+ to (\d+))");
  if (auto v = capture_double(re, s)) {
    r.auto_fit_max_model_len = static_cast<std::int64_t>(*v);
    r.flags.max_model_len = r.auto_fit_max_model_len;
  }
  return k_no_stage;
}

// "Setting kv cache block size to 32" (platforms/cuda.py check_and_update_config).
Stage block_size(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(Setting kv cache block size to (\d+))");
  if (auto v = capture_double(re, s)) r.flags.block_size = static_cast<int>(*v);
  return k_no_stage;
}

// "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU
// has compute capability 7.5." (worker/worker.py _check_if_gpu_supports_dtype).
Stage bf16_gpu(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"(Your (.+?) GPU has compute capability)");
  re2::StringPiece g;
  if (RE2::PartialMatch(s, re, &g)) r.gpu_name = std::string(g);
  return k_no_stage;
}

// torch's OOM message: "GPU 0 has a total capacity of 79.33 GiB" (2.1 spelt "capacty"), or
// "(GPU 0; 79.35 GiB total capacity; ...)" before 2.1 (c10/cuda/CUDACachingAllocator.cpp).
Stage torch_total(LoggedRun& r, std::string_view s) {
  static const RE2 re(R"((?:total capac(?:i)?ty of ([\d.]+) GiB|([\d.]+) GiB total capacity))");
  re2::StringPiece a, b;
  if (!r.total_gib && RE2::PartialMatch(s, re, &a, &b)) r.total_gib = to_double(a.empty() ? b : a);
  return k_no_stage;
}

// The top-k/top-p sampler's path (v1/sample/ops/topk_topp_sampler.py): "Using FlashInfer for top-p
// & top-k sampling." or "... Falling back to the PyTorch-native implementation of top-p & top-k
// sampling" (FlashInfer not installed, or installed but not enabled). It is the path taken, whatever
// VLLM_USE_FLASHINFER_SAMPLER asked for; the profile's sampler peak follows it (empirical.cc
// sampler_bytes_per_logit_for), so it is kept as that variable's value.
Stage flashinfer_sampler(LoggedRun& r, std::string_view) {
  r.flags.use_flashinfer_sampler = true;
  return k_no_stage;
}
Stage native_sampler(LoggedRun& r, std::string_view) {
  r.flags.use_flashinfer_sampler = false;
  return k_no_stage;
}

// One vLLM message: the reader, and every literal that selects its lines (wordings by version,
// in the order the parser tries them).
struct MessageRule {
  LogLineRule::Reader read;
  std::vector<const char*> literals;
};

const std::vector<MessageRule>& message_rules() {
  using S = StartupStage;
  static const std::vector<MessageRule> rules = {
      {engine_config, {"LLM engine"}},
      {server_version, {"server version "}},
      {non_default_args, {"non-default args: "}},
      {namespace_args, {"args: Namespace("}},
      {chunked_prefill, {"Chunked prefill is enabled with max_num_batched_tokens="}},
      {max_model_len, {"Using max model len "}},
      {weights, {"Model loading took ", "Loading model weights took "}},
      {v1_profile, {"Total non KV cache memory: "}},
      {v064_profile, {"Memory profiling results: "}},
      {v0_budget, {"x gpu_memory_utilization ("}},
      {v0_split, {"model weights take "}},
      {blocks, {"# GPU blocks: ", "# cuda blocks: ", "# CUDA blocks: "}},
      {available_kv, {"Available KV cache memory: "}},
      {kv_tokens, {"GPU KV cache size: "}},
      {concurrency, {"Maximum concurrency for "}},
      {graph_finished, {"Graph capturing finished"}},
      {graph_pool, {"CUDA graph pool memory: "}},
      {graph_estimate, {"Estimated CUDA graph memory: ", "Estimated MRV2 CUDA graph memory: "}},
      {graph_profiling_enabled, {"CUDA graph memory profiling is enabled"}},
      {mamba_align, {"Mamba cache mode is set to 'align'"}},
      {init_snapshot, {"worker init memory snapshot:"}},
      {initial_free, {"Initial free memory: "}},
      {free_on_startup, {") on startup"}},
      {landmark<S::capturing_graphs>,
       {"Capturing cudagraphs", "Capturing the model for CUDA graphs", "Capturing CUDA graph", "CUDA graphs can take additional"}},
      {landmark<S::loading_weights>, {"Starting to load model", "Loading safetensors checkpoint shards", "Loading weights took"}},
      {profiling, {"Starting profile run for multi-modal", "Encoder cache will be initialized"}},
      {landmark<S::engine_ready>, {"init engine (profile, create kv cache, warmup model) took", "Starting vLLM API server"}},
      {landmark<S::serving>, {"Application startup complete", "Added request", "Avg prompt throughput"}},
      {architecture, {"Resolved architecture: "}},
      {auto_fit, {"Auto-fit max_model_len: "}},
      {block_size, {"Setting kv cache block size to "}},
      {bf16_gpu, {"Bfloat16 is only supported"}},
      {torch_total, {"total capacity", "total capacty"}},
      {flashinfer_sampler, {"Using FlashInfer for top-p & top-k sampling"}},
      {native_sampler, {"Falling back to the PyTorch-native implementation of top-p & top-k sampling"}},
  };
  return rules;
}

}  // namespace

const std::vector<LogLineRule>& log_line_rules() {
  static const std::vector<LogLineRule> rules = [] {
    std::vector<LogLineRule> out;
    for (const auto& m : message_rules())
      for (const char* literal : m.literals) out.push_back({literal, m.read});
    return out;
  }();
  return rules;
}

}  // namespace headroom
