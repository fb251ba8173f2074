// Startup-line parser. Templates by version are in the memory-model notes (§7): V1 lines carry a
// "[file.py:LINE]" prefix, V0 lines "file.py:LINE]"; GiB figures come as "%.2f" or Python's
// round(x, 2) ("5.0"), token counts with or without thousands separators.
#include <cmath>
#include <re2/re2.h>

#include <charconv>
#include <cstdlib>

#include "headroom/vllm_log.h"
#include "util/strings.h"

namespace headroom {

namespace {

enum Handler : int {
  h_engine_config,
  h_server_version,
  h_non_default_args,
  h_namespace_args,
  h_chunked_prefill,
  h_max_model_len,
  h_weights,
  h_v1_profile,
  h_v064_profile,
  h_v0_budget,
  h_v0_split,
  h_blocks,
  h_available_kv,
  h_kv_tokens,
  h_concurrency,
  h_graph_finished,
  h_graph_pool,
  h_graph_estimate,
  h_init_snapshot,
  h_initial_free,
  h_free_on_startup,
  h_capturing,
  h_loading,
  h_profiling,
  h_ready,
  h_serving,
  h_architecture,
  h_auto_fit,
  h_block_size,
  h_bf16_gpu,
  h_torch_total,
  h_graph_profiling_enabled,
  h_mamba_align,
};

struct Anchor {
  const char* literal;
  Handler handler;
};

const std::vector<Anchor>& anchor_table() {
  static const std::vector<Anchor> table = {
      {"LLM engine", h_engine_config},
      {"server version ", h_server_version},
      {"non-default args: ", h_non_default_args},
      {"args: Namespace(", h_namespace_args},
      {"Chunked prefill is enabled with max_num_batched_tokens=", h_chunked_prefill},
      {"Using max model len ", h_max_model_len},
      {"Model loading took ", h_weights},
      {"Loading model weights took ", h_weights},
      {"Total non KV cache memory: ", h_v1_profile},
      {"Memory profiling results: ", h_v064_profile},
      {"x gpu_memory_utilization (", h_v0_budget},
      {"model weights take ", h_v0_split},
      {"# GPU blocks: ", h_blocks},
      {"# cuda blocks: ", h_blocks},
      {"# CUDA blocks: ", h_blocks},
      {"Available KV cache memory: ", h_available_kv},
      {"GPU KV cache size: ", h_kv_tokens},
      {"Maximum concurrency for ", h_concurrency},
      {"Graph capturing finished", h_graph_finished},
      {"CUDA graph pool memory: ", h_graph_pool},
      {"Estimated CUDA graph memory: ", h_graph_estimate},
      // v0.29+ model runner v2 estimate (#53306); the wording is from a stored fork of it.
      {"Estimated MRV2 CUDA graph memory: ", h_graph_estimate},
      {"CUDA graph memory profiling is enabled", h_graph_profiling_enabled},
      {"Mamba cache mode is set to 'align'", h_mamba_align},
      {"worker init memory snapshot:", h_init_snapshot},
      {"Initial free memory: ", h_initial_free},
      {") on startup", h_free_on_startup},
      {"Capturing cudagraphs", h_capturing},
      {"Capturing the model for CUDA graphs", h_capturing},
      {"Capturing CUDA graph", h_capturing},
      {"CUDA graphs can take additional", h_capturing},
      {"Starting to load model", h_loading},
      {"Loading safetensors checkpoint shards", h_loading},
      {"Loading weights took", h_loading},
      {"Starting profile run for multi-modal", h_profiling},
      {"Encoder cache will be initialized", h_profiling},
      {"init engine (profile, create kv cache, warmup model) took", h_ready},
      {"Starting vLLM API server", h_ready},
      {"Application startup complete", h_serving},
      {"Added request", h_serving},
      {"Avg prompt throughput", h_serving},
      {"Resolved architecture: ", h_architecture},
      {"Auto-fit max_model_len: ", h_auto_fit},
      {"Setting kv cache block size to ", h_block_size},
      {"Bfloat16 is only supported", h_bf16_gpu},
      {"total capacity", h_torch_total},
      {"total capacty", h_torch_total},
  };
  return table;
}

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
}

// "key=value, key=value" (engine config line, Namespace) or "'key': value" (a dict).
void apply_settings(LoggedRun& run, std::string_view body, char separator) {
  for (auto part : split_top_level(body)) {
    auto pos = part.find(separator);
    if (pos == std::string_view::npos) continue;
    apply_setting(run, part.substr(0, pos), part.substr(pos + 1));
  }
}

// Finds the first capture of `re` in `line` as a double.
std::optional<double> capture_double(const RE2& re, std::string_view line) {
  re2::StringPiece m;
  if (!RE2::PartialMatch(line, re, &m)) return std::nullopt;
  return to_double(m);
}

}  // namespace

std::string_view to_string(StartupStage stage) {
  switch (stage) {
    case StartupStage::not_started: return "not-started";
    case StartupStage::configured: return "configured";
    case StartupStage::loading_weights: return "loading-weights";
    case StartupStage::weights_loaded: return "weights-loaded";
    case StartupStage::profiling: return "profiling";
    case StartupStage::kv_cache_sized: return "kv-cache-sized";
    case StartupStage::capturing_graphs: return "capturing-graphs";
    case StartupStage::graphs_captured: return "graphs-captured";
    case StartupStage::engine_ready: return "engine-ready";
    case StartupStage::serving: return "serving";
  }
  return "not-started";
}

std::optional<VllmVersion> parse_logged_version(std::string_view text) {
  static const RE2 re(R"(v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.?post(\d+))?)");
  re2::StringPiece a, b, c, d, post;
  if (!RE2::PartialMatch(text, re, &a, &b, &c, &d, &post)) return std::nullopt;
  VllmVersion v;
  auto num = [](std::string_view s) { return s.empty() ? 0 : static_cast<int>(*to_int(s)); };
  v.major = num(a);
  v.minor = num(b);
  v.patch = num(c);
  v.extra = num(d);
  v.post = num(post);
  return v;
}

std::string clean_log_line(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < line.size() && !(line[j] >= '@' && line[j] <= '~')) ++j;
      i = j;
      continue;
    }
    if (line[i] == '\r') continue;
    out.push_back(line[i]);
  }
  // Process tags vLLM (and Ray, torchrun) put before the level: "(EngineCore_DP0 pid=43) ",
  // "(VllmWorker rank=3 pid=1090) ", "[rank0]: ".
  static const RE2 prefix(R"(^\s*(?:\([A-Za-z_][\w:.-]*(?: rank=\d+)? pid=\d+\)\s*|\[rank\d+\]:\s*)+)");
  re2::StringPiece consume(out);
  if (RE2::Consume(&consume, prefix)) return std::string(consume.data(), consume.size());
  return out;
}

VllmLogParser::VllmLogParser() = default;

const std::vector<std::string>& VllmLogParser::anchors() {
  static const std::vector<std::string> literals = [] {
    std::vector<std::string> out;
    for (const auto& a : anchor_table()) out.emplace_back(a.literal);
    return out;
  }();
  return literals;
}

void VllmLogParser::feed(std::string_view line) {
  ++m_line;
  m_run.lines = m_line;
  const auto& table = anchor_table();
  std::optional<std::string> clean;
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (line.find(table[i].literal) == std::string_view::npos) continue;
    if (!clean) clean = clean_log_line(line);
    apply(i, *clean);
  }
}

void VllmLogParser::feed_matched(std::int64_t line_number, std::string_view line, std::size_t anchor) {
  m_line = line_number;
  m_run.lines = std::max(m_run.lines, line_number);
  if (anchor >= anchor_table().size()) return;
  apply(anchor, clean_log_line(line));
}

void VllmLogParser::advance(StartupStage stage) {
  if (stage >= m_run.stage) {
    m_run.stage = stage;
    m_run.stage_line = m_line;
  }
  if (stage >= StartupStage::engine_ready) m_run.engine_started = true;
}

void VllmLogParser::apply(std::size_t anchor, std::string_view s) {
  LoggedRun& r = m_run;
  switch (anchor_table()[anchor].handler) {
    case h_engine_config: {
      static const RE2 re(R"(Initializing an? (V1 )?LLM engine (?:\(v([^)\s]+)\) )?with config: (.*))");
      re2::StringPiece v1, version, body;
      if (!RE2::PartialMatch(s, re, &v1, &version, &body)) return;
      r.v1_engine = !v1.empty();
      if (!version.empty()) {
        r.version_text = std::string(version);
        r.version = parse_logged_version(version);
      }
      apply_settings(r, body, '=');
      advance(StartupStage::configured);
      return;
    }
    case h_server_version: {
      static const RE2 re(R"(vLLM (?:API )?server version (\S+?)(?:,|$| ))");
      static const RE2 model_re(R"(serving model (\S+))");
      re2::StringPiece version, model;
      if (RE2::PartialMatch(s, re, &version)) {
        r.version_text = std::string(version);
        r.version = parse_logged_version(version);
      }
      if (RE2::PartialMatch(s, model_re, &model) && r.model.empty()) r.model = std::string(model);
      return;
    }
    case h_non_default_args: {
      auto pos = s.find("non-default args: {");
      if (pos == std::string_view::npos) return;
      std::string_view body = s.substr(pos + 19);
      if (auto end = body.rfind('}'); end != std::string_view::npos) body = body.substr(0, end);
      apply_settings(r, body, ':');
      advance(StartupStage::configured);
      return;
    }
    case h_namespace_args: {
      auto pos = s.find("Namespace(");
      std::string_view body = s.substr(pos + 10);
      if (auto end = body.rfind(')'); end != std::string_view::npos) body = body.substr(0, end);
      apply_settings(r, body, '=');
      advance(StartupStage::configured);
      return;
    }
    case h_chunked_prefill: {
      static const RE2 re(R"(max_num_batched_tokens=(\d+))");
      if (auto v = capture_double(re, s)) {
        if (!r.flags.max_num_batched_tokens) r.flags.max_num_batched_tokens = static_cast<int>(*v);
        r.flags.enable_chunked_prefill = true;
      }
      return;
    }
    case h_max_model_len: {
      static const RE2 re(R"(Using max model len (\d+))");
      if (auto v = capture_double(re, s)) r.flags.max_model_len = static_cast<std::int64_t>(*v);
      return;
    }
    case h_weights: {
      static const RE2 re(R"((?:Model loading|Loading model weights) took ([\d.]+) ?(?:GiB|GB))");
      if (auto v = capture_double(re, s)) r.weights_gib = v;
      advance(StartupStage::weights_loaded);
      return;
    }
    case h_v1_profile: {
      static const RE2 non_kv(R"(Total non KV cache memory: (-?[\d.]+) ?GiB)");
      static const RE2 peak(R"(torch peak memory increase: (-?[\d.]+) ?GiB)");
      static const RE2 non_torch(R"(non-torch forward increase memory: (-?[\d.]+) ?GiB)");
      static const RE2 weights(R"(weights memory: ([\d.]+) ?GiB)");
      // v0.26+ (#49208): "total consumed (from mem_get_info)" replaces the non-torch figure; the
      // device free-memory drop covers weights plus everything else that stayed allocated.
      static const RE2 consumed(R"(total consumed \(from mem_get_info\): (-?[\d.]+) ?GiB)");
      if (auto v = capture_double(non_kv, s)) r.non_kv_total_gib = v;
      if (auto v = capture_double(peak, s)) r.activation_peak_gib = v;
      if (auto v = capture_double(non_torch, s)) r.non_torch_gib = v;
      if (auto v = capture_double(weights, s)) r.weights_gib = v;
      if (auto c = capture_double(consumed, s); c && !r.non_torch_gib && r.weights_gib)
        r.non_torch_gib = std::round((*c - *r.weights_gib) * 100.0) / 100.0;
      advance(StartupStage::weights_loaded);
      return;
    }
    case h_v064_profile: {
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
      advance(StartupStage::weights_loaded);
      return;
    }
    case h_v0_budget: {
      static const RE2 re(R"(total_gpu_memory \(([\d.]+) ?GiB\) x gpu_memory_utilization \(([\d.]+)\) = ([\d.]+) ?GiB)");
      re2::StringPiece t, u, q;
      if (!RE2::PartialMatch(s, re, &t, &u, &q)) return;
      r.total_gib = to_double(t);
      r.flags.gpu_memory_utilization = to_double(u);
      r.requested_gib = to_double(q);
      return;
    }
    case h_v0_split: {
      static const RE2 re(
          R"(model weights take ([\d.]+) ?GiB; non_torch_memory takes (-?[\d.]+) ?GiB; PyTorch activation peak memory takes ([\d.]+) ?GiB; the rest of the memory reserved for KV Cache is (-?[\d.]+) ?GiB)");
      re2::StringPiece w, n, p, k;
      if (!RE2::PartialMatch(s, re, &w, &n, &p, &k)) return;
      r.weights_gib = to_double(w);
      r.non_torch_gib = to_double(n);
      r.activation_peak_gib = to_double(p);
      r.kv_cache_gib = to_double(k);
      advance(StartupStage::weights_loaded);
      return;
    }
    case h_blocks: {
      static const RE2 re(R"(# (?:GPU|cuda|CUDA) blocks: (\d+))");
      if (auto v = capture_double(re, s)) {
        r.num_gpu_blocks = static_cast<std::int64_t>(*v);
        r.kv_tokens = *r.num_gpu_blocks * r.flags.block_size.value_or(16);
      }
      advance(StartupStage::kv_cache_sized);
      return;
    }
    case h_available_kv: {
      static const RE2 re(R"(Available KV cache memory: (-?[\d.]+) ?GiB)");
      if (auto v = capture_double(re, s)) r.kv_cache_gib = v;
      advance(StartupStage::kv_cache_sized);
      return;
    }
    case h_kv_tokens: {
      static const RE2 re(R"(GPU KV cache size: ([\d,]+) tokens)");
      if (auto v = capture_double(re, s)) r.kv_tokens = static_cast<std::int64_t>(*v);
      advance(StartupStage::kv_cache_sized);
      [[fallthrough]];  // v0.30 prints the concurrency on the same line
    }
    case h_concurrency: {
      static const RE2 re(R"(Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x)");
      re2::StringPiece len, x;
      if (RE2::PartialMatch(s, re, &len, &x)) {
        r.concurrency_len = to_int(len);
        r.max_concurrency = to_double(x);
        advance(StartupStage::kv_cache_sized);
      }
      return;
    }
    case h_graph_finished: {
      static const RE2 re(R"(Graph capturing finished in [\d.]+ secs?, took (-?[\d.]+) ?GiB)");
      if (auto v = capture_double(re, s)) r.cuda_graph_gib = v;
      advance(StartupStage::graphs_captured);
      return;
    }
    case h_graph_pool: {
      static const RE2 re(R"(CUDA graph pool memory: ([\d.]+) GiB \(actual\), ([\d.]+) GiB \(estimated\))");
      re2::StringPiece a, e;
      if (RE2::PartialMatch(s, re, &a, &e)) {
        r.cuda_graph_gib = to_double(a);
        r.cuda_graph_estimated_gib = to_double(e);
      }
      advance(StartupStage::graphs_captured);
      return;
    }
    case h_graph_estimate: {
      static const RE2 re(R"(Estimated (?:MRV2 )?CUDA graph memory: ([\d.]+) ?GiB)");
      if (auto v = capture_double(re, s)) r.cuda_graph_estimated_gib = v;
      return;
    }
    case h_init_snapshot: {
      static const RE2 free_re(R"(free_memory=([\d.]+) ?GiB)");
      static const RE2 total_re(R"(total_memory=([\d.]+) ?GiB)");
      if (auto v = capture_double(free_re, s)) r.free_at_start_gib = v;
      if (auto v = capture_double(total_re, s)) r.total_gib = v;
      return;
    }
    case h_initial_free: {
      static const RE2 re(R"(Initial free memory: ([\d.]+) ?GiB; Requested memory: ([\d.]+) \(util\), ([\d.]+) ?GiB)");
      re2::StringPiece f, u, q;
      if (RE2::PartialMatch(s, re, &f, &u, &q)) {
        r.free_at_start_gib = to_double(f);
        r.flags.gpu_memory_utilization = to_double(u);
        r.requested_gib = to_double(q);
      }
      return;
    }
    case h_free_on_startup: {
      // The startup check error and the MRV2 summary (an INFO line) start alike.
      static const RE2 re(R"(Free memory on device(?: \S+)? \(([\d.]+)/([\d.]+) GiB\) on startup)");
      static const RE2 util_re(R"(utilization (?:is )?\(([\d.]+), ([\d.]+) GiB\))");
      static const RE2 mrv2(
          R"(Actual usage is ([\d.]+) GiB for weight, ([\d.]+) GiB for peak activation, ([\d.]+) GiB for non-torch memory, and ([\d.]+) GiB for CUDAGraph memory)");
      // v0.26+ wording (#47374 at INFO, #49208): consumed memory replaces weight and non-torch.
      static const RE2 consumed(
          R"(Actual usage is ([\d.]+) GiB for consumed memory \(weights \+ non-torch\), ([\d.]+) GiB for peak activation, and ([\d.]+) GiB for CUDAGraph memory)");
      static const RE2 kv_fit(R"(--kv-cache-memory=(\d+)`? \([\d.]+ GiB\) to fit into requested memory)");
      static const RE2 kv_full(R"(--kv-cache-memory=(\d+)`? \([\d.]+ GiB\) to fully utilize)");
      static const RE2 kv_now(R"(Current kv cache memory in use is ([\d.]+) GiB)");
      re2::StringPiece f, t, u, q, w, a, n, g;
      if (!RE2::PartialMatch(s, re, &f, &t)) return;
      r.free_at_start_gib = to_double(f);
      r.total_gib = to_double(t);
      if (RE2::PartialMatch(s, util_re, &u, &q)) {
        r.flags.gpu_memory_utilization = to_double(u);
        r.requested_gib = to_double(q);
      }
      if (RE2::PartialMatch(s, mrv2, &w, &a, &n, &g)) {
        r.weights_gib = to_double(w);
        r.activation_peak_gib = to_double(a);
        r.non_torch_gib = to_double(n);
        r.cuda_graph_gib = to_double(g);
        advance(StartupStage::graphs_captured);
      }
      if (RE2::PartialMatch(s, consumed, &w, &a, &g)) {
        if (r.weights_gib && !r.non_torch_gib) r.non_torch_gib = std::round((to_double(w).value_or(0) - *r.weights_gib) * 100.0) / 100.0;
        r.activation_peak_gib = to_double(a);
        r.cuda_graph_gib = to_double(g);
        advance(StartupStage::graphs_captured);
      }
      if (auto v = capture_double(kv_fit, s)) r.kv_cache_memory_fit_bytes = static_cast<std::int64_t>(*v);
      if (auto v = capture_double(kv_full, s)) r.kv_cache_memory_full_bytes = static_cast<std::int64_t>(*v);
      if (auto v = capture_double(kv_now, s)) r.kv_cache_gib = v;
      return;
    }
    case h_graph_profiling_enabled: {
      // "The current --gpu-memory-utilization=%.4f is equivalent to ..." (gpu_worker.py, v0.21+).
      static const RE2 re(R"(The current --gpu-memory-utilization=([\d.]+))");
      if (auto v = capture_double(re, s)) r.flags.gpu_memory_utilization = v;
      return;
    }
    case h_mamba_align:
      // v0.28 (#50991): hybrid models start with prefix caching on in align mode.
      r.flags.enable_prefix_caching = true;
      return;
    case h_capturing: advance(StartupStage::capturing_graphs); return;
    case h_loading: advance(StartupStage::loading_weights); return;
    case h_profiling:
      r.multimodal_profile = true;
      advance(StartupStage::profiling);
      return;
    case h_ready: advance(StartupStage::engine_ready); return;
    case h_serving: advance(StartupStage::serving); return;
    case h_architecture: {
      static const RE2 re(R"(Resolved architecture: (\S+))");
      re2::StringPiece a;
      if (RE2::PartialMatch(s, re, &a)) r.architecture = std::string(a);
      return;
    }
    case h_auto_fit: {
      static const RE2 re(R"(reduced from \d+ to (\d+))");
      if (auto v = capture_double(re, s)) {
        r.auto_fit_max_model_len = static_cast<std::int64_t>(*v);
        r.flags.max_model_len = r.auto_fit_max_model_len;
      }
      return;
    }
    case h_block_size: {
      static const RE2 re(R"(Setting kv cache block size to (\d+))");
      if (auto v = capture_double(re, s)) r.flags.block_size = static_cast<int>(*v);
      return;
    }
    case h_bf16_gpu: {
      static const RE2 re(R"(Your (.+?) GPU has compute capability)");
      re2::StringPiece g;
      if (RE2::PartialMatch(s, re, &g)) r.gpu_name = std::string(g);
      return;
    }
    case h_torch_total: {
      static const RE2 re(R"((?:total capac(?:i)?ty of ([\d.]+) GiB|([\d.]+) GiB total capacity))");
      re2::StringPiece a, b;
      if (!r.total_gib && RE2::PartialMatch(s, re, &a, &b)) r.total_gib = to_double(a.empty() ? b : a);
      return;
    }
  }
}

}  // namespace headroom
