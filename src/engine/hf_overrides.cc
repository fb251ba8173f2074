#include "engine/hf_overrides.h"

#include <nlohmann/json.hpp>

namespace headroom::engine {

namespace {

// The keys whose override changes what headroom predicts (rope_theta changes nothing it sizes), at
// the top level and in a multimodal model's text_config.
bool modelled_key(const std::string& key) {
  return key == "rope_scaling" || key == "rope_parameters" || key == "rope_theta" || key == "max_position_embeddings";
}

// The largest length limit an override may set: vLLM's own bound on a derived length is the
// config's value; 2^32 tokens keeps every product with it within 64-bit arithmetic.
constexpr std::int64_t k_max_positions = std::int64_t{1} << 32;

// One object of overrides (the top level, or text_config) applied to the model's text model.
Result<void> apply_level(ModelSpec& m, const nlohmann::json& o, const std::string& where) {
  if (auto it = o.find("max_position_embeddings"); it != o.end()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() <= 0 || it->get<std::int64_t>() > k_max_positions)
      return make_error(ErrorCode::invalid_argument,
                        where + "max_position_embeddings: expected a positive number of tokens, got " + it->dump(),
                        "--hf-overrides");
    // vLLM derives the limit from the smallest length key the config holds; the others stay.
    const std::int64_t v = it->get<std::int64_t>();
    if (m.max_length_key.empty() || m.max_length_key == "max_position_embeddings" || v < m.max_position_embeddings) {
      m.max_position_embeddings = v;
      m.max_length_key = "max_position_embeddings";
    }
  }
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    auto it = o.find(key);
    if (it == o.end()) continue;
    if (it->is_null()) {
      m.rope_scaling.reset();
      continue;
    }
    auto rope = parse_rope_scaling(nlohmann::json{{key, *it}}, "--hf-overrides " + where + key);
    if (!rope) return tl::unexpected(rope.error());
    if (*rope) m.rope_scaling = **rope;
  }
  return {};
}

}  // namespace

Result<std::optional<ModelSpec>> apply_hf_overrides(const ModelSpec& model, const VllmFlags& flags) {
  if (flags.hf_overrides.empty()) return std::optional<ModelSpec>{};
  const nlohmann::json o = nlohmann::json::parse(flags.hf_overrides, nullptr, false);
  if (!o.is_object()) return std::optional<ModelSpec>{};
  const auto text = o.find("text_config");
  const bool has_text = text != o.end() && text->is_object();
  auto touches = [](const nlohmann::json& level) {
    for (const auto& [key, value] : level.items())
      if (modelled_key(key) && key != "rope_theta") return true;
    return false;
  };
  if (!touches(o) && !(has_text && touches(*text))) return std::optional<ModelSpec>{};
  ModelSpec m = model;
  if (auto r = apply_level(m, o, ""); !r) return tl::unexpected(r.error());
  if (has_text)
    if (auto r = apply_level(m, *text, "text_config."); !r) return tl::unexpected(r.error());
  return std::optional<ModelSpec>(std::move(m));
}

std::vector<std::string> hf_override_warnings(const VllmFlags& flags) {
  std::vector<std::string> out;
  if (flags.hf_overrides.empty()) return out;
  const nlohmann::json o = nlohmann::json::parse(flags.hf_overrides, nullptr, false);
  if (!o.is_object()) return out;
  std::vector<std::string> unmodelled;
  for (const auto& [key, value] : o.items()) {
    if (key == "text_config" && value.is_object()) {
      for (const auto& [sub, v] : value.items())
        if (!modelled_key(sub)) unmodelled.push_back("text_config." + sub);
    } else if (!modelled_key(key)) {
      unmodelled.push_back(key);
    }
  }
  for (const auto& key : unmodelled)
    out.push_back("--hf-overrides: '" + key +
                  "' is not modelled: the model's config is read with its published value (only the RoPE scaling, "
                  "rope_theta and max_position_embeddings overrides change the prediction)");
  return out;
}

}  // namespace headroom::engine
