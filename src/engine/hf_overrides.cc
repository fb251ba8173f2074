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

// The RoPE scaling an override key gives: absent (nullopt), or a scaling that may be none (null).
// Checked in every release, so a malformed value is an error wherever it is given.
Result<std::optional<std::optional<RopeScaling>>> rope_override(const nlohmann::json& o, const char* key,
                                                                const std::string& where) {
  auto it = o.find(key);
  if (it == o.end()) return std::optional<std::optional<RopeScaling>>{};
  if (it->is_null()) return std::optional<std::optional<RopeScaling>>{std::optional<RopeScaling>{}};
  auto parsed = parse_rope_scaling(nlohmann::json{{key, *it}}, "--hf-overrides " + where + key);
  if (!parsed) return tl::unexpected(parsed.error());
  return std::optional<std::optional<RopeScaling>>{*parsed};
}

std::string ignored(const std::string& where, const char* key, const VllmVersion& version, const std::string& why) {
  return "--hf-overrides " + where + key + " changes nothing in vLLM " + version.to_string() + ": " + why +
         ", so the length is derived as published";
}

// One object of overrides (the top level, or text_config) applied to the model's text model: the
// length limit, then the RoPE key the release reads.
//   before v0.12: rope_scaling; a rope_parameters override is not read.
//   v0.12 to v0.19.0 (transformers v4): patch_rope_parameters copies a rope_scaling (the
//     override's, else the config's own) over rope_parameters, so rope_scaling wins, and a
//     rope_parameters override counts only for a config without a scaling of its own.
//   from v0.19.1 (transformers v5): rope_parameters only; a rope_scaling override is not read.
Result<void> apply_level(ModelSpec& m, const nlohmann::json& o, const std::string& where, const VllmVersion& version,
                         std::vector<std::string>& notes) {
  if (auto r = apply_length(m, o, where); !r) return r;
  auto scaling = rope_override(o, "rope_scaling", where);
  if (!scaling) return tl::unexpected(scaling.error());
  auto parameters = rope_override(o, "rope_parameters", where);
  if (!parameters) return tl::unexpected(parameters.error());
  if (version >= k_transformers_v5) {
    if (*scaling) {
      const std::string instead = where.empty() ? R"('{"rope_parameters": {...}}')"
                                                : R"('{"text_config": {"rope_parameters": {...}}}')";
      notes.push_back(ignored(where, "rope_scaling (or --rope-scaling)", version,
                              "it runs transformers v5 (from v0.19.1, #30566), whose config reads rope_parameters") +
                      "; give --hf-overrides " + instead + " instead");
    }
    if (*parameters) m.rope_scaling = **parameters;
  } else if (version >= k_reads_rope_parameters) {
    if (*scaling) {
      m.rope_scaling = **scaling;
    } else if (*parameters && m.rope_scaling) {
      notes.push_back(ignored(where, "rope_parameters", version,
                              "with transformers v4 vLLM copies the config's own rope_scaling over it "
                              "(patch_rope_parameters)") +
                      "; override rope_scaling instead");
    } else if (*parameters) {
      m.rope_scaling = **parameters;
    }
  } else {
    if (*parameters)
      notes.push_back(ignored(where, "rope_parameters", version, "it reads rope_scaling (rope_parameters from v0.12, #28542)") +
                      "; override rope_scaling instead");
    if (*scaling) m.rope_scaling = **scaling;
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
