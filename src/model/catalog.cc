// The built-in catalogue (data/models.jsonl): one line per Hugging Face id with the architecture
// facts of its config.json in a flattened form (moe / mla / hybrid / attention_layout summaries).
// A line is turned back into a config.json-shaped object and read by parse_model_config, so both
// paths share one set of rules.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <regex>

#include "model/model_internal.h"
#include "util/embedded_data.h"
#include "util/json_file.h"
#include "util/json_members.h"
#include "util/strings.h"

namespace headroom {

namespace {

using nlohmann::json;

// The lines of an embedded JSON Lines file with their hf_id, found without parsing the lines
// (util::object_members): a line is parsed the first time it is looked up, so a check pays for
// the one line it reads rather than for the whole file.
class LinesById {
 public:
  explicit LinesById(const char* file) : m_file(file) {
    auto text = embedded::find(file);
    if (!text) return;
    for (std::string_view rest = *text; !rest.empty();) {
      const std::size_t end = rest.find('\n');
      const std::string_view line = rest.substr(0, end);
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      m_lines.emplace_back(id_of(line, m_decoded), line);
    }
  }

  // The first parsable line whose hf_id equals `id` (any case) and, when `payload` is given,
  // whose `payload` member is an object; nullptr when there is none.
  const json* find(std::string_view id, const char* payload = nullptr) const {
    for (const Line& line : m_lines) {
      if (!util::iequals(line.id, id)) continue;
      std::call_once(line.once, [&] {
        auto parsed = util::parse_json(line.text, m_file);
        if (parsed && parsed->is_object()) line.parsed = std::move(*parsed);
      });
      if (line.parsed && (payload == nullptr || (line.parsed->contains(payload) && (*line.parsed)[payload].is_object())))
        return &*line.parsed;
    }
    return nullptr;
  }

  std::vector<std::string> ids() const {
    std::vector<std::string> out;
    for (const Line& line : m_lines)
      if (!line.id.empty()) out.emplace_back(line.id);
    return out;
  }

 private:
  struct Line {
    Line(std::string_view i, std::string_view t) : id(i), text(t) {}
    std::string_view id;  // "" when the line has no string hf_id
    std::string_view text;
    mutable std::once_flag once;
    mutable std::optional<json> parsed;
  };

  // The top-level "hf_id" member's string; "" when absent, not a string, or the line is not an object.
  // A view of the line, or of `decoded` for an id written with escapes.
  static std::string_view id_of(std::string_view line, std::deque<std::string>& decoded) {
    // The catalogue writes hf_id first, without escapes: read it without scanning the line's other
    // members (most of what indexing the catalogue cost a check). Any other line is scanned.
    constexpr std::string_view k_lead = "{\"hf_id\": \"";
    if (line.starts_with(k_lead)) {
      const std::string_view rest = line.substr(k_lead.size());
      const std::size_t quote = rest.find('"');
      if (quote != std::string_view::npos && rest.substr(0, quote).find('\\') == std::string_view::npos)
        return rest.substr(0, quote);
    }
    auto members = util::object_members(line);
    if (!members) return {};
    for (const auto& m : *members) {
      if (m.name != "hf_id") continue;
      auto value = util::parse_json(m.value, "hf_id");
      return value && value->is_string() ? std::string_view(decoded.emplace_back(value->get<std::string>()))
                                         : std::string_view();
    }
    return {};
  }

  const char* m_file;
  std::deque<Line> m_lines;           // a deque: Line holds a once_flag and never moves
  std::deque<std::string> m_decoded;  // ids written with escapes, decoded; never move either
};

const LinesById& catalog_lines() {
  static const LinesById k_lines("models.jsonl");
  return k_lines;
}

// data/vision_towers.jsonl: vision_config facts for catalogue lines whose source left the vision
// encoder out or cut it short (each line names where its sizes come from).
const json* vision_supplement(const std::string& hf_id) {
  static const LinesById k_lines("vision_towers.jsonl");
  return k_lines.find(hf_id, "vision");
}

// data/config_supplements.jsonl: config.json facts, in config.json's own shape, for catalogue
// lines whose source was cut short or captured no config at all; each line names its sources.
// They only fill what the catalogue line leaves out.
const json* config_supplement(const std::string& hf_id) {
  static const LinesById k_lines("config_supplements.jsonl");
  return k_lines.find(hf_id, "config");
}

// Copies into `into` what `from` has and `into` lacks (null counts as lacking), object by object.
void fill_missing(json& into, const json& from) {
  for (const auto& [k, v] : from.items()) {
    auto it = into.find(k);
    if (it == into.end() || it->is_null()) into[k] = v;
    else if (it->is_object() && v.is_object()) fill_missing(*it, v);
  }
}

bool is_null_or_missing(const json& line, const char* key) {
  auto it = line.find(key);
  return it == line.end() || it->is_null();
}

// "671B total / 37B activated", "1.23B", "13B" → a count; nullopt when the text has no number.
std::optional<std::int64_t> parse_param_count(const json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string s = v.get<std::string>();
  std::size_t used = 0;
  double x = 0;
  try {
    x = std::stod(s, &used);
  } catch (...) {
    return std::nullopt;
  }
  if (used >= s.size()) return std::nullopt;
  char unit = s[used];
  double scale = unit == 'B' ? 1e9 : unit == 'M' ? 1e6 : unit == 'T' ? 1e12 : 0;
  if (scale == 0) return std::nullopt;
  return static_cast<std::int64_t>(std::llround(x * scale));
}

// Tier-I lines carry only a note ("FP8 per repo name"): the id's naming convention is the best
// hint of the scheme, so the method is taken from it (and marked a guess by catalog_model). The
// org decides between exporters that write the same name differently, as the catalogue's notes on
// their sibling checkpoints record: nvidia/* are ModelOpt (hf_quant_config.json), RedHatAI and
// neuralmagic use llm-compressor (compressed-tensors), Qwen's FP8 exports write fp8 with 128x128
// weight blocks, Qwen's AWQ exports leave the vision tower ("visual") unquantized. A line that
// holds part of the repo's quantization_config (a stored page that stops inside it) but not its
// quant_method is compressed-tensors where that part has config_groups: only compressed-tensors
// writes that key (vLLM's CompressedTensorsConfig.from_config reads it; fp8, awq, gptq and
// ModelOpt configs have none).
}  // namespace

void model_detail::infer_quant_from_id(std::string_view id, json& q) {
  std::string lid = util::to_lower(id);
  auto has = [&](const char* s) { return lid.find(s) != std::string::npos; };
  // A format a partly read config gives is kept.
  auto set_default = [&](const char* key, const char* value) {
    if (!q.contains(key)) q[key] = value;
  };
  const bool nvidia = lid.starts_with("nvidia/");
  const bool llm_compressor =
      lid.starts_with("redhatai/") || lid.starts_with("neuralmagic/") || (q.is_object() && q.contains("config_groups"));
  if (has("nvfp4")) {
    if (nvidia) {
      q["quant_method"] = "modelopt";
      q["quant_algo"] = "NVFP4";
    } else {
      q["quant_method"] = "compressed-tensors";
      set_default("format", "nvfp4-pack-quantized");
    }
    q["bits"] = 4;
    q["group_size"] = 16;
  } else if (has("mxfp4")) {
    q["quant_method"] = "mxfp4";
  } else if (has("fp8")) {
    if (nvidia) {
      q["quant_method"] = "modelopt";
      q["quant_algo"] = "FP8";
    } else if (llm_compressor) {
      q["quant_method"] = "compressed-tensors";
      set_default("format", "float-quantized");
      q["bits"] = 8;
    } else {
      q["quant_method"] = "fp8";
      if (lid.starts_with("qwen/")) q["weight_block_size"] = json::array({128, 128});
    }
  } else if (has("w8a8")) {
    q["quant_method"] = "compressed-tensors";
    set_default("format", "int-quantized");
    q["bits"] = 8;
  } else if (has("w4a16")) {
    q["quant_method"] = "compressed-tensors";
    q["bits"] = 4;
    q["group_size"] = 128;
    set_default("format", "pack-quantized");
  } else if (has("awq")) {
    q["quant_method"] = "awq";
    if (lid.starts_with("qwen/") && has("-vl-")) q["modules_to_not_convert"] = json::array({"visual"});
  } else if (has("gptq")) {
    q["quant_method"] = "gptq";
  } else if (has("bnb-4bit") || has("bnb-8bit")) {
    q["quant_method"] = "bitsandbytes";
    q[has("bnb-4bit") ? "load_in_4bit" : "load_in_8bit"] = true;
  }
  if ((has("awq") || has("gptq")) && (has("int8") || has("8bit")) && !q.contains("bits")) q["bits"] = 8;  // GPTQ-Int8
  if ((has("awq") || has("gptq") || has("int4")) && !q.contains("bits")) q["bits"] = 4;
  if ((has("awq") || has("gptq")) && !q.contains("group_size")) q["group_size"] = 128;
}

namespace {

// Whether a catalogue line's quantization method is read (quant_method or an hf_quant_config
// summary) rather than inferred from its id.
bool quantization_read(const json& line) {
  if (is_null_or_missing(line, "quantization_config") || !line["quantization_config"].is_object()) return true;
  const json& q = line["quantization_config"];
  return (q.contains("quant_method") && !q["quant_method"].is_null()) ||
         (q.contains("hf_quant_config") && q["hf_quant_config"].is_object());
}

// The model source shown for a line whose architecture was copied from another checkpoint's line
// (tier I: a quantized repo's base; tier H: a sibling or an unattributed copy), as its
// source_description names it.
}  // namespace

std::string model_detail::copied_architecture_note(const json& line) {
  const std::string quality = line.value("source_quality", "");
  const bool inherited = quality.rfind("architecture inherited", 0) == 0;
  const bool unconfirmed = quality.rfind("UNCONFIRMED", 0) == 0;
  if (!inherited && !unconfirmed) return "";
  static const std::regex k_from(
      R"((?:catalogue (?:entry|line)|base model's config,|sibling|copy of the base config:)\s+([A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9]))");
  const std::string desc = line.value("source_description", "");
  std::smatch m;
  std::string from = std::regex_search(desc, m, k_from) ? m[1].str() : "";
  if (inherited)
    return "architecture copied from " + (from.empty() ? std::string("its base model") : from) +
           "; this repo's own config.json was not read";
  return "architecture from another checkpoint's config" + (from.empty() ? std::string() : " (" + from + ")") +
         ", attribution unconfirmed";
}

namespace {

// The catalogue summarises two per-layer lists as counts; they are expanded back into lists.
// - DeepSeek-V4 compress_ratios {"0": 3, "4": 21, "128": 20} over 44 entries (43 layers + MTP).
//   The order is not recorded; the expansion follows the published configs and the V4 report:
//   the MTP placeholder is the trailing 0, the other zeros (sliding-window-only layers) lead,
//   surplus ratio-128 layers lead after them (V4-Pro: "first 2 layers HCA"), and the rest alternate
//   4, 128, …, 4 (V4-Flash: [0, 0, 4, 128, 4, …, 4, 0]).
// - GLM-5.2 indexer_types from indexer_types_indices_of_full: those layers are "full", the others
//   "shared".
void expand_summaries(const json& line, json& text) {
  const json* mla = line.contains("mla") && line["mla"].is_object() ? &line["mla"] : nullptr;
  if (mla && mla->contains("compress_ratios_counts") && (*mla)["compress_ratios_counts"].is_object()) {
    std::map<int, int> left;
    for (const auto& [k, v] : (*mla)["compress_ratios_counts"].items())
      if (v.is_number_integer()) left[std::atoi(k.c_str())] = v.get<int>();
    int total = 0;
    for (const auto& [r, n] : left) total += std::max(0, n);
    const bool mtp_slot = line.contains("num_hidden_layers") && line["num_hidden_layers"].is_number_integer() &&
                          total == line["num_hidden_layers"].get<int>() + 1 && left[0] > 0;
    if (mtp_slot) --left[0];
    json ratios = json::array();
    for (; left[0] > 0; --left[0]) ratios.push_back(0);
    for (; left[1] > 0; --left[1]) ratios.push_back(1);
    for (int lead = left[128] - left[4] + 1; lead > 0 && left[128] > 0; --lead, --left[128]) ratios.push_back(128);
    while (left[4] > 0 || left[128] > 0) {
      if (left[4] > 0 && left[4]-- > 0) ratios.push_back(4);
      if (left[128] > 0 && left[128]-- > 0) ratios.push_back(128);
    }
    for (const auto& [r, n] : left)
      for (int i = 0; i < n; ++i) ratios.push_back(r);
    if (mtp_slot) ratios.push_back(0);
    text["compress_ratios"] = ratios;
  }
  // Nemotron-3 written as layers_block_type (counts only here): a hybrid_override_pattern with the
  // same counts, attention layers spread evenly, Mamba and MoE alternating. vLLM takes the layer
  // count from the list's length.
  const json* hybrid = line.contains("hybrid") && line["hybrid"].is_object() ? &line["hybrid"] : nullptr;
  if (hybrid && hybrid->contains("layers_block_type_counts") && (*hybrid)["layers_block_type_counts"].is_object() &&
      hybrid->contains("layers_block_type_len") && (*hybrid)["layers_block_type_len"].is_number_integer()) {
    const json& c = (*hybrid)["layers_block_type_counts"];
    const int n = (*hybrid)["layers_block_type_len"].get<int>();
    auto count = [&](const char* k) { return c.contains(k) && c[k].is_number_integer() ? c[k].get<int>() : 0; };
    const int attention = count("attention"), mamba = count("mamba"), moe = count("moe"), mlp = count("mlp");
    if (n > 0 && attention + mamba + moe + mlp == n) {
      std::string pattern(static_cast<std::size_t>(n), ' ');
      for (int k = 0; k < attention; ++k) pattern[static_cast<std::size_t>((2 * k + 1) * n / (2 * attention))] = '*';
      int left_m = mamba, left_e = moe, left_d = mlp;
      bool mamba_next = true;
      for (auto& ch : pattern) {
        if (ch == '*') continue;
        if ((mamba_next && left_m > 0) || (left_e == 0 && left_d == 0)) ch = 'M', --left_m;
        else if (left_e > 0) ch = 'E', --left_e;
        else ch = '-', --left_d;
        mamba_next = !mamba_next;
      }
      text["hybrid_override_pattern"] = pattern;
      if (!text.contains("num_hidden_layers")) text["num_hidden_layers"] = n;
    }
  }
  const json* layout = line.contains("attention_layout") && line["attention_layout"].is_object() ? &line["attention_layout"] : nullptr;
  if (layout && layout->contains("indexer_types_indices_of_full") && line["num_hidden_layers"].is_number_integer()) {
    json types = json::array();
    for (int i = 0; i < line["num_hidden_layers"].get<int>(); ++i) types.push_back("shared");
    for (const auto& idx : (*layout)["indexer_types_indices_of_full"])
      if (idx.is_number_integer() && idx.get<int>() >= 0 && idx.get<std::size_t>() < types.size()) types[idx.get<std::size_t>()] = "full";
    text["indexer_types"] = types;
  }
}

// Catalogue line → config.json-shaped object.
json to_config(const json& line) {
  static const char* k_text_keys[] = {"num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads",
                                      "num_key_value_heads", "head_dim", "vocab_size", "max_position_embeddings",
                                      "rope_theta", "rope_scaling", "sliding_window", "tie_word_embeddings",
                                      "hidden_size_per_layer_input", "vocab_size_per_layer_input", "use_double_wide_mlp"};
  json text = json::object();
  for (const char* k : k_text_keys)
    if (!is_null_or_missing(line, k)) text[k] = line[k];
  // The Gemma 4 lines do not carry use_bidirectional_attention. The released configs without
  // per-layer embeddings (31B, 26B-A4B) set it to "vision", which vLLM reads as a multimodal
  // prefix-LM (Gemma4ModelArchConfigConvertor.is_mm_prefix_lm); E2B and E4B leave it unset.
  if (line["architecture"].is_string() && line["architecture"].get<std::string>() == "Gemma4ForConditionalGeneration" &&
      is_null_or_missing(line, "hidden_size_per_layer_input"))
    text["use_bidirectional_attention"] = "vision";

  // A null num_key_value_heads means the config does not write it (MHA for Llama-2-style
  // models), unless a cross-check source states the count (Falcon: 1 for 7B, 8 for 40B).
  if (is_null_or_missing(line, "num_key_value_heads") && line.contains("cross_checks") && line["cross_checks"].is_array()) {
    for (const auto& c : line["cross_checks"]) {
      auto v = c.find("values");
      if (v != c.end() && v->is_object() && v->contains("num_key_value_heads") && (*v)["num_key_value_heads"].is_number_integer()) {
        text["num_key_value_heads"] = (*v)["num_key_value_heads"];
        break;
      }
    }
  }
  for (const char* group : {"moe", "mla", "hybrid"}) {
    if (is_null_or_missing(line, group) || !line[group].is_object()) continue;
    for (const auto& [k, v] : line[group].items()) {
      if (v.is_null() || k == "kind" || k == "pattern_counts" || k == "pattern_legend" || k.ends_with("_counts") ||
          k.ends_with("_len") || k.starts_with("mtp_"))
        continue;
      text[k] = v;
    }
  }
  expand_summaries(line, text);
  if (!is_null_or_missing(line, "attention_layout") && line["attention_layout"].is_object()) {
    for (const auto& [k, v] : line["attention_layout"].items()) {
      if (k == "layer_types_period" && v.is_array() && !v.empty() && line["num_hidden_layers"].is_number_integer()) {
        // gpt-oss / Gemma 4 store one period of layer_types; repeat it over the layers.
        json types = json::array();
        int n = line["num_hidden_layers"].get<int>();
        for (int i = 0; i < n; ++i) types.push_back(v[static_cast<std::size_t>(i) % v.size()]);
        text["layer_types"] = types;
      } else if (k == "layer_types" && !v.is_array()) {
        continue;  // a prose description (Qwen3-Next), not the list
      } else if (!k.ends_with("_counts") && k != "rope_parameters" && !k.starts_with("indexer_types_indices")) {
        text[k] = v;
      }
    }
  }

  json config = json::object();
  if (line["architecture"].is_string()) config["architectures"] = json::array({line["architecture"]});
  if (line["torch_dtype"].is_string()) config["torch_dtype"] = line["torch_dtype"];
  if (!is_null_or_missing(line, "quantization_config")) {
    json q = line["quantization_config"];
    if ((!q.contains("quant_method") || q["quant_method"].is_null()) && q.contains("hf_quant_config") &&
        q["hf_quant_config"].is_object()) {
      // ModelOpt exports (nvidia/*-FP8, *-NVFP4) keep their scheme in hf_quant_config.json.
      json modelopt = {{"quant_method", "modelopt"}};
      for (const char* k : {"quant_algo", "kv_cache_quant_algo", "group_size"})
        if (q["hf_quant_config"].contains(k)) modelopt[k] = q["hf_quant_config"][k];
      q = modelopt;
    }
    if (!q.contains("quant_method") || q["quant_method"].is_null()) model_detail::infer_quant_from_id(line["hf_id"].get<std::string>(), q);
    // Long ignore lists are collapsed to a count ("145 modules (list omitted)") in the catalogue.
    if (q.contains("modules_to_not_convert") && !q["modules_to_not_convert"].is_array()) q.erase("modules_to_not_convert");
    // nvidia ModelOpt FP8 checkpoints declare an fp8 KV cache in hf_quant_config.json.
    if (q.contains("quant_method")) config["quantization_config"] = q;
  } else if (line["hf_id"].get<std::string>() == "nvidia/Llama-3.1-70B-Instruct-FP8") {
    // Its quantization lives in hf_quant_config.json (see the line's notes): ModelOpt FP8
    // weights and activations, FP8 KV cache, lm_head excluded.
    config["quantization_config"] = {{"quant_method", "modelopt"}, {"quant_algo", "FP8"},
                                     {"kv_cache_quant_algo", "FP8"}, {"exclude_modules", json::array({"lm_head"})}};
  }
  const json* supplement = line["hf_id"].is_string() ? vision_supplement(line["hf_id"].get<std::string>()) : nullptr;
  if (supplement) {
    config["vision_config"] = (*supplement)["vision"];
    if (supplement->contains("spatial_merge_size")) config["spatial_merge_size"] = (*supplement)["spatial_merge_size"];
  } else if (!is_null_or_missing(line, "vision") && line["vision"].is_object()) {
    json v = line["vision"];
    if (v.contains("from_resaved_copy") && v["from_resaved_copy"].is_object())
      for (const auto& [k, x] : v["from_resaved_copy"].items()) v[k] = x;
    config["vision_config"] = v;
  }
  if (line["text_model_type"].is_string()) {
    text["model_type"] = line["text_model_type"];
    if (line["model_type"].is_string()) config["model_type"] = line["model_type"];
    config["text_config"] = text;
    if (text.contains("tie_word_embeddings")) config["tie_word_embeddings"] = text["tie_word_embeddings"];
  } else {
    if (line["model_type"].is_string()) text["model_type"] = line["model_type"];
    for (const auto& [k, v] : text.items()) config[k] = v;
  }
  return config;
}

// The config.json-shaped object of a line: its supplement's whole config, or the line's facts
// with a partial supplement filled in.
json config_of_line(const json& line, const json* supplement, bool whole) {
  json config = whole ? (*supplement)["config"] : to_config(line);
  // A line given a quantization its config lacks (catalog_model_by_name's guess from a repo's
  // name, on a line taken as its base) keeps it.
  if (whole && !config.contains("quantization_config") && !is_null_or_missing(line, "quantization_config"))
    config["quantization_config"] = line["quantization_config"];
  if (supplement && !whole) {
    // Supplements keep config.json's nesting. A catalogue line without text_model_type holds the
    // text model's keys at the top level, so a supplement's text_config is flattened to match.
    json extra = (*supplement)["config"];
    if (!(config.contains("text_config") && config["text_config"].is_object()) && extra.contains("text_config") &&
        extra["text_config"].is_object()) {
      json text = std::move(extra["text_config"]);
      extra.erase("text_config");
      fill_missing(extra, text);
    }
    fill_missing(config, extra);
  }
  return config;
}

}  // namespace

namespace model_detail {

const json* find_catalog_line(std::string_view id) { return catalog_lines().find(id); }

}  // namespace model_detail

std::vector<std::string> catalog_model_ids() { return catalog_lines().ids(); }

// The config.json-shaped object of the catalogue's line for `id`, for a repo another repo's config
// names (Ultravox's text_model_id); nullopt when the catalogue lacks the id, holds no architecture
// for it, or would only guess its quantization (a guess must be labelled, which a bare config
// cannot carry).
std::optional<nlohmann::json> model_detail::catalog_config_json(std::string_view id) {
  const json* line = find_catalog_line(id);
  if (!line) return std::nullopt;
  const json* supplement = config_supplement((*line)["hf_id"].get<std::string>());
  if (line->value("source_quality", "").rfind("no config.json captured", 0) == 0 && !supplement) return std::nullopt;
  if (!is_null_or_missing(*line, "quantization_config") && !quantization_read(*line)) return std::nullopt;
  return config_of_line(*line, supplement, supplement != nullptr && supplement->value("whole_config", false));
}

// The ModelSpec of one catalogue line (catalog_model, once found).
Result<ModelSpec> model_detail::spec_of_catalog_line(const json* line) {
  const std::string hf_id = (*line)["hf_id"].get<std::string>();
  const std::string where = "built-in catalogue (" + hf_id + ")";
  const std::string advice = "; download its config.json and pass the folder or file instead (e.g. "
                             "huggingface-cli download " + hf_id + " config.json)";
  std::string quality = (*line).value("source_quality", "");
  const json* supplement = config_supplement(hf_id);
  if (quality.rfind("no config.json captured", 0) == 0 && !supplement) {
    // Tier G lines (model card or file listing only) carry no architecture.
    std::vector<std::string> missing;
    for (const char* k : {"num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size"})
      if (is_null_or_missing(*line, k)) missing.push_back(k);
    return make_error(ErrorCode::unsupported,
                      "the built-in catalogue has no architecture facts for '" + hf_id + "' (missing " +
                          util::join(missing, ", ") + ")" + advice,
                      where);
  }
  // A supplement marked whole_config is a copy of the repo's own config.json (lines added from
  // one): it is read as the Hub's file would be, and the line's summary is for listings only.
  const bool whole = supplement != nullptr && supplement->value("whole_config", false);
  json config = config_of_line(*line, supplement, whole);
  auto spec = model_detail::parse_config(config, where, nullptr);
  if (!spec) {
    // Partial copies (a truncated excerpt) lack a field the model cannot do without.
    const std::string& msg = spec.error().message;
    if (msg.rfind("missing required field", 0) == 0)
      return make_error(ErrorCode::unsupported,
                        "the built-in catalogue entry for '" + hf_id + "' is incomplete (" + msg + ")" + advice, where);
    return spec;
  }
  spec->id = hf_id;
  spec->source = ModelSource::catalog;
  spec->location = "built-in catalogue";
  if (std::string copied = model_detail::copied_architecture_note(*line); !copied.empty()) spec->location += " (" + copied + ")";
  if (spec->quantization && !quantization_read(*line)) spec->quantization->guessed_from = "the repo name";
  // A whole config carries its ignore list in full; only a line's summary of one is expanded.
  if (!whole) model_detail::apply_summarised_ignore_list(*line, *spec);
  if (whole && supplement->contains("preprocessor_config") && (*supplement)["preprocessor_config"].is_object()) {
    HR_TRY(applied, model_detail::apply_preprocessor_config((*supplement)["preprocessor_config"], where, *spec));
    (void)applied;
  }
  if (!whole) spec->raw_config = *line;  // a whole config keeps itself, as read from the Hub
  if (line->contains("total_params")) spec->declared_params = parse_param_count((*line)["total_params"]);
  return spec;
}

Result<ModelSpec> catalog_model(std::string_view id) {
  const json* line = model_detail::find_catalog_line(id);
  if (!line) {
    std::string msg = "model '" + std::string(id) + "' is not in the built-in catalogue";
    auto close = util::closest_matches(id, catalog_model_ids());
    if (!close.empty()) msg += "; did you mean " + util::or_list(close) + "?";
    return make_error(ErrorCode::not_found, msg);
  }
  // Each line's spec is built once per process (serve and plan look the same models up again and
  // again): at most one entry per catalogue line, keyed by the line itself.
  static std::mutex mutex;
  static std::map<const json*, Result<ModelSpec>> built;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = built.find(line); it != built.end()) return it->second;
  }
  auto spec = model_detail::spec_of_catalog_line(line);
  std::lock_guard<std::mutex> lock(mutex);
  return built.emplace(line, std::move(spec)).first->second;
}

}  // namespace headroom
