// Models whose config.json names the models vLLM builds them from by repo id. Ultravox's configs
// (the fixie-ai releases) hold the projector's settings and weights only: vLLM's UltravoxConfig
// (vllm/transformers_utils/configs/ultravox.py) reads the language model's config from
// text_model_id and the audio encoder's from audio_model_id, and ultravox.py loads their weights
// from those repos as secondary sources under the prefixes language_model. and audio_tower.
// headroom reads the same repos' config.json and safetensors headers (the Hugging Face cache, then
// headroom's Hub cache and the Hub), never guessing them.
#include <unordered_set>

#include "headroom/hub.h"
#include "model/model_internal.h"
#include "util/json_file.h"

namespace headroom {

namespace {

struct LinkSpec {
  const char* key;         // text_model_id / audio_model_id
  const char* config_key;  // where vLLM puts the linked config: text_config / audio_config
  const char* what;        // for messages
};

constexpr LinkSpec k_links[] = {{"text_model_id", "text_config", "language model"},
                                {"audio_model_id", "audio_config", "audio encoder"}};

bool is_ultravox(const nlohmann::json& config) {
  if (auto t = config.find("model_type"); t != config.end() && t->is_string() && *t == "ultravox") return true;
  auto a = config.find("architectures");
  return a != config.end() && a->is_array() && !a->empty() && (*a)[0].is_string() && (*a)[0] == "UltravoxModel";
}

// A linked repo as read: its config.json and, when its safetensors headers were read, its tensors.
struct LinkedFiles {
  nlohmann::json config;
  std::optional<WeightsInventory> weights;
  std::string source;  // "the Hugging Face cache" / "the Hub" / "headroom's Hub cache"
};

// The Hub's snapshot of `repo` (headroom's Hub cache when offline); nullopt when offline and not
// cached. Hub notes go to the caller's note sink.
Result<std::optional<hub::HubSnapshot>> hub_snapshot(const std::string& repo, const ModelLoadOptions& options) {
  std::vector<std::string> notes;
  Result<std::optional<hub::HubSnapshot>> out = std::optional<hub::HubSnapshot>{};
  if (options.hub->offline) {
    out = hub::load_cached_snapshot(repo, *options.hub, notes);
  } else if (auto snap = hub::load_hub_snapshot(repo, *options.hub, notes)) {
    out = std::optional<hub::HubSnapshot>(std::move(*snap));
  } else {
    out = tl::unexpected(snap.error());
  }
  if (options.on_note)
    for (const auto& n : notes) options.on_note(n);
  return out;
}

LinkedFiles from_snapshot(const hub::HubSnapshot& snap, nlohmann::json config, const ModelLoadOptions& options) {
  LinkedFiles out{std::move(config), std::nullopt, options.hub->offline ? "headroom's Hub cache" : "the Hub"};
  if (!snap.shards.empty()) out.weights = hub::shard_inventory(snap);
  return out;
}

// `repo`'s config.json and safetensors headers: the Hugging Face cache, then (with a Hub) the Hub
// or headroom's Hub cache. The error says what could not be read and what the user can do.
Result<LinkedFiles> read_linked(const std::string& repo, const LinkSpec& link, const ModelSpec& shell,
                                const ModelLoadOptions& options) {
  auto cannot = [&](const std::string& why) {
    return make_error(ErrorCode::not_found,
                      "the config names its " + std::string(link.what) + " by repo id (" + link.key + " " + repo +
                          "), from which vLLM builds it, and headroom could not read that repo's config.json: " + why +
                          "; put the repo in the Hugging Face cache, let headroom reach the Hub (with HF_TOKEN for a "
                          "gated repo), or pass a folder whose config.json holds " + link.config_key + " itself",
                      shell.location);
  };
  if (std::string snap = model_detail::find_cached_snapshot(model_detail::hub_cache_dir(options), repo); !snap.empty()) {
    HR_TRY(config, util::read_json_file(snap + "/config.json"));
    HR_TRY(weights, read_safetensors_dir(snap));
    return LinkedFiles{std::move(config), std::move(weights), "the Hugging Face cache"};
  }
  // The built-in catalogue stands in for a language model the Hub would not give (gated without a
  // token, unreachable, offline), with a note; its weights are then laid out from the config.
  auto from_catalogue = [&](const std::string& why) -> Result<LinkedFiles> {
    std::optional<nlohmann::json> line;
    if (options.use_catalog && std::string_view(link.key) == "text_model_id") line = model_detail::catalog_config_json(repo);
    if (!line) return cannot(why);
    if (options.on_note) options.on_note(repo + " (" + link.key + "): " + why + "; using the built-in catalogue's line for it");
    return LinkedFiles{std::move(*line), std::nullopt, "the built-in catalogue"};
  };
  if (options.hub == nullptr || !hub::is_repo_id(repo)) return from_catalogue("it is not in the Hugging Face cache");
  auto snap = hub_snapshot(repo, options);
  if (!snap) return from_catalogue(snap.error().message);
  if (!*snap) return from_catalogue("it is in neither the Hugging Face cache nor headroom's Hub cache (offline)");
  auto config = (*snap)->json_files.find("config.json");
  if (config == (*snap)->json_files.end()) return cannot("the repo has no config.json");
  HR_TRY(json, util::parse_json(config->second, repo + "/config.json"));
  return from_snapshot(**snap, std::move(json), options);
}

// The linked repo's tensors as vLLM loads them into the composite model: every tensor of the
// language model under language_model.; of the Whisper checkpoint only the encoder's, its
// model.encoder. prefix mapped to audio_tower. (ultravox.py's hf_to_vllm_mapper; the decoder and
// proj_out are not loaded). A tensor the repo's own checkpoint already holds is loaded once.
void add_linked_tensors(const LinkSpec& link, const WeightsInventory& linked, std::unordered_set<std::string>& names,
                        WeightsInventory& into) {
  const bool audio = std::string_view(link.key) == "audio_model_id";
  for (const auto& t : linked.tensors) {
    TensorInfo copy = t;
    if (audio) {
      if (!t.name.starts_with("model.encoder.")) continue;
      copy.name = "audio_tower." + t.name.substr(std::string_view("model.encoder.").size());
    } else {
      copy.name = "language_model." + t.name;
    }
    if (!names.insert(copy.name).second) continue;
    into.total_bytes += copy.bytes;
    into.tensors.push_back(std::move(copy));
  }
  into.file_count += linked.file_count;
}

}  // namespace

std::optional<ModelSpec> model_detail::linked_repo_shell(const nlohmann::json& config) {
  if (!config.is_object() || !is_ultravox(config)) return std::nullopt;
  ModelSpec shell;
  for (const LinkSpec& link : k_links) {
    auto id = config.find(link.key);
    auto held = config.find(link.config_key);
    if (id == config.end() || !id->is_string() || id->get_ref<const std::string&>().empty()) continue;
    if (held != config.end() && held->is_object() && !held->empty()) continue;
    shell.linked_repos.push_back({link.key, id->get<std::string>(), ""});
  }
  if (shell.linked_repos.empty()) return std::nullopt;
  shell.architecture = "UltravoxModel";
  shell.model_type = "ultravox";
  shell.raw_config = config;
  shell.linked_unread = true;
  return shell;
}

Result<ModelSpec> model_detail::read_linked_repos(const ModelSpec& shell, const ModelLoadOptions& options) {
  nlohmann::json merged = shell.raw_config;
  // Exact only when the repo's own checkpoint and every linked one were read. The own checkpoint's
  // Whisper encoder, where it holds one, goes through the same mapper (audio_tower.model.encoder.
  // to audio_tower.), so that the linked copy of a tensor is not counted twice.
  std::optional<WeightsInventory> weights = shell.weights && shell.weights->exact ? shell.weights : std::nullopt;
  std::unordered_set<std::string> names;
  if (weights)
    for (auto& t : weights->tensors) {
      if (t.name.starts_with("audio_tower.model.encoder."))
        t.name = "audio_tower." + t.name.substr(std::string_view("audio_tower.model.encoder.").size());
      names.insert(t.name);
    }
  std::vector<ModelSpec::LinkedRepo> read;
  for (const auto& linked : shell.linked_repos) {
    const LinkSpec& link = linked.key == "text_model_id" ? k_links[0] : k_links[1];
    HR_TRY(files, read_linked(linked.repo, link, shell, options));
    // A language model that is itself a multimodal wrapper: vLLM takes its text config
    // (UltravoxConfig.text_config is wrapped_model_config.get_text_config()).
    const nlohmann::json* config = &files.config;
    if (auto inner = files.config.find("text_config"); link.config_key == std::string_view("text_config") &&
                                                        inner != files.config.end() && inner->is_object())
      config = &*inner;
    merged[link.config_key] = *config;
    if (weights && files.weights && files.weights->exact) add_linked_tensors(link, *files.weights, names, *weights);
    else weights.reset();
    read.push_back({linked.key, linked.repo, files.source});
  }
  const std::string origin = shell.location.empty() ? shell.id : shell.location;
  HR_TRY(spec, parse_model_config(merged, origin + " (with its linked repos' configs)"));
  spec.id = shell.id;
  spec.source = shell.source;
  spec.location = shell.location;
  spec.revision = shell.revision;
  spec.tokenizer_model_max_length = shell.tokenizer_model_max_length;
  if (options.on_note) {
    std::string text = "the config names the models vLLM builds " + spec.architecture + " from by repo id; read ";
    for (std::size_t i = 0; i < read.size(); ++i)
      text += (i ? " and " : "") + read[i].key + " " + read[i].repo + " from " + read[i].source;
    options.on_note(text + (weights ? "" : " (the weights are laid out from the configs: not every checkpoint's safetensors headers were read)"));
  }
  spec.linked_repos = std::move(read);
  spec.weights = std::move(weights);
  return spec;
}

}  // namespace headroom
