#include <algorithm>
#include <cmath>

#include "headroom/report.h"
#include "util/strings.h"
#include "util/terminal_text.h"

namespace headroom {

namespace {

double gib2(Bytes b) { return std::round(to_gib(b) * 100.0) / 100.0; }

std::string usage_context_name(UsageContext c) {
  switch (c) {
    case UsageContext::api_server: return "api_server";
    case UsageContext::llm_class: return "llm_class";
    case UsageContext::engine: return "engine";
  }
  return "?";
}

Bytes inventory_total(const ModelSpec& model) {
  if (model.weights) return model.weights->total_bytes;
  return 0;
}

}  // namespace

nlohmann::json settings_to_json(const ResolvedSettings& s) {
  nlohmann::json j;
  j["tensor_parallel_size"] = s.tensor_parallel_size;
  j["pipeline_parallel_size"] = s.pipeline_parallel_size;
  j["data_parallel_size"] = s.data_parallel_size;
  j["max_model_len"] = s.max_model_len;
  j["max_num_seqs"] = s.max_num_seqs;
  j["max_num_batched_tokens"] = s.max_num_batched_tokens;
  j["gpu_memory_utilization"] = s.gpu_memory_utilization;
  j["kv_cache_dtype"] = s.kv_cache_dtype;
  j["dtype"] = s.dtype;
  j["quantization"] = s.quantization.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.quantization);
  j["enforce_eager"] = s.enforce_eager;
  j["block_size"] = s.block_size;
  j["enable_prefix_caching"] = s.enable_prefix_caching;
  j["enable_chunked_prefill"] = s.enable_chunked_prefill;
  j["kv_cache_memory_bytes"] = s.kv_cache_memory_bytes ? nlohmann::json(*s.kv_cache_memory_bytes) : nlohmann::json(nullptr);
  j["estimate_cuda_graphs"] = s.estimate_cuda_graphs;
  j["usage_context"] = usage_context_name(s.usage_context);
  j["performance_mode"] = s.performance_mode.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.performance_mode);
  return j;
}

namespace {

// The checkpoint's quantization as the prediction took it; `guessed_from` says what a method that
// was inferred, not read, was inferred from (null when read); `ignore_list_inferred` what was
// inferred of an ignore list known only in part (null when read whole or absent).
nlohmann::json quantization_to_json(const ModelSpec& model) {
  if (!model.quantization) return nullptr;
  const auto& q = *model.quantization;
  return {{"method", q.method},
          {"bits", q.bits > 0 ? nlohmann::json(q.bits) : nlohmann::json(nullptr)},
          {"guessed_from", q.guessed_from.empty() ? nlohmann::json(nullptr) : nlohmann::json(q.guessed_from)},
          {"ignore_list_inferred", q.ignore_list_inferred.empty() ? nlohmann::json(nullptr) : nlohmann::json(q.ignore_list_inferred)}};
}

// The repos the config names and vLLM builds the model from (Ultravox's text_model_id and
// audio_model_id), each with where headroom read it.
nlohmann::json linked_repos_to_json(const ModelSpec& model) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : model.linked_repos) out.push_back({{"key", r.key}, {"repo", r.repo}, {"source", r.source}});
  return out;
}

}  // namespace

nlohmann::json prediction_to_json(const ModelSpec& model, const GpuSetup& gpus, const Prediction& p) {
  nlohmann::json j;
  j["schema_version"] = k_check_schema_version;
  j["model"] = {{"id", model.id},
                {"source", std::string(to_string(model.source))},
                {"location", model.location},
                {"architecture", model.architecture},
                {"params", parameter_count(model)},
                {"weights_bytes", inventory_total(model) > 0 ? nlohmann::json(inventory_total(model)) : nlohmann::json(nullptr)},
                {"quantization", quantization_to_json(model)},
                {"architecture_assumed_from", model.architecture_assumed_from.empty()
                                                  ? nlohmann::json(nullptr)
                                                  : nlohmann::json(model.architecture_assumed_from)},
                {"linked_repos", linked_repos_to_json(model)}};
  j["gpu"] = {{"name", gpus.gpu.name},
              {"key", gpus.gpu.key},
              {"total_gib", gib2(gpus.gpu.total_bytes)},
              {"count", gpus.count},
              {"nodes", gpus.nodes},
              {"used", p.gpus_used},
              {"free_gib", gpus.free_bytes ? nlohmann::json(gib2(*gpus.free_bytes)) : nlohmann::json(nullptr)}};
  j["vllm_version"] = p.version.to_string();
  j["vllm_rules_version"] = p.rules_version.to_string();
  j["vllm_modelled_with"] = p.modelled_with.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.modelled_with);
  j["settings"] = settings_to_json(p.settings);
  const auto& m = p.memory;
  j["memory"] = {{"total_gib", gib2(m.total)},
                 {"budget_gib", gib2(m.budget)},
                 {"weights_gib", gib2(m.weights)},
                 {"activation_peak_gib", gib2(m.activation_peak)},
                 {"non_torch_gib", gib2(m.non_torch)},
                 {"cuda_graph_gib", gib2(m.cuda_graph)},
                 {"cuda_graph_in_budget", p.settings.estimate_cuda_graphs},
                 {"kv_cache_gib", gib2(m.kv_cache)},
                 {"outside_budget_gib", gib2(m.outside_budget)},
                 {"baseline_gib", gib2(m.baseline)},
                 {"charged_baseline_gib", gib2(m.charged_baseline)}};
  j["sources"] = {{"weights", p.sources.weights},
                  {"activation_peak", p.sources.activation_peak},
                  {"non_torch", p.sources.non_torch},
                  {"cuda_graph", p.sources.cuda_graph}};
  j["kv_cache"] = {{"block_size", p.kv.block_size},
                   {"page_bytes", p.kv.page_bytes},
                   {"group_size", p.kv.group_size},
                   {"num_groups", p.kv.num_groups},
                   {"blocks_per_request", p.kv.blocks_per_request},
                   {"bytes_per_token", p.kv.bytes_per_token},
                   {"layout", p.kv.description}};
  j["kv_cache_tokens"] = p.kv_cache_tokens;
  {
    // Every prediction states its range: outside the calibrated region with the reasons, inside it
    // the calibrated error either side ("calibrated"), exact where the KV cache was reserved.
    const auto& u = p.kv_range;
    j["kv_cache_range"] = {{"kv_cache_gib_low", gib2(u.kv_cache_low)},
                           {"kv_cache_gib_high", gib2(u.kv_cache_high)},
                           {"kv_tokens_low", u.kv_tokens_low},
                           {"kv_tokens_high", u.kv_tokens_high},
                           {"calibrated", u.calibrated},
                           {"reserved", u.reserved},
                           {"reasons", u.reasons}};
  }
  j["num_gpu_blocks"] = p.num_gpu_blocks;
  j["max_concurrency"] = std::round(p.max_concurrency * 100.0) / 100.0;
  j["largest_fitting_max_model_len"] = p.largest_fitting_max_model_len;
  j["outcome"] = p.starts ? "ok" : "fails";
  if (p.failure) {
    j["failure"] = {{"class", p.failure->error_class}, {"phase", p.failure->phase}, {"message", p.failure->message}};
    if (p.failure->estimated_max_model_len) j["failure"]["estimated_max_model_len"] = *p.failure->estimated_max_model_len;
    if (p.failure->mm_item_tokens) j["failure"]["max_tokens_per_mm_item"] = *p.failure->mm_item_tokens;
  } else {
    j["failure"] = nullptr;
  }
  j["warnings"] = p.warnings;
  j["notes"] = p.notes;
  return j;
}

namespace {

struct Segment {
  const char* label;
  char glyph;
  const char* color;
  Bytes bytes;
};

std::string paint(const std::string& text, const char* color, TextStyle style) {
  if (style != TextStyle::color || text.empty()) return text;
  return std::string("\x1b[") + color + "m" + text + "\x1b[0m";
}

std::vector<Segment> segments(const MemoryBreakdown& m) {
  Bytes kv = std::max<Bytes>(0, m.kv_cache);
  return {{"weights", '#', "34", m.weights},
          {"activation", '=', "33", m.activation_peak},
          {"non-torch", '+', "35", m.non_torch},
          {"cuda graphs", '%', "36", m.cuda_graph},
          {"kv cache", '.', "32", kv},
          {"outside budget", ' ', "2", std::max<Bytes>(0, m.total - m.weights - m.activation_peak - m.non_torch - m.cuda_graph - kv)}};
}

}  // namespace

std::string render_memory_bar(const MemoryBreakdown& m, int width, TextStyle style) {
  std::string bar = "[";
  int used = 0;
  auto segs = segments(m);
  for (std::size_t i = 0; i < segs.size(); ++i) {
    int n = m.total > 0 ? static_cast<int>(std::lround(static_cast<double>(segs[i].bytes) / static_cast<double>(m.total) * width)) : 0;
    if (i + 1 == segs.size()) n = std::max(0, width - used);
    n = std::min(n, width - used);
    used += n;
    char glyph = segs[i].glyph == ' ' ? '-' : segs[i].glyph;
    bar += paint(std::string(static_cast<std::size_t>(n), glyph), segs[i].color, style);
  }
  bar += "]";
  return bar;
}

std::string render_prediction_text(const ModelSpec& model, const GpuSetup& gpus, const Prediction& p, TextStyle style) {
  std::string out;
  const auto& s = p.settings;
  const auto& m = p.memory;
  auto line = [&](const std::string& l) { out += l + "\n"; };
  // Text from outside (model ids, config fields, paths, GPU names, flag values, messages quoting
  // them) can hold escape sequences and line breaks: it is printed through terminal_safe.
  auto safe = [](const std::string& text) { return util::terminal_safe(text); };
  auto g = [](Bytes b) { return util::fixed(to_gib(b), 2); };
  std::string where = std::string(to_string(model.source));
  if (!model.location.empty() && model.location != where) where += ": " + safe(model.location);
  line("model   " + safe(model.id) + "  (" + safe(model.architecture) + ", " + where + ")");
  if (model.quantization && !model.quantization->guessed_from.empty())
    line("quant   " + safe(model.quantization->method) +
         (model.quantization->bits > 0 ? " " + std::to_string(model.quantization->bits) + "-bit" : std::string()) +
         "  (a guess from " + safe(model.quantization->guessed_from) +
         ": the checkpoint's quantization method was not read; no failure is asserted from it)");
  else if (model.quantization && !model.quantization->ignore_list_inferred.empty())
    line("quant   " + safe(model.quantization->method) +
         (model.quantization->bits > 0 ? " " + std::to_string(model.quantization->bits) + "-bit" : std::string()) +
         "  (ignore list in part: " + safe(model.quantization->ignore_list_inferred) + ")");
  std::string gpu_line = "gpu     " + std::to_string(p.gpus_used) + " × " + safe(gpus.gpu.name) + "  (" + g(gpus.gpu.total_bytes) +
                         " GiB as CUDA reports it";
  if (gpus.free_bytes) gpu_line += ", " + g(*gpus.free_bytes) + " GiB free now";
  line(gpu_line + ")");
  line("vllm    " + p.version.to_string() + "  tp=" + std::to_string(s.tensor_parallel_size) + " pp=" +
       std::to_string(s.pipeline_parallel_size) + (s.data_parallel_size > 1 ? " dp=" + std::to_string(s.data_parallel_size) : "") +
       " max_model_len=" + std::to_string(s.max_model_len) + " gpu_memory_utilization=" + util::fixed(s.gpu_memory_utilization, 2) +
       " max_num_seqs=" + std::to_string(s.max_num_seqs) + " max_num_batched_tokens=" + std::to_string(s.max_num_batched_tokens) +
       " dtype=" + safe(s.dtype) + " kv_cache_dtype=" + safe(s.kv_cache_dtype) + (s.quantization.empty() ? "" : " quantization=" + safe(s.quantization)) +
       (s.enforce_eager ? " enforce_eager" : "") +
       (s.performance_mode.empty() || s.performance_mode == "balanced" ? "" : " performance_mode=" + s.performance_mode));
  if (!p.modelled_with.empty()) line("rules   " + safe(p.modelled_with));
  line("");
  line("per GPU                             GiB   source");
  auto row = [&](const std::string& name, Bytes b, const std::string& src) {
    // Pad by characters, not bytes: the labels contain "×" and "−".
    std::string n = name;
    std::size_t chars = 0;
    for (unsigned char c : name)
      if ((c & 0xC0) != 0x80) ++chars;
    if (chars < 31) n += std::string(31 - chars, ' ');
    std::string v = g(b);
    std::string l = "  " + n + std::string(v.size() < 8 ? 8 - v.size() : 0, ' ') + v;
    line(src.empty() ? l : l + "   " + safe(src));
  };
  row("total", m.total, "");
  row("budget (total × utilization)", m.budget, "");
  row("weights", m.weights, p.sources.weights);
  row("activation peak", m.activation_peak, p.sources.activation_peak);
  row("non-torch", m.non_torch, p.sources.non_torch);
  row(s.estimate_cuda_graphs ? "cuda graphs (in budget)" : "cuda graphs (outside budget)", m.cuda_graph, p.sources.cuda_graph);
  // This version's non-KV memory is the device's whole use: the CUDA context and anything else
  // on the GPU come out of the budget too.
  if (m.charged_baseline > 0) row("cuda context, other processes", m.charged_baseline, "charged to the budget in this version");
  row("kv cache", m.kv_cache, "budget − the above");
  line("");
  line("  " + render_memory_bar(m, 60, style));
  line("  " + paint("#", "34", style) + " weights  " + paint("=", "33", style) + " activation  " + paint("+", "35", style) +
       " non-torch  " + paint("%", "36", style) + " graphs  " + paint(".", "32", style) + " kv cache  - outside budget");
  line("");
  // Capacity figures mean nothing when startup stops before the KV cache is sized.
  const bool kv_sized = p.starts || (p.failure && p.failure->phase != "weights-load" && p.failure->phase != "profile-run" &&
                                     p.failure->phase != "startup-free-memory-check" && p.failure->phase != "config" &&
                                     p.failure->phase != "model-construction");
  if (kv_sized) {
  line("kv cache  " + util::with_commas(p.kv_cache_tokens) + " tokens in " + util::with_commas(p.num_gpu_blocks) +
       " blocks of " + std::to_string(p.kv.block_size) + " (" + safe(p.kv.description) + ")");
  if (p.uncertainty) {
    line("          range " + util::with_commas(p.uncertainty->kv_tokens_low) + " to " +
         util::with_commas(p.uncertainty->kv_tokens_high) + " tokens, outside what the calibration covers:");
    for (const auto& r : p.uncertainty->reasons) line("            " + safe(r));
  } else if (p.kv_range.calibrated && p.kv_cache_tokens > 0 && p.memory.kv_cache > 0) {
    const double within = 100.0 * static_cast<double>(p.kv_range.kv_cache_high - p.memory.kv_cache) / static_cast<double>(p.memory.kv_cache);
    line("          range " + util::with_commas(p.kv_range.kv_tokens_low) + " to " + util::with_commas(p.kv_range.kv_tokens_high) +
         " tokens: inside what the calibration covers, where 9 in 10 runs it had not seen came within " +
         util::fixed(within, 1) + " %");
  }
  line("          max concurrency at " + util::with_commas(s.max_model_len) + " tokens: " + util::fixed(p.max_concurrency, 2) + "x");
  // vLLM refuses requests longer than max_model_len, whatever the KV cache could hold: a longer
  // fitting length is a max_model_len that would fit, not a request this configuration serves.
  if (p.largest_fitting_max_model_len > s.max_model_len && s.max_model_len > 0)
    line("          longest request served: " + util::with_commas(s.max_model_len) + " tokens (max_model_len); a max_model_len up to " +
         util::with_commas(p.largest_fitting_max_model_len) + " would fit");
  else if (p.largest_fitting_max_model_len > 0)
    line("          longest request that fits: " + util::with_commas(p.largest_fitting_max_model_len) + " tokens");
  } else {
    line("kv cache  not sized: startup stops before the KV cache is allocated");
  }
  line("");
  // A verdict on an architecture assumed by name holds only if the repo is that model.
  const std::string assumed =
      model.architecture_assumed_from.empty() ? "" : ", if the repo is " + safe(model.architecture_assumed_from) + " underneath";
  if (p.starts) {
    line(paint("verdict: starts" + assumed, "32;1", style));
  } else {
    line(paint("verdict: fails at " + safe(p.failure->phase) + " (" + safe(p.failure->error_class) + ")" + assumed, "31;1", style));
    line("  vLLM would say: " + safe(p.failure->message));
  }
  for (const auto& n : p.notes) line("note: " + safe(n));
  return out;
}

}  // namespace headroom
