// catalog_model_by_name: a repo the catalogue lacks and whose config.json cannot be read, taken as
// the catalogue model its name extends. Fine-tunes and re-quantizations keep their base model's
// name and add words ("Qwen3-30B-A3B" + "-Thinking-2507-AWQ-4bit", "Meta-Llama-3.1-8B-Instruct" +
// "-AWQ-INT4"); the architecture is the base's, and the quantization is what the name suggests.
// Both are guesses, and say so: the prediction names the model assumed and asserts no failure from
// a limit that the repo's own config could change.
#include <algorithm>
#include <iterator>
#include <tuple>
#include <regex>

#include "headroom/hub.h"
#include "model/model_internal.h"
#include "util/strings.h"
#include "util/word_match.h"

namespace headroom {

namespace {

using nlohmann::json;

// The words of a repo name (after the owner), lower case, split at '-' and '_'.
std::vector<std::string> name_words(std::string_view id) {
  const std::size_t slash = id.rfind('/');
  return util::lower_words(slash == std::string_view::npos ? id : id.substr(slash + 1), "-_");
}

// A parameter count ("8b", "0.6b", "135m", "a3b", "e2b", "8x7b") or a context length ("128k",
// "1m"): in the base it pins the size; after it, it names another model.
bool is_size_word(const std::string& w) {
  static const std::regex k_size(R"((\d+(\.\d+)?[bmk])|([ae]\d+(\.\d+)?b)|(\d+x\d+(\.\d+)?b))");
  return std::regex_match(w, k_size);
}

// Words after the base name that say the repo is not the same architecture, or not a checkpoint
// vLLM loads as the model: another modality or head, a draft or adapter, another file format.
bool changes_the_model(const std::string& w) {
  static const char* k_words[] = {"vl",     "vision", "omni",  "audio",  "speech", "embedding", "embed",  "reranker",
                                  "rerank", "reward", "rm",    "prm",    "guard",  "classifier", "mtp",   "eagle",
                                  "eagle3", "medusa", "draft", "speculator", "moe", "lora",     "adapter", "peft",
                                  "gguf",   "ggml",   "exl2",  "exl3",   "mlx",    "onnx",      "openvino", "ov",
                                  "coreml", "hqq",    "aqlm",  "quip",   "vptq",  "autoround"};  // "1m" and "128k" are size words
  return std::find(std::begin(k_words), std::end(k_words), w) != std::end(k_words);
}

// Words that say the checkpoint is quantized, whose method the name must then also say.
bool says_quantized(const std::string& w) {
  static const char* k_words[] = {"awq",   "gptq", "int4", "int8", "4bit", "8bit",  "fp8",  "nvfp4",     "mxfp4",
                                  "w4a16", "w8a8", "w8a16", "fp4", "bnb",  "quantized", "autoawq", "gptqmodel"};
  return std::find(std::begin(k_words), std::end(k_words), w) != std::end(k_words);
}

// A catalogue model's name as a base: without a trailing "hf" (the transformers-format marker of
// "Llama-2-7b-chat-hf", which its re-quantizations drop: "Llama-2-7B-Chat-AWQ").
std::vector<std::string> base_words(std::string_view id) {
  auto words = name_words(id);
  if (words.size() > 1 && words.back() == "hf") words.pop_back();
  return words;
}

// Words that name a release's variant of one architecture: the instruction-tuned, reasoning, chat,
// pretrained or base checkpoint of the same model (Qwen3-VL-8B-Thinking and -Instruct, gemma-3's
// -pt and -it, Llama-2-7b and -chat). A base and a repo may differ in them.
bool is_variant_word(const std::string& w) {
  static const char* k_words[] = {"instruct", "thinking", "chat", "it", "pt", "base"};
  return std::find(std::begin(k_words), std::end(k_words), w) != std::end(k_words);
}

std::vector<std::string> without_variants(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  std::copy_if(words.begin(), words.end(), std::back_inserter(out), [](const std::string& w) { return !is_variant_word(w); });
  return out;
}

bool is_prefix(const std::vector<std::string>& base, const std::vector<std::string>& words) {
  return base.size() <= words.size() && std::equal(base.begin(), base.end(), words.begin());
}

// The catalogue's unquantized models whose name, variant words aside, is a prefix (in words) of
// the repo's: the longest first, and among those the names the repo's extends as written, the
// longest of them (Meta-Llama-3.1-8B-Instruct before Meta-Llama-3.1-8B for its AWQ export).
std::vector<std::string> bases_by_name(const std::vector<std::string>& words) {
  const auto core = without_variants(words);
  std::vector<std::string> best;
  std::tuple<std::size_t, bool, std::size_t> best_rank{0, false, 0};
  for (const std::string& id : catalog_model_ids()) {
    const auto base = base_words(id);
    const auto base_core = without_variants(base);
    if (base_core.empty() || !is_prefix(base_core, core)) continue;
    if (std::none_of(base.begin(), base.end(), is_size_word)) continue;  // "DeepSeek-R1", "phi-4": no size, no match
    const json* line = model_detail::find_catalog_line(id);
    if (line == nullptr || !(*line).value("quantization_config", json()).is_null()) continue;
    const std::tuple<std::size_t, bool, std::size_t> rank{base_core.size(), is_prefix(base, words), base.size()};
    if (rank < best_rank) continue;
    if (best_rank < rank) best.clear();
    best_rank = rank;
    best.push_back(id);
  }
  return best;
}

// Whether the lines agree on what sizes the model (one catalogue model under two owners' names).
bool same_architecture(const std::vector<std::string>& ids) {
  auto facts = [](const std::string& id) {
    const json& l = *model_detail::find_catalog_line(id);
    return json::array({l.value("architecture", json()), l.value("num_hidden_layers", json()), l.value("hidden_size", json()),
                        l.value("intermediate_size", json()), l.value("vocab_size", json()), l.value("moe", json())});
  };
  return std::all_of(ids.begin(), ids.end(), [&](const std::string& id) { return facts(id) == facts(ids.front()); });
}

tl::unexpected<Error> no_base(std::string_view id, const std::string& why) {
  return make_error(ErrorCode::not_found, "no catalogue model to assume for '" + std::string(id) + "': " + why);
}

// The one base model the name allows, or why there is none.
Result<std::string> choose_base(std::string_view id, const std::vector<std::string>& words) {
  const auto bases = bases_by_name(words);
  if (bases.empty()) return no_base(id, "its name extends no catalogue model's name that gives a size");
  if (!same_architecture(bases))
    return no_base(id, "its name extends " + util::or_list(bases) + ", which differ");
  const auto core = without_variants(words);
  const std::size_t base_len = without_variants(base_words(bases.front())).size();
  static const std::regex k_bits(R"(\d+b)");
  bool after_quantization = false;  // "GPTQ-4b-128g": a bit width, not a size
  for (std::size_t i = base_len; i < core.size(); ++i) {
    const bool bits = after_quantization && std::regex_match(core[i], k_bits);
    if ((is_size_word(core[i]) && !bits) || changes_the_model(core[i]))
      return no_base(id, "'" + core[i] + "' after " + bases.front() + "'s name says it is another model");
    after_quantization = after_quantization || says_quantized(core[i]);
  }
  return bases.front();
}

}  // namespace

Result<ModelSpec> catalog_model_by_name(std::string_view id) {
  if (!hub::is_repo_id(id)) return no_base(id, "not a Hub repo id (owner/name)");
  const auto words = name_words(id);
  auto base = choose_base(id, words);
  if (!base) return tl::unexpected(base.error());
  json line = *model_detail::find_catalog_line(*base);
  // The method comes from the name's own words (the owner only picks the exporter's convention).
  json q = json::object();
  if (std::any_of(words.begin(), words.end(), says_quantized)) {
    model_detail::infer_quant_from_id(id, q);
    if (!q.contains("quant_method")) return no_base(id, "its name says it is quantized but not by which method");
    line["quantization_config"] = q;
  }
  auto spec = model_detail::spec_of_catalog_line(&line);
  if (!spec) return spec;
  // The base line's own caveat (a copied or unconfirmed architecture) stays in the source.
  const std::string copied = model_detail::copied_architecture_note(line);
  const std::string base_note = copied.empty() ? ")" : "; " + *base + "'s line: " + copied + ")";
  spec->id = std::string(id);
  spec->architecture_assumed_from = *base;
  const bool as_written = is_prefix(base_words(*base), words);
  spec->location = "built-in catalogue (architecture assumed from " + *base + ", whose name this repo's extends" +
                   (as_written ? "" : " (Instruct, Thinking, Chat, it, pt or Base aside)") +
                   "; its own config.json was not read" + base_note;
  if (spec->quantization) spec->quantization->guessed_from = "the repo name";
  return spec;
}

}  // namespace headroom
