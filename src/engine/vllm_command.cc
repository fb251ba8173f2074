// Parsing of vLLM command lines into VllmFlags. Flag names and value forms follow vLLM's
// engine/arg_utils.py (argparse: `--flag value`, `--flag=value`, `--no-flag` for booleans).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_set>

#include "engine/container_command.h"
#include "engine/hf_overrides.h"
#include "engine/vllm_cli_flags.h"
#include "engine/weights.h"
#include "headroom/vllm_config.h"
#include "util/json_file.h"
#include "util/strings.h"

namespace headroom {

namespace {

Error flag_error(const std::string& flag, const std::string& message) {
  return Error{ErrorCode::invalid_argument, message, flag};
}

Result<std::int64_t> parse_int64(const std::string& flag, const std::string& text) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size())
    return tl::unexpected(flag_error(flag, "expected an integer, got '" + text + "'"));
  return v;
}

Result<int> parse_int(const std::string& flag, const std::string& text) {
  auto v = parse_int64(flag, text);
  if (!v) return tl::unexpected(v.error());
  if (*v > 2'000'000'000LL || *v < -2'000'000'000LL)
    return tl::unexpected(flag_error(flag, "value " + text + " is out of range"));
  return static_cast<int>(*v);
}

Result<double> parse_double(const std::string& flag, const std::string& text) {
  try {
    std::size_t used = 0;
    double v = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(v)) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    return tl::unexpected(flag_error(flag, "expected a number, got '" + text + "'"));
  }
}

// --limit-mm-per-prompt as vLLM reads it: JSON ('{"image": 0, "video": 0}'; from v0.11 a modality
// may be an object whose "count" is the limit and whose width/height/num_frames size the dummy
// input, config/multimodal.py ImageDummyOptions / VideoDummyOptions) or the older
// 'image=2,video=1' form. Counts must be non-negative integers, sizes positive ones.
struct MmLimits {
  std::map<std::string, int> counts;
  std::map<std::string, VllmFlags::MmDummySize> sizes;
};

Result<MmLimits> parse_mm_limits(const std::string& flag, const std::string& text) {
  MmLimits out;
  auto bad = [&](const std::string& why) {
    return tl::unexpected(flag_error(flag, why + " in '" + text + "' (expected e.g. '{\"image\": 0, \"video\": 0}')"));
  };
  auto size = [](const nlohmann::json& v, const char* key, int& to) {
    auto it = v.find(key);
    if (it == v.end() || it->is_null()) return true;
    if (!it->is_number_integer() || it->get<std::int64_t>() < 1 || it->get<std::int64_t>() > 1'000'000) return false;
    to = it->get<int>();
    return true;
  };
  if (!text.empty() && text.front() == '{') {
    auto j = util::parse_json(text, flag);
    if (!j || !j->is_object()) return bad("not a JSON object");
    for (const auto& [modality, v] : j->items()) {
      const nlohmann::json* count = &v;
      if (v.is_object()) {
        auto c = v.find("count");
        if (c == v.end()) return bad("no \"count\" for " + modality);
        count = &*c;
        VllmFlags::MmDummySize s;
        if (!size(v, "width", s.width) || !size(v, "height", s.height) || !size(v, "num_frames", s.num_frames))
          return bad("a width, height or num_frames that is not a positive integer up to 1000000 for " + modality);
        if (s.width > 0 || s.height > 0 || s.num_frames > 0) out.sizes[modality] = s;
      }
      if (!count->is_number_integer() || count->get<std::int64_t>() < 0 || count->get<std::int64_t>() > 1'000'000)
        return bad("a count that is not a non-negative integer for " + modality);
      out.counts[modality] = count->get<int>();
    }
    return out;
  }
  for (const auto& part : util::split(text, ',')) {
    auto eq = part.find('=');
    if (eq == std::string::npos) return bad("'" + part + "' is not modality=count");
    auto n = parse_int(flag, util::trim(part.substr(eq + 1)));
    if (!n || *n < 0) return bad("'" + part + "' has no non-negative count");
    out.counts[util::trim(part.substr(0, eq))] = *n;
  }
  return out;
}

// vLLM's human-readable integers (utils/argparse_utils.py): k/m/g/t are powers of 1000,
// K/M/G/T powers of 1024; decimals only with decimal suffixes ("1.5k").
Result<std::int64_t> parse_human_int(const std::string& flag, const std::string& text) {
  if (text.empty()) return tl::unexpected(flag_error(flag, "expected a size, got ''"));
  char suffix = text.back();
  static const std::string k_dec = "kmgt", k_bin = "KMGT";
  auto dec = k_dec.find(suffix), bin = k_bin.find(suffix);
  if (dec == std::string::npos && bin == std::string::npos) return parse_int64(flag, text);
  std::string number = text.substr(0, text.size() - 1);
  if (bin != std::string::npos) {
    auto v = parse_int64(flag, number);
    if (!v) return tl::unexpected(flag_error(flag, "expected an integer before the binary suffix " +
                                                       std::string(1, suffix) + ", got '" + text + "'"));
    const int shift = static_cast<int>(10 * (bin + 1));
    if (*v < 0 || *v > (std::numeric_limits<std::int64_t>::max() >> shift))
      return tl::unexpected(flag_error(flag, "value " + text + " is out of range"));
    return *v << shift;
  }
  auto v = parse_double(flag, number);
  if (!v) return tl::unexpected(flag_error(flag, "expected a size like 8G or 8000m, got '" + text + "'"));
  // Python's int(float(number) * 1000**k) truncates; use long double so 10.2123451234567t stays exact.
  long double scaled = static_cast<long double>(std::stold(number)) * std::pow(1000.0L, static_cast<long double>(dec + 1));
  if (!(scaled > -9.2e18L && scaled < 9.2e18L)) return tl::unexpected(flag_error(flag, "value " + text + " is out of range"));
  return static_cast<std::int64_t>(scaled);
}

Result<bool> parse_bool_value(const std::string& flag, const std::string& text) {
  std::string t = util::to_lower(text);
  if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off") return false;
  return tl::unexpected(flag_error(flag, "expected true or false, got '" + text + "'"));
}

enum class Arity { value, flag };

struct FlagSpec {
  std::vector<std::string> names;
  Arity arity;
  std::function<Result<void>(VllmFlags&, const std::string& flag, const std::string& value)> apply;
};

template <class F>
FlagSpec value_flag(std::vector<std::string> names, F f) {
  return {std::move(names), Arity::value, f};
}

// A flag's value parsed as an int, or kept as text, into one field of VllmFlags.
auto int_into(std::optional<int> VllmFlags::*field) {
  return [field](VllmFlags& f, const std::string& flag, const std::string& v) -> Result<void> {
    auto n = parse_int(flag, v);
    if (!n) return tl::unexpected(n.error());
    f.*field = *n;
    return {};
  };
}

auto string_into(std::optional<std::string> VllmFlags::*field) {
  return [field](VllmFlags& f, const std::string&, const std::string& v) -> Result<void> {
    f.*field = v;
    return {};
  };
}

// The model's config as vLLM overrides it (config/model.py hf_overrides: a dict merged into the
// HF config, transformers_utils/config.py get_config). The older --rope-scaling and --rope-theta
// (engine/arg_utils.py up to their removal) set the same config keys. Later flags win, key by key.
void add_config_override_flags(std::vector<FlagSpec>& t) {
  auto merge = [](VllmFlags& f, const nlohmann::json& patch) {
    nlohmann::json all = f.hf_overrides.empty() ? nlohmann::json::object() : nlohmann::json::parse(f.hf_overrides);
    all.merge_patch(patch);
    f.hf_overrides = all.dump();
  };
  t.push_back(value_flag({"--hf-overrides"}, [merge](VllmFlags& f, const std::string& flag, const std::string& v) -> Result<void> {
    auto j = util::parse_json(v, flag);
    if (!j || !j->is_object())
      return tl::unexpected(flag_error(flag, "expected a JSON object, got '" + v + "' (e.g. '{\"max_position_embeddings\": 131072}')"));
    merge(f, *j);
    return {};
  }));
  t.push_back(value_flag({"--rope-scaling"}, [merge](VllmFlags& f, const std::string& flag, const std::string& v) -> Result<void> {
    auto j = util::parse_json(v, flag);
    if (!j || !j->is_object())
      return tl::unexpected(flag_error(flag, "expected a JSON object, got '" + v + "' (e.g. '{\"rope_type\": \"yarn\", \"factor\": 4.0}')"));
    merge(f, nlohmann::json{{"rope_scaling", *j}});
    return {};
  }));
  t.push_back(value_flag({"--rope-theta"}, [merge](VllmFlags& f, const std::string& flag, const std::string& v) -> Result<void> {
    auto theta = parse_double(flag, v);
    if (!theta) return tl::unexpected(theta.error());
    merge(f, nlohmann::json{{"rope_theta", *theta}});
    return {};
  }));
}

// --compilation-config's CUDA graph keys (config/compilation.py): the capture sizes, the largest
// size of the default list, and the mode. Later objects (and --compilation-config.FIELD values)
// merge key by key; other keys are kept in the JSON for the warning.
Result<void> read_compilation_config(VllmFlags& f, const std::string& flag, const std::string& v) {
  auto given = util::parse_json(v, flag);
  if (!given || !given->is_object())
    return tl::unexpected(flag_error(flag, "expected a JSON object, got '" + v + "' (e.g. '{\"cudagraph_capture_sizes\": [1, 2, 4, 8]}')"));
  auto j = f.compilation_config.empty() ? nlohmann::json::object() : nlohmann::json::parse(f.compilation_config);
  j.merge_patch(*given);
  constexpr int k_max_size = 1 << 16, k_max_sizes = 4096;
  if (auto it = j.find("cudagraph_capture_sizes"); it != j.end() && !it->is_null()) {
    if (!it->is_array() || it->size() > k_max_sizes)
      return tl::unexpected(flag_error(flag, "cudagraph_capture_sizes: expected a list of at most 4096 batch sizes"));
    std::vector<int> sizes;
    for (const auto& s : *it) {
      if (!s.is_number_integer() || s.get<std::int64_t>() < 1 || s.get<std::int64_t>() > k_max_size)
        return tl::unexpected(flag_error(flag, "cudagraph_capture_sizes: expected batch sizes from 1 to 65536, got " + s.dump()));
      sizes.push_back(s.get<int>());
    }
    f.cudagraph_capture_sizes = std::move(sizes);
  }
  if (auto it = j.find("max_cudagraph_capture_size"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < 1 || it->get<std::int64_t>() > k_max_size)
      return tl::unexpected(flag_error(flag, "max_cudagraph_capture_size: expected a batch size from 1 to 65536, got " + it->dump()));
    f.max_cudagraph_capture_size = it->get<int>();
  }
  if (auto it = j.find("cudagraph_mode"); it != j.end() && !it->is_null()) {
    static const char* k_modes[] = {"NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"};
    std::string mode = it->is_string() ? it->get<std::string>() : "";
    std::transform(mode.begin(), mode.end(), mode.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (std::find(std::begin(k_modes), std::end(k_modes), mode) == std::end(k_modes))
      return tl::unexpected(flag_error(flag, "cudagraph_mode: expected NONE, PIECEWISE, FULL, FULL_DECODE_ONLY or "
                                             "FULL_AND_PIECEWISE, got " + it->dump()));
    f.cudagraph_mode = mode;
  }
  f.compilation_config = j.dump();
  return {};
}

// What --compilation-config holds that the prediction does not read: one warning naming the keys.
std::vector<std::string> compilation_config_warnings(const VllmFlags& f) {
  if (f.compilation_config.empty()) return {};
  const auto j = nlohmann::json::parse(f.compilation_config, nullptr, false);
  std::string keys;
  for (const auto& [key, value] : j.items())
    if (key != "cudagraph_capture_sizes" && key != "max_cudagraph_capture_size" && key != "cudagraph_mode")
      keys += (keys.empty() ? "'" : ", '") + key + "'";
  if (keys.empty()) return {};
  return {"--compilation-config: " + keys + " not modelled: only the CUDA graph capture sizes and cudagraph_mode "
          "change the prediction (graphs and FlashInfer's all-reduce fusion otherwise as at vLLM's defaults)"};
}

// Multimodal inputs (config/multimodal.py MultiModalConfig, engine/arg_utils.py) and
// --performance-mode, after the flags of flag_table.
void add_multimodal_flags(std::vector<FlagSpec>& t) {
  t.push_back(value_flag({"--limit-mm-per-prompt"}, [](VllmFlags& f, const std::string& flag, const std::string& v) -> Result<void> {
    auto limits = parse_mm_limits(flag, v);
    if (!limits) return tl::unexpected(limits.error());
    f.limit_mm_per_prompt = std::move(limits->counts);
    f.mm_dummy_sizes = std::move(limits->sizes);
    return {};
  }));
  t.push_back(value_flag({"--mm-encoder-tp-mode"}, [](VllmFlags& f, const std::string& flag, const std::string& v) -> Result<void> {
    if (v != "weights" && v != "data")
      return tl::unexpected(flag_error(flag, "invalid choice: '" + v + "' (choose from 'weights', 'data')"));
    f.mm_encoder_tp_mode = v;
    return {};
  }));
  t.push_back(value_flag({"--performance-mode"}, [](VllmFlags& f, const std::string& flag, const std::string& v) -> Result<void> {
    if (!is_performance_mode(v))
      return tl::unexpected(
          flag_error(flag, "invalid choice: '" + v + "' (choose from 'balanced', 'interactivity', 'throughput')"));
    f.performance_mode = v;
    return {};
  }));
  t.push_back(value_flag({"--mm-processor-kwargs"}, [](VllmFlags& f, const std::string& flag, const std::string& v) -> Result<void> {
    auto j = util::parse_json(v, flag);
    if (!j || !j->is_object()) return tl::unexpected(flag_error(flag, "expected a JSON object, got '" + v + "'"));
    f.mm_processor_kwargs = j->dump();
    return {};
  }));
  add_config_override_flags(t);
  t.push_back(value_flag({"--compilation-config"}, read_compilation_config));
  // The pooling runner (adapters.py _create_pooling_model_cls deletes lm_head): --runner from
  // v0.10.2, --convert beside it, --task before.
  t.push_back(value_flag({"--runner", "--convert", "--task"}, [](VllmFlags& f, const std::string& flag, const std::string& v) -> Result<void> {
    static const char* k_pooling[] = {"pooling", "embed", "embedding", "classify", "score", "reward"};
    const bool pooling = std::find(std::begin(k_pooling), std::end(k_pooling), v) != std::end(k_pooling) &&
                         !(flag == "--runner" && v != "pooling");
    f.pooling_runner = f.pooling_runner || pooling;
    return {};
  }));
  t.push_back({{"--language-model-only"}, Arity::flag,
               [](VllmFlags& f, const std::string&, const std::string& v) -> Result<void> {
                 f.language_model_only = v != "false";
                 return {};
               }});
  t.push_back({{"--disable-chunked-mm-input"}, Arity::flag,
               [](VllmFlags& f, const std::string&, const std::string& v) -> Result<void> {
                 f.disable_chunked_mm_input = v != "false";
                 return {};
               }});
  t.push_back({{"--skip-mm-profiling"}, Arity::flag,
               [](VllmFlags& f, const std::string&, const std::string& v) -> Result<void> {
                 f.skip_mm_profiling = v != "false";
                 return {};
               }});
}

const std::vector<FlagSpec>& flag_table() {
  static const std::vector<FlagSpec> table = [] {
    std::vector<FlagSpec> t;
    t.push_back(value_flag({"--tensor-parallel-size", "-tp"}, int_into(&VllmFlags::tensor_parallel_size)));
    t.push_back(value_flag({"--pipeline-parallel-size", "-pp"}, int_into(&VllmFlags::pipeline_parallel_size)));
    t.push_back(value_flag({"--data-parallel-size", "-dp"}, int_into(&VllmFlags::data_parallel_size)));
    t.push_back(value_flag({"--max-num-seqs"}, int_into(&VllmFlags::max_num_seqs)));
    t.push_back(value_flag({"--block-size"}, int_into(&VllmFlags::block_size)));
    t.push_back(value_flag({"--num-gpu-blocks-override"}, int_into(&VllmFlags::num_gpu_blocks_override)));
    t.push_back(value_flag({"--max-num-batched-tokens"},
                           [](VllmFlags& f, const std::string& flag, const std::string& v) -> Result<void> {
                             auto n = parse_human_int(flag, v);
                             if (!n) return tl::unexpected(n.error());
                             if (*n > 2'000'000'000LL) return tl::unexpected(flag_error(flag, "value " + v + " is out of range"));
                             f.max_num_batched_tokens = static_cast<int>(*n);
                             return {};
                           }));
    t.push_back(value_flag({"--max-model-len"}, [](VllmFlags& f, const std::string& flag, const std::string& v) -> Result<void> {
      if (util::to_lower(v) == "auto" || v == "-1") {
        f.max_model_len_auto = true;
        f.max_model_len.reset();
        return {};
      }
      auto n = parse_human_int(flag, v);
      if (!n) return tl::unexpected(n.error());
      f.max_model_len = *n;
      f.max_model_len_auto = false;
      return {};
    }));
    // v0.31 adds --device-memory-utilization as an alias with the same destination (#56547).
    t.push_back(value_flag({"--gpu-memory-utilization", "--device-memory-utilization"},
                           [](VllmFlags& f, const std::string& flag, const std::string& v) -> Result<void> {
                             auto d = parse_double(flag, v);
                             if (!d) return tl::unexpected(d.error());
                             f.gpu_memory_utilization = *d;
                             return {};
                           }));
    // --cache-dtype is the name v0.28 deprecated in favour of --kv-cache-dtype.
    t.push_back(value_flag({"--kv-cache-dtype", "--cache-dtype"}, string_into(&VllmFlags::kv_cache_dtype)));
    // v0.31 (#56758): a cap on RUNNING requests, separate from max_num_seqs.
    t.push_back(value_flag({"--max-num-active-seqs"}, int_into(&VllmFlags::max_num_active_seqs)));
    t.push_back(value_flag({"--dtype"}, string_into(&VllmFlags::dtype)));
    t.push_back(value_flag({"--quantization", "-q"}, string_into(&VllmFlags::quantization)));
    t.push_back(value_flag({"--kv-cache-memory-bytes", "--kv-cache-memory"},
                           [](VllmFlags& f, const std::string& flag, const std::string& v) -> Result<void> {
                             auto n = parse_human_int(flag, v);
                             if (!n) return tl::unexpected(n.error());
                             f.kv_cache_memory_bytes = *n;
                             return {};
                           }));
    t.push_back(value_flag({"--cpu-offload-gb"}, [](VllmFlags& f, const std::string& flag, const std::string& v) -> Result<void> {
      auto d = parse_double(flag, v);
      if (!d) return tl::unexpected(d.error());
      f.cpu_offload_gb = *d;
      return {};
    }));
    t.push_back({{"--enforce-eager"}, Arity::flag, [](VllmFlags& f, const std::string&, const std::string& v) -> Result<void> {
                   f.enforce_eager = v != "false";
                   return {};
                 }});
    t.push_back({{"--enable-expert-parallel", "-ep"}, Arity::flag,
                 [](VllmFlags& f, const std::string&, const std::string& v) -> Result<void> {
                   f.enable_expert_parallel = v != "false";
                   return {};
                 }});
    t.push_back({{"--enable-prefix-caching"}, Arity::flag,
                 [](VllmFlags& f, const std::string&, const std::string& v) -> Result<void> {
                   f.enable_prefix_caching = v != "false";
                   return {};
                 }});
    t.push_back({{"--enable-chunked-prefill"}, Arity::flag,
                 [](VllmFlags& f, const std::string&, const std::string& v) -> Result<void> {
                   f.enable_chunked_prefill = v != "false";
                   return {};
                 }});
    add_multimodal_flags(t);
    return t;
  }();
  return table;
}

// What an unmodelled flag that does change memory leaves out, so the warning says which way the
// prediction errs: drafter weights and its attention layers in the KV spec, LoRA weight slots,
// encoder profiling, capture sizes, redundant experts (the allocations vLLM's startup makes for them).
const std::vector<std::pair<std::vector<std::string>, std::string>>& unmodelled_table() {
  static const std::vector<std::pair<std::vector<std::string>, std::string>> table = {
      {{"--speculative-config", "--speculative-model", "--num-speculative-tokens", "--speculative-draft-tensor-parallel-size"},
       "the drafter's weights, its KV cache layers and the larger CUDA graph sizes are not counted, so vLLM will find less "
       "KV cache than predicted"},
      {{"--enable-lora", "--max-loras", "--max-lora-rank", "--max-cpu-loras", "--lora-modules", "--lora-dtype",
        "--fully-sharded-loras"},
       "the LoRA weight slots (max_loras x rank per adapted layer) and the LoRA CUDA graphs are not counted, so vLLM will "
       "find less KV cache than predicted"},
      {{"--limit-mm-per-prompt", "--mm-processor-kwargs", "--mm-encoder-tp-mode"},
       "the vision encoder is predicted as with vLLM's default limits"},
      {{"-O", "--cuda-graph-sizes"},
       "CUDA graphs are predicted with vLLM's default capture sizes, and FlashInfer's all-reduce fusion (its workspace at "
       "TP > 1 on NVSwitch boards) as at the default optimization level"},
      {{"--kv-transfer-config", "--kv-offloading-size", "--kv-offloading-backend", "--kv-events-config"},
       "the KV connector's or offloader's buffers are not counted"},
      {{"--enable-eplb", "--eplb-config", "--num-redundant-experts"},
       "redundant experts are not counted, so vLLM will find less KV cache than predicted"},
  };
  return table;
}

std::string unmodelled_consequence(const std::string& name) {
  for (const auto& [names, text] : unmodelled_table())
    if (std::find(names.begin(), names.end(), name) != names.end()) return text;
  return "";
}

// Flags that do not change memory: accepted silently.
const std::unordered_set<std::string>& memory_neutral_value_flags() {
  static const std::unordered_set<std::string> s = {
      "--host", "--port", "--served-model-name", "--api-key", "--tokenizer", "--tokenizer-mode", "--revision",
      "--tokenizer-revision", "--download-dir", "--seed", "--uvicorn-log-level", "--chat-template",
      "--config-format", "--load-format", "--tool-call-parser", "--reasoning-parser", "--root-path",
      "--ssl-keyfile", "--ssl-certfile", "--allowed-origins", "--response-role", "--generation-config",
      "--hf-token", "--log-config-file", "--middleware", "--distributed-executor-backend", "--worker-cls",
      "--max-log-len", "--swap-space", "--code-revision", "--hf-config-path", "--override-generation-config", "--uds"};
  return s;
}

const std::unordered_set<std::string>& memory_neutral_bool_flags() {
  static const std::unordered_set<std::string> s = {
      "--trust-remote-code", "--disable-log-requests", "--disable-log-stats", "--enable-log-requests",
      "--enable-auto-tool-choice", "--disable-frontend-multiprocessing", "--disable-fastapi-docs",
      "--enable-prompt-tokens-details", "--enable-request-id-headers", "--disable-uvicorn-access-log",
      "--headless", "--skip-tokenizer-init", "--enable-server-load-tracking", "--enable-force-include-usage"};
  return s;
}

// Flags that may change memory but are not modelled, which take no value.
const std::unordered_set<std::string>& unmodelled_bool_flags() {
  static const std::unordered_set<std::string> s = {
      "--enable-lora", "--disable-custom-all-reduce", "--enable-eplb", "--disable-hybrid-kv-cache-manager",
      "--disable-sliding-window", "--async-scheduling", "--enable-dbo", "--disable-cascade-attn"};
  return s;
}

const FlagSpec* find_flag(const std::string& name) {
  for (const auto& spec : flag_table()) {
    if (std::find(spec.names.begin(), spec.names.end(), name) != spec.names.end()) return &spec;
  }
  return nullptr;
}

// --attention-config (config/attention.py AttentionConfig) as JSON, or one of its fields as
// --attention-config.FIELD VALUE. Only use_fp4_indexer_cache changes memory; the other fields
// (backends, kernel switches) are named in a warning.
Result<void> apply_attention_config(VllmCommand& cmd, const std::string& field, const nlohmann::json& value) {
  if (field == "use_fp4_indexer_cache" || field == "use-fp4-indexer-cache") {
    if (value.is_boolean()) {
      cmd.flags.use_fp4_indexer_cache = value.get<bool>();
      return {};
    }
    if (value.is_string()) {
      auto b = parse_bool_value("--attention-config.use_fp4_indexer_cache", value.get<std::string>());
      if (!b) return tl::unexpected(b.error());
      cmd.flags.use_fp4_indexer_cache = *b;
      return {};
    }
    return tl::unexpected(flag_error("--attention-config.use_fp4_indexer_cache",
                                     "expected true or false, got " + value.dump()));
  }
  cmd.warnings.push_back("vLLM attention_config." + field + " is not modelled; the prediction ignores it");
  return {};
}

// A Python dict literal as LLM(attention_config={'use_fp4_indexer_cache': True}) writes it, as
// JSON: single quotes become double quotes, True/False/None their JSON words (outside strings).
std::string python_literal_as_json(const std::string& text) {
  std::string out;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quote) {
      if (ch == '\\' && i + 1 < text.size()) {
        out += ch;
        out += text[++i];
        continue;
      }
      if (ch == quote) {
        quote = 0;
        out += '"';
      } else if (ch == '"') {
        out += "\\\"";
      } else {
        out += ch;
      }
      continue;
    }
    if (ch == '\'' || ch == '"') {
      quote = ch;
      out += '"';
      continue;
    }
    auto word_at = [&](std::string_view w) {
      if (text.compare(i, w.size(), w) != 0) return false;
      const bool before = i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_');
      const std::size_t end = i + w.size();
      const bool after = end >= text.size() || !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_');
      return before && after;
    };
    if (word_at("True")) out += "true", i += 3;
    else if (word_at("False")) out += "false", i += 4;
    else if (word_at("None")) out += "null", i += 3;
    else out += ch;
  }
  return out;
}

bool looks_like_flag(const std::string& s) {
  if (s.size() < 2 || s[0] != '-') return false;
  // Negative numbers are values, not flags.
  return !(std::isdigit(static_cast<unsigned char>(s[1])) || s[1] == '.');
}

bool is_env_assignment(const std::string& s) {
  auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0 || s[0] == '-') return false;
  return std::all_of(s.begin(), s.begin() + static_cast<long>(eq),
                     [](char c) { return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'; });
}

// Every flag name headroom knows (modelled, memory-neutral or unmodelled), sorted, for "did you
// mean"; built once.
const std::vector<std::string>& known_flag_names() {
  static const std::vector<std::string> k_names = [] {
    std::vector<std::string> out = {"--model", "--attention-config", "--config"};
    for (const auto& spec : flag_table())
      for (const auto& n : spec.names)
        if (n.starts_with("--")) out.push_back(n);
    for (const auto* set : {&memory_neutral_value_flags(), &memory_neutral_bool_flags(), &unmodelled_bool_flags()})
      out.insert(out.end(), set->begin(), set->end());
    for (const auto& [names, text] : unmodelled_table())
      for (const auto& n : names)
        if (n.starts_with("--")) out.push_back(n);
    std::sort(out.begin(), out.end());
    return out;
  }();
  return k_names;
}

// The warning for a flag the table does not model (a real vLLM flag, or a name too far from any
// flag to be a typo): the prediction ignores it, and says which way it errs when the table knows.
std::string unmodelled_warning(const std::string& name, const std::string& shown) {
  const std::string consequence = unmodelled_consequence(name);
  return "vLLM flag " + shown + " is not modelled; the prediction ignores it" + (consequence.empty() ? "" : ": " + consequence);
}

// A long name that neither headroom's tables nor vLLM's flag list know, within two edits of a flag:
// a typo, which vLLM's argparse refuses ("unrecognized arguments"). Returns the nearest flag, or "".
std::string typo_of(const std::string& name) {
  if (!name.starts_with("--") || engine::vllm_accepts_flag(name)) return "";
  const auto& known = known_flag_names();
  if (std::binary_search(known.begin(), known.end(), name)) return "";
  static const engine::FlagNames k_candidates(known);
  return k_candidates.nearest(name);
}

}  // namespace

Result<bool> apply_vllm_env(VllmFlags& flags, const std::string& name, const std::string& value) {
  // envs.py: these read "1"/"0" (or true/false); the backend is a name.
  if (name == "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS" || name == "VLLM_USE_V1" || name == "VLLM_ALLOW_LONG_MAX_MODEL_LEN" ||
      name == "VLLM_USE_FLASHINFER_SAMPLER" || name == "VLLM_USE_V2_MODEL_RUNNER" || name == "VLLM_ROCM_MOE_PADDING" ||
      name == "VLLM_ROCM_USE_AITER") {
    auto b = parse_bool_value(name, value);
    if (!b) return tl::unexpected(b.error());
    if (name == "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS") flags.estimate_cuda_graphs = *b;
    else if (name == "VLLM_USE_V1") flags.use_v1_engine = *b;
    else if (name == "VLLM_USE_FLASHINFER_SAMPLER") flags.use_flashinfer_sampler = *b;
    else if (name == "VLLM_USE_V2_MODEL_RUNNER") flags.use_v2_model_runner = *b;
    else if (name == "VLLM_ROCM_MOE_PADDING") flags.rocm_moe_padding = *b;
    else if (name == "VLLM_ROCM_USE_AITER") flags.rocm_use_aiter = *b;
    else flags.allow_long_max_model_len = *b;
    return true;
  }
  if (name == "VLLM_ATTENTION_BACKEND") {
    flags.attention_backend = value;
    return true;
  }
  if (name == "VLLM_PP_LAYER_PARTITION") {
    flags.pp_layer_partition = value;  // read (and refused when malformed) as get_pp_indices reads it
    return true;
  }
  return false;
}

Result<Bytes> parse_human_bytes(const std::string& text) { return parse_human_int("--kv-cache-memory-bytes", text); }

namespace {

// One pass over a vLLM command line. Each step takes the words from `i` on and leaves `i` after
// what it consumed; parse_vllm_command lists the steps in the order the words come.
struct CommandParser {
  VllmCommand cmd;
  std::vector<std::string> args;
  std::size_t i = 0;
  std::size_t config_end = 0;  // words before this index came from a --config file
  bool model_from_config = false;

  // `VAR=value ...` and `env VAR=value ...` before the command.
  Result<void> read_env_assignments() {
    auto assignments = [&]() -> Result<void> {
      while (i < args.size() && is_env_assignment(args[i])) {
        auto eq = args[i].find('=');
        auto r = apply_vllm_env(cmd.flags, args[i].substr(0, eq), args[i].substr(eq + 1));
        if (!r) return tl::unexpected(r.error());
        ++i;
      }
      return {};
    };
    if (auto r = assignments(); !r) return r;
    // `env VAR=value vllm ...` reads the same.
    if (i < args.size() && args[i] == "env") {
      ++i;
      return assignments();
    }
    return {};
  }

  // Command prefixes: `vllm serve`, `python[3] -m vllm.entrypoints.openai.api_server`.
  void skip_command_prefix() {
    if (i < args.size() && (args[i] == "vllm" || args[i].ends_with("/vllm"))) {
      ++i;
      if (i < args.size() && args[i] == "serve") ++i;
    } else if (i < args.size() && (args[i].starts_with("python"))) {
      ++i;
      if (i + 1 < args.size() && args[i] == "-m") {
        std::string module = args[i + 1];
        if (module.find("offline") != std::string::npos) cmd.flags.usage_context = UsageContext::llm_class;
        i += 2;
      }
    }
  }

  // --config FILE.yaml: its flags go before the command line's, which win (argparse_utils.py).
  Result<void> expand_config_file() {
    config_end = i;
    for (std::size_t k = i; k < args.size(); ++k) {
      std::string path;
      std::size_t drop = 0;
      if (args[k] == "--config" && k + 1 < args.size()) {
        path = args[k + 1];
        drop = 2;
      } else if (args[k].starts_with("--config=")) {
        path = args[k].substr(9);
        drop = 1;
      } else if (args[k] == "--config") {
        return make_error(ErrorCode::invalid_argument, "expected a YAML file after --config", "--config");
      } else {
        continue;
      }
      auto text = util::read_file(path);
      if (!text) return tl::unexpected(text.error());
      auto file_args = config_file_args(*text, path);
      if (!file_args) return tl::unexpected(file_args.error());
      args.erase(args.begin() + static_cast<long>(k), args.begin() + static_cast<long>(k + drop));
      args.insert(args.begin() + static_cast<long>(i), file_args->begin(), file_args->end());
      config_end = i + file_args->size();
      break;
    }
    return {};
  }

  // A word that is not a flag: the model, once.
  Result<void> positional(const std::string& arg) {
    if (cmd.model.empty() || model_from_config) {
      cmd.model = arg;  // a positional model wins over a config file's `model:`
      model_from_config = false;
      return {};
    }
    return make_error(ErrorCode::invalid_argument, "unexpected argument '" + arg + "' (the model is already '" + cmd.model + "')");
  }

  Result<void> model_flag(const std::string& value_in, bool has_inline_value) {
    std::string value = value_in;
    if (!has_inline_value) {
      if (i + 1 >= args.size()) return make_error(ErrorCode::invalid_argument, "expected a model after --model", "--model");
      value = args[++i];
    }
    cmd.model = value;
    model_from_config = i < config_end;
    return {};
  }

  // --compilation-config.FIELD VALUE (FlexibleArgumentParser's dotted form): the field merged into
  // the compilation config as JSON, or as text when it is not JSON (cudagraph_mode NONE).
  Result<void> compilation_config_field(const std::string& arg, const std::string& name, std::string value,
                                        bool has_inline_value) {
    if (!has_inline_value) {
      if (i + 1 >= args.size() || looks_like_flag(args[i + 1]))
        return make_error(ErrorCode::invalid_argument, "expected a value", name);
      value = args[++i];
    }
    std::string field = arg.substr(std::string("--compilation-config.").size());
    if (auto eq = field.find('='); eq != std::string::npos) field = field.substr(0, eq);
    std::replace(field.begin(), field.end(), '-', '_');
    auto parsed = util::parse_json(value, name);  // depth-limited
    // The field and a value that is not JSON are raw bytes: invalid UTF-8 is replaced, not thrown on.
    const nlohmann::json object{{field, parsed ? *parsed : nlohmann::json(value)}};
    return read_compilation_config(cmd.flags, "--compilation-config",
                                   object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }

  Result<void> attention_config(const std::string& arg, const std::string& name, std::string value, bool has_inline_value) {
    const bool dotted = name.size() > std::string("--attention-config").size();
    if (!has_inline_value) {
      if (i + 1 < args.size() && !looks_like_flag(args[i + 1])) value = args[++i];
      else if (dotted) value = "true";  // a bare boolean field
      else return make_error(ErrorCode::invalid_argument, "expected a JSON object", name);
    }
    if (dotted) {
      // The field keeps vLLM's spelling: underscores (the dashes come from the flag normalisation).
      std::string field = arg.substr(std::string("--attention-config.").size());
      if (auto eq = field.find('='); eq != std::string::npos) field = field.substr(0, eq);
      std::replace(field.begin(), field.end(), '-', '_');
      auto parsed = util::parse_json(value, name);  // depth-limited: a hostile value gets an error, not a deep recursion
      return apply_attention_config(cmd, field, parsed ? *parsed : nlohmann::json(value));
    }
    auto parsed = util::parse_json(value, name);
    if (!parsed) parsed = util::parse_json(python_literal_as_json(value), name);
    if (!parsed || !parsed->is_object())
      return make_error(ErrorCode::invalid_argument,
                        "expected a JSON object such as '{\"use_fp4_indexer_cache\": true}', got '" + value + "'", name);
    for (const auto& [field, v] : parsed->items()) {
      auto r = apply_attention_config(cmd, field, v);
      if (!r) return tl::unexpected(r.error());
    }
    return {};
  }

  // A flag of the table (flag_table): booleans with --no-X and --X=true|false, values inline or next.
  Result<bool> table_flag(const std::string& name, std::string value, bool has_inline_value) {
    bool negated = false;
    const FlagSpec* spec = find_flag(name);
    if (spec == nullptr && name.starts_with("--no-")) {
      spec = find_flag("--" + name.substr(5));
      negated = spec != nullptr && spec->arity == Arity::flag;
      if (!negated) spec = nullptr;
    }
    if (spec == nullptr) return false;
    if (spec->arity == Arity::flag) {
      std::string v = negated ? "false" : "true";
      if (has_inline_value) {
        auto b = parse_bool_value(name, value);
        if (!b) return tl::unexpected(b.error());
        v = (*b != negated) ? "true" : "false";
      }
      if (auto r = spec->apply(cmd.flags, name, v); !r) return tl::unexpected(r.error());
      return true;
    }
    if (!has_inline_value) {
      if (i + 1 >= args.size() || (looks_like_flag(args[i + 1]) && args[i + 1] != "-1"))
        return make_error(ErrorCode::invalid_argument, "expected a value", name);
      value = args[++i];
    }
    if (auto r = spec->apply(cmd.flags, name, value); !r) return tl::unexpected(r.error());
    return true;
  }

  // Not modelled. Memory-neutral flags are accepted silently; a typo of a flag is kept for the
  // startup checks (vLLM refuses it); the rest get a warning.
  void unmodelled_flag(const std::string& name, std::string value, bool has_inline_value) {
    bool takes_value = !memory_neutral_bool_flags().count(name) && !unmodelled_bool_flags().count(name) &&
                       (memory_neutral_value_flags().count(name) ||
                        (i + 1 < args.size() && !looks_like_flag(args[i + 1])));
    std::string shown = name;
    if (takes_value && !has_inline_value && i + 1 < args.size()) value = args[++i], shown += " " + value;
    else if (has_inline_value) shown += "=" + value;
    if (name == "--revision") cmd.revision = value;  // which Hub revision the model is read at
    if (memory_neutral_value_flags().count(name) || memory_neutral_bool_flags().count(name)) return;
    if (auto suggestion = typo_of(name); !suggestion.empty()) {
      cmd.flags.unrecognized_flags.push_back(UnrecognizedFlag{name, shown, suggestion});
      return;
    }
    cmd.warnings.push_back(unmodelled_warning(name, shown));
  }

  // One word from `i`: a positional, --model, --attention-config[.FIELD], a table flag or another.
  Result<void> word() {
    const std::string arg = args[i];
    if (!looks_like_flag(arg)) return positional(arg);
    std::string name = arg, value;
    bool has_inline_value = false;
    // argparse splits `--flag=value`, and `-tp=2` for the short names too.
    if (auto eq = arg.find('=');
        eq != std::string::npos && (arg.starts_with("--") || (arg.starts_with("-") && find_flag(arg.substr(0, eq)) != nullptr))) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_inline_value = true;
    }
    // vLLM accepts underscores in flag names too.
    if (name.starts_with("--")) std::replace(name.begin() + 2, name.end(), '_', '-');
    if (name == "--model") return model_flag(value, has_inline_value);
    if (name == "--attention-config" || name.starts_with("--attention-config."))
      return attention_config(arg, name, value, has_inline_value);
    if (name.starts_with("--compilation-config.")) return compilation_config_field(arg, name, value, has_inline_value);
    auto known = table_flag(name, value, has_inline_value);
    if (!known) return tl::unexpected(known.error());
    if (!*known) unmodelled_flag(name, value, has_inline_value);
    return {};
  }
};

}  // namespace

Result<VllmCommand> parse_vllm_command(const std::vector<std::string>& args_in) {
  CommandParser p;
  auto unwrapped = unwrap_container_command(args_in);  // `docker run ... IMAGE ARGS`: the vLLM command it runs
  if (!unwrapped) return tl::unexpected(unwrapped.error());
  p.args = std::move(*unwrapped);
  if (auto r = p.read_env_assignments(); !r) return tl::unexpected(r.error());
  p.skip_command_prefix();
  if (auto r = p.expand_config_file(); !r) return tl::unexpected(r.error());
  for (; p.i < p.args.size(); ++p.i)
    if (auto r = p.word(); !r) return tl::unexpected(r.error());
  for (auto& warning : engine::hf_override_warnings(p.cmd.flags)) p.cmd.warnings.push_back(std::move(warning));
  for (auto& warning : compilation_config_warnings(p.cmd.flags)) p.cmd.warnings.push_back(std::move(warning));
  return std::move(p.cmd);
}

bool is_performance_mode(std::string_view mode) {
  return mode == "balanced" || mode == "interactivity" || mode == "throughput";
}

std::string limit_mm_per_prompt_json(const VllmFlags& flags) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [modality, count] : flags.limit_mm_per_prompt) {
    auto size = flags.mm_dummy_sizes.find(modality);
    if (size == flags.mm_dummy_sizes.end()) {
      j[modality] = count;
      continue;
    }
    nlohmann::json item = {{"count", count}};
    if (size->second.width > 0) item["width"] = size->second.width;
    if (size->second.height > 0) item["height"] = size->second.height;
    if (size->second.num_frames > 0) item["num_frames"] = size->second.num_frames;
    j[modality] = item;
  }
  return j.dump();
}

}  // namespace headroom
