// A quantization ignore list the built-in catalogue keeps only in part. Long lists (ModelOpt's
// exclude_modules, compressed-tensors' ignore) are written in data/models.jsonl as their length and
// first entries: "63 entries (first: ['lm_head', 'model.embed_vision*',
// 'model.language_model.layers.0.self_attn*'])". ModelOpt writes one entry per excluded module
// and layer (hf_quant_config.json of nvidia/*-NVFP4), so a layer-0 entry whose module repeats in
// every layer stands for that module in all of them when the length leaves room for it. What is
// inferred is said in QuantizationConfig::ignore_list_inferred, and the entries still unaccounted
// for keep the KV range open (engine::guessed_quantization_extra_bytes).
#include <regex>
#include <set>

#include "model/model_internal.h"

namespace headroom::model_detail {

namespace {

struct Summary {
  int count = 0;
  std::vector<std::string> named;
};

std::optional<Summary> read_summary(const nlohmann::json& value) {
  if (!value.is_string()) return std::nullopt;
  const std::string& text = value.get_ref<const std::string&>();
  static const std::regex k_summary(R"(^(\d{1,6}) entries \(first: \[(.*)\]\)$)");
  std::smatch m;
  if (!std::regex_match(text, m, k_summary)) return std::nullopt;
  Summary s;
  s.count = std::stoi(m[1].str());
  static const std::regex k_entry(R"('([^']*)')");
  const std::string list = m[2].str();
  for (auto it = std::sregex_iterator(list.begin(), list.end(), k_entry); it != std::sregex_iterator(); ++it)
    s.named.push_back((*it)[1].str());
  if (s.named.empty() || static_cast<int>(s.named.size()) > s.count) return std::nullopt;
  return s;
}

// The summary in the line's quantization block, under any of the keys vLLM reads an ignore list
// from (the catalogue writes the same list under ignore and hf_quant_config.exclude_modules).
std::optional<Summary> find_summary(const nlohmann::json& line) {
  auto q = line.find("quantization_config");
  if (q == line.end() || !q->is_object()) return std::nullopt;
  for (const char* key : {"ignore", "exclude_modules", "modules_to_not_convert", "ignored_layers"})
    if (auto v = q->find(key); v != q->end())
      if (auto s = read_summary(*v)) return s;
  if (auto h = q->find("hf_quant_config"); h != q->end() && h->is_object())
    if (auto v = h->find("exclude_modules"); v != h->end()) return read_summary(*v);
  return std::nullopt;
}

// "<prefix>layers.<n>.<module>" with a module named after the layer number; a whole layer
// ("layers.0*", "layers.1.*") names no module that repeats.
struct LayerEntry {
  std::string prefix, module;
};

std::optional<LayerEntry> layer_entry(const std::string& entry) {
  static const std::regex k_layer(R"(^(.*layers\.)\d+\.(.+)$)");
  std::smatch m;
  if (!std::regex_match(entry, m, k_layer)) return std::nullopt;
  const std::string module = m[2].str();
  if (module == "*") return std::nullopt;
  return LayerEntry{m[1].str(), module};
}

// One pattern for the module on every layer (an ignore entry in compressed-tensors' "re:" form,
// which synthesize_weights.cc reads): "model.layers.0.self_attn*" becomes
// "re:^model\.layers\.[0-9]+\.self_attn.*"; a module without "*" matches whole dotted components,
// as a plain entry does.
std::string every_layer_pattern(const std::string& prefix, const std::string& module) {
  return "re:^" + glob_to_regex(prefix) + "[0-9]+\\." + glob_to_regex(module) + (module.ends_with('*') ? "" : "(\\.|$)");
}

}  // namespace

void apply_summarised_ignore_list(const nlohmann::json& line, ModelSpec& spec) {
  if (!spec.quantization) return;
  auto summary = find_summary(line);
  if (!summary) return;
  QuantizationConfig& q = *spec.quantization;
  std::set<std::pair<std::string, std::string>> per_layer;
  int other = 0;
  for (const auto& entry : summary->named) {
    if (auto e = layer_entry(entry)) per_layer.emplace(e->prefix, e->module);
    else ++other;
  }
  const int layers = spec.num_layers;
  const long long repeated = static_cast<long long>(per_layer.size()) * layers;
  const bool expand = !per_layer.empty() && layers > 0 && other + repeated <= summary->count;
  for (const auto& entry : summary->named)
    if (!expand || !layer_entry(entry)) q.ignored_modules.push_back(entry);
  std::string modules;
  if (expand) {
    for (const auto& [prefix, module] : per_layer) {
      q.ignored_modules.push_back(every_layer_pattern(prefix, module));
      modules += (modules.empty() ? "" : ", ") + module;
    }
  }
  const int accounted = expand ? other + static_cast<int>(repeated) : static_cast<int>(summary->named.size());
  q.ignore_entries_unaccounted = summary->count - accounted;
  q.ignore_list_inferred = "the catalogue keeps " + std::to_string(summary->named.size()) + " of the checkpoint's " +
                           std::to_string(summary->count) + " ignore entries";
  if (expand)
    q.ignore_list_inferred += "; its layer-0 " + std::string(per_layer.size() == 1 ? "entry " : "entries ") + modules +
                              " taken to repeat on all " + std::to_string(layers) + " layers";
  if (q.ignore_entries_unaccounted > 0)
    q.ignore_list_inferred += "; " + std::to_string(q.ignore_entries_unaccounted) + " not known";
}

}  // namespace headroom::model_detail
