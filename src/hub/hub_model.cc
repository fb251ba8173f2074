// A Hub snapshot as a ModelSpec: the same config parser and weight inventory as a local folder,
// from the files and shard headers read over HTTP (or from headroom's Hub cache).
#include <fmt/format.h>

#include <algorithm>

#include "headroom/hub.h"
#include "model/model_internal.h"
#include "util/json_file.h"

namespace headroom::hub {

namespace {

// Mistral-format repos (params.json without config.json) in Hugging Face names, as vLLM's
// transformers_utils/configs/mistral.py adapts them (dim → hidden_size, n_layers →
// num_hidden_layers, hidden_dim → intermediate_size, moe.num_experts → num_local_experts, ...).
Result<nlohmann::json> config_from_params(const nlohmann::json& p, const std::string& origin) {
  if (!p.is_object()) return make_error(ErrorCode::parse_error, "expected a JSON object", origin);
  nlohmann::json c = nlohmann::json::object();
  auto copy = [&](const char* from, const char* to) {
    if (auto it = p.find(from); it != p.end()) c[to] = *it;
  };
  copy("dim", "hidden_size");
  copy("n_layers", "num_hidden_layers");
  copy("n_heads", "num_attention_heads");
  copy("n_kv_heads", "num_key_value_heads");
  copy("head_dim", "head_dim");
  copy("hidden_dim", "intermediate_size");
  copy("vocab_size", "vocab_size");
  copy("norm_eps", "rms_norm_eps");
  copy("rope_theta", "rope_theta");
  copy("max_seq_len", "max_position_embeddings");
  copy("max_position_embeddings", "max_position_embeddings");
  copy("sliding_window", "sliding_window");
  copy("tied_embeddings", "tie_word_embeddings");
  bool moe = false;
  if (auto m = p.find("moe"); m != p.end() && m->is_object()) {
    moe = true;
    if (auto it = m->find("num_experts"); it != m->end()) c["num_local_experts"] = *it;
    if (auto it = m->find("num_experts_per_tok"); it != m->end()) c["num_experts_per_tok"] = *it;
  }
  c["architectures"] = nlohmann::json::array({moe ? "MixtralForCausalLM" : "MistralForCausalLM"});
  c["model_type"] = moe ? "mixtral" : "mistral";
  if (auto d = p.find("torch_dtype"); d != p.end()) c["torch_dtype"] = *d;
  else c["torch_dtype"] = "bfloat16";  // Mistral's consolidated checkpoints are bf16
  return c;
}

bool has_suffix_file(const std::vector<std::string>& files, std::string_view suffix) {
  return std::any_of(files.begin(), files.end(), [&](const std::string& f) { return f.ends_with(suffix); });
}

}  // namespace

WeightsInventory shard_inventory(const HubSnapshot& snap) {
  WeightsInventory inv;
  inv.exact = true;
  inv.file_count = static_cast<int>(snap.shards.size());
  for (const auto& shard : snap.shards) {
    for (const auto& t : shard.tensors) {
      inv.total_bytes += t.bytes;
      inv.tensors.push_back(t);
    }
  }
  return inv;
}

Result<ModelSpec> model_from_snapshot(const HubSnapshot& snap, std::vector<std::string>& notes) {
  const std::string at = snap.repo + "@" + snap.sha.substr(0, 7) + "/";
  Result<ModelSpec> spec = make_error(ErrorCode::internal, "unset");
  if (auto c = snap.json_files.find("config.json"); c != snap.json_files.end()) {
    spec = parse_model_config_text(c->second, at + "config.json");
  } else if (auto p = snap.json_files.find("params.json"); p != snap.json_files.end()) {
    auto j = util::parse_json(p->second, at + "params.json");
    if (!j) return tl::unexpected(j.error());
    auto config = config_from_params(*j, at + "params.json");
    if (!config) return tl::unexpected(config.error());
    spec = parse_model_config(*config, at + "params.json");
  } else {
    const bool gguf = has_suffix_file(snap.files, ".gguf");
    return make_error(ErrorCode::unsupported,
                      "the repo has no config.json or params.json" + std::string(gguf ? " (a GGUF-only repo)" : "") +
                          ": headroom reads a model's architecture from them" +
                          (gguf ? "; download the .gguf file you will serve and pass its path (headroom reads its header)" : ""),
                      snap.repo + "@" + snap.sha.substr(0, 7));
  }
  if (!spec) return spec;
  spec->id = snap.repo;
  spec->source = ModelSource::hub;
  spec->location = snap.repo + "@" + snap.sha;
  spec->revision = snap.sha;
  if (auto t = snap.json_files.find("tokenizer_config.json"); t != snap.json_files.end()) {
    auto j = util::parse_json(t->second, at + "tokenizer_config.json");
    if (!j) return tl::unexpected(j.error());
    model_detail::apply_tokenizer_config(*j, *spec);
  }
  if (!spec->quantization) {
    if (auto q = snap.json_files.find("hf_quant_config.json"); q != snap.json_files.end()) {
      auto j = util::parse_json(q->second, at + "hf_quant_config.json");
      if (!j) return tl::unexpected(j.error());
      spec->quantization = model_detail::read_modelopt_quant_config(*j);
    }
  }
  for (const auto& [name, apply] : model_detail::processor_configs()) {
    if (auto pp = snap.json_files.find(name); spec->vision && pp != snap.json_files.end()) {
      auto j = util::parse_json(pp->second, at + name);
      if (!j) return tl::unexpected(j.error());
      auto applied = apply(*j, at + name, *spec);
      if (!applied) return tl::unexpected(applied.error());
    }
  }
  if (snap.shards.empty()) {
    std::string kind = has_suffix_file(snap.files, ".gguf") ? "GGUF" : has_suffix_file(snap.files, ".bin") ? ".bin" : "no weight";
    notes.push_back(fmt::format("{} has no safetensors files ({} files only): its weights are computed from the architecture, not read",
                                snap.repo, kind));
    return spec;
  }
  spec->weights = shard_inventory(snap);
  return spec;
}

}  // namespace headroom::hub
