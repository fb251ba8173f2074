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

constexpr VllmVersion k_reads_rope_parameters{0, 12};       // #28542
constexpr VllmVersion k_transformers_v5{0, 19, 1};          // #30566

Result<void> apply_length(ModelSpec& m, const nlohmann::json& o, const std::string& where) {
  auto it = o.find("max_position_embeddings");
  if (it == o.end()) return {};
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
  return {};
}

// One object of overrides (the top level, or text_config) applied to the model's text model:
// the length limit, then the RoPE key `version` reads (rope_parameters wins where both count).
Result<void> apply_level(ModelSpec& m, const nlohmann::json& o, const std::string& where, const VllmVersion& version,
                         std::vector<std::string>& notes) {
  if (auto r = apply_length(m, o, where); !r) return r;
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    auto it = o.find(key);
    if (it == o.end()) continue;
    // Checked in every version, so a malformed value is an error wherever it is given.
    std::optional<RopeScaling> rope;
    if (!it->is_null()) {
      auto parsed = parse_rope_scaling(nlohmann::json{{key, *it}}, "--hf-overrides " + where + key);
      if (!parsed) return tl::unexpected(parsed.error());
      rope = *parsed;
    }
    const bool scaling = std::string_view(key) == "rope_scaling";
    if (scaling && version >= k_transformers_v5) {
      const std::string instead = where.empty() ? R"('{"rope_parameters": {...}}')"
                                                : R"('{"text_config": {"rope_parameters": {...}}}')";
      notes.push_back("--hf-overrides " + where + "rope_scaling (or --rope-scaling) changes nothing in vLLM " +
                      version.to_string() + ": it runs transformers v5 (from v0.19.1, #30566), whose config reads "
                      "rope_parameters, so the length is derived as published; give --hf-overrides " + instead + " instead");
      continue;
    }
    if (!scaling && version < k_reads_rope_parameters) {
      notes.push_back("--hf-overrides " + where + "rope_parameters changes nothing in vLLM " + version.to_string() +
                      ": it reads rope_scaling (rope_parameters from v0.12, #28542); the length is derived as published");
      continue;
    }
    m.rope_scaling = rope;
  }
  return {};
}

}  // namespace

Result<OverriddenModel> apply_hf_overrides(const ModelSpec& model, const VllmFlags& flags, const VllmVersion& version) {
  OverriddenModel out;
  if (flags.hf_overrides.empty()) return out;
  const nlohmann::json o = nlohmann::json::parse(flags.hf_overrides, nullptr, false);
  if (!o.is_object()) return out;
  const auto text = o.find("text_config");
  const bool has_text = text != o.end() && text->is_object();
  auto touches = [](const nlohmann::json& level) {
    for (const auto& [key, value] : level.items())
      if (modelled_key(key) && key != "rope_theta") return true;
    return false;
  };
  if (!touches(o) && !(has_text && touches(*text))) return out;
  ModelSpec m = model;
  if (auto r = apply_level(m, o, "", version, out.notes); !r) return tl::unexpected(r.error());
  if (has_text)
    if (auto r = apply_level(m, *text, "text_config.", version, out.notes); !r) return tl::unexpected(r.error());
  out.model = std::move(m);
  return out;
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
