// load_model: resolves a model reference to a local folder, a config.json, the Hugging Face cache,
// headroom's Hub metadata cache and the Hub (src/hub/), or the built-in catalogue.
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "headroom/hub.h"
#include "model/gguf.h"
#include "model/model_internal.h"
#include "util/json_file.h"
#include "util/strings.h"
#include "util/regular_file.h"
#include "util/word_match.h"

namespace headroom {

namespace fs = std::filesystem;

std::string model_detail::hub_cache_dir(const ModelLoadOptions& options) {
  if (!options.hf_hub_cache.empty()) return options.hf_hub_cache;
  if (const char* c = std::getenv("HF_HUB_CACHE"); c && *c) return c;
  if (const char* h = std::getenv("HF_HOME"); h && *h) return (fs::path(h) / "hub").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".cache" / "huggingface" / "hub").string();
  return ".cache/huggingface/hub";
}

// models--ORG--NAME/snapshots/REV for `id` (case-insensitive), or "" when not cached.
std::string model_detail::find_cached_snapshot(const std::string& hub, std::string_view id) {
  std::error_code ec;
  if (id.find('/') == std::string_view::npos || !fs::is_directory(hub, ec)) return {};
  std::string want = "models--" + util::to_lower(id);
  for (std::size_t pos; (pos = want.find('/')) != std::string::npos;) want.replace(pos, 1, "--");
  fs::path repo;
  for (const auto& e : fs::directory_iterator(hub, ec)) {
    if (util::to_lower(e.path().filename().string()) == want && e.is_directory(ec)) {
      repo = e.path();
      break;
    }
  }
  if (repo.empty()) return {};
  fs::path snapshots = repo / "snapshots";
  // The revision refs/main points at, when present; else the newest snapshot folder.
  if (auto rev = util::read_file((repo / "refs" / "main").string())) {
    fs::path snap = snapshots / util::trim(*rev);
    if (fs::exists(snap / "config.json", ec)) return snap.string();
  }
  fs::path newest;
  fs::file_time_type newest_time{};
  for (const auto& e : fs::directory_iterator(snapshots, ec)) {
    if (!e.is_directory(ec) || !fs::exists(e.path() / "config.json", ec)) continue;
    auto t = fs::last_write_time(e.path(), ec);
    if (newest.empty() || t > newest_time) {
      newest = e.path();
      newest_time = t;
    }
  }
  return newest.string();
}

namespace {

using model_detail::find_cached_snapshot;
using model_detail::hub_cache_dir;

// Reads a folder holding config.json (plus tokenizer_config.json, hf_quant_config.json,
// preprocessor_config.json and safetensors headers when present).
Result<ModelSpec> load_folder(const fs::path& dir, std::string_view ref, ModelSource source) {
  fs::path config = dir / "config.json";
  auto text = util::read_file(config.string());
  if (!text) return tl::unexpected(text.error());
  auto spec = parse_model_config_text(*text, config.string());
  if (!spec) return spec;
  spec->id = std::string(ref);
  spec->source = source;
  spec->location = dir.string();
  std::error_code ec;
  if (fs::path tok = dir / "tokenizer_config.json"; fs::exists(tok, ec)) {
    auto j = util::read_json_file(tok.string());
    if (!j) return tl::unexpected(j.error());
    model_detail::apply_tokenizer_config(*j, *spec);
  }
  if (!spec->quantization) {
    if (fs::path hq = dir / "hf_quant_config.json"; fs::exists(hq, ec)) {
      auto j = util::read_json_file(hq.string());
      if (!j) return tl::unexpected(j.error());
      spec->quantization = model_detail::read_modelopt_quant_config(*j);
    }
  }
  for (const auto& [name, apply] : model_detail::processor_configs()) {
    if (fs::path pp = dir / name; spec->vision && fs::exists(pp, ec)) {
      auto j = util::read_json_file(pp.string());
      if (!j) return tl::unexpected(j.error());
      auto applied = apply(*j, pp.string(), *spec);
      if (!applied) return tl::unexpected(applied.error());
    }
  }
  auto weights = read_safetensors_dir(dir.string());
  if (!weights) return tl::unexpected(weights.error());
  spec->weights = std::move(*weights);
  return spec;
}

void note(const ModelLoadOptions& options, const std::string& text) {
  if (options.on_note) options.on_note(text);
}

std::string unknown_model_message(std::string_view model_ref, const std::string& hub, const ModelLoadOptions& options) {
  std::string msg = "unknown model '" + std::string(model_ref) + "': not a folder or file, not in the Hugging Face cache (" +
                    hub + ")";
  msg += options.use_catalog ? ", not in the built-in catalogue" : " (catalogue lookup disabled)";
  return msg;
}

// Close ids for "did you mean": the catalogue's and those in headroom's Hub cache.
std::string did_you_mean(std::string_view model_ref, const ModelLoadOptions& options) {
  std::vector<std::string> ids = options.use_catalog ? catalog_model_ids() : std::vector<std::string>{};
  if (options.hub != nullptr)
    for (auto& id : hub::HubCache(options.hub->cache_dir).repo_ids()) ids.push_back(std::move(id));
  auto close = util::closest_matches(model_ref, ids);
  if (close.empty()) close = util::word_matches(model_ref, ids);  // "llama 3.1 8b", typed with spaces
  return close.empty() ? std::string() : "; did you mean " + util::or_list(close) + "?";
}

// The note that says a repo's architecture was assumed, and what to pass instead.
void note_assumed(const ModelLoadOptions& options, std::string_view model_ref, const ModelSpec& spec) {
  note(options, "'" + std::string(model_ref) + "' is not in the built-in catalogue and its config.json was not read: its "
                "architecture is assumed to be " + spec.architecture_assumed_from + "'s, whose name its own extends; pass "
                "the model's folder or config.json (or let headroom reach the Hub) for an exact answer");
}

// A repo id whose config.json could not be read and that the catalogue lacks, as the catalogue
// model its name extends (catalog_model_by_name), with a note saying so; nullopt when none fits.
std::optional<ModelSpec> assumed_by_name(std::string_view model_ref, const ModelLoadOptions& options) {
  if (!options.use_catalog) return std::nullopt;
  auto spec = catalog_model_by_name(model_ref);
  if (!spec) return std::nullopt;
  note_assumed(options, model_ref, *spec);
  return std::move(*spec);
}

// headroom's Hub cache and the Hub, for an id the local Hugging Face cache does not hold. nullopt:
// go on to the catalogue (offline and not cached).
Result<std::optional<ModelSpec>> load_from_hub(std::string_view model_ref, const ModelLoadOptions& options) {
  const hub::HubSettings& settings = *options.hub;
  std::vector<std::string> notes;
  const std::string repo(model_ref);
  auto flush = [&] {
    for (const auto& n : notes) note(options, n);
    notes.clear();
  };
  if (settings.offline) {
    auto cached = hub::load_cached_model(repo, settings, notes);
    flush();
    if (!cached) return tl::unexpected(cached.error());
    return cached;
  }
  auto spec = hub::load_hub_model(repo, settings, notes);
  flush();
  if (spec) return std::optional<ModelSpec>(std::move(*spec));
  const Error& e = spec.error();
  if (options.use_catalog) {
    if (auto line = catalog_model(model_ref)) {
      // The catalogue still knows the model: a note, not an error.
      if (hub::is_no_network(e))
        note(options, e.message.substr(0, e.message.find("; use ")) + "; using the built-in catalogue (--offline skips the Hub)");
      else note(options, e.to_string() + "; using the built-in catalogue instead");
      return std::optional<ModelSpec>(std::move(*line));
    }
    if (hub::is_no_network(e)) {
      if (auto assumed = catalog_model_by_name(model_ref)) {
        note(options, e.message.substr(0, e.message.find("; use ")));
        note_assumed(options, model_ref, *assumed);
        return std::optional<ModelSpec>(std::move(*assumed));
      }
    }
  }
  if (e.code == ErrorCode::not_found && e.message.starts_with("unknown model"))
    return make_error(e.code, e.message + did_you_mean(model_ref, options), e.where);
  return tl::unexpected(e);
}

}  // namespace

void model_detail::apply_tokenizer_config(const nlohmann::json& j, ModelSpec& spec) {
  // transformers writes a huge sentinel (1e30) when the tokenizer has no limit; ignore those.
  if (!j.is_object()) return;
  if (auto it = j.find("model_max_length"); it != j.end() && it->is_number()) {
    double v = it->get<double>();
    if (v > 0 && v < 1e15) spec.tokenizer_model_max_length = static_cast<std::int64_t>(v);
  }
}

namespace {

Result<ModelSpec> load_model_config(std::string_view model_ref, const ModelLoadOptions& options) {
  // An address copied from the model's Hub page stands for its repo (and the revision it shows,
  // unless one was asked for).
  if (auto address = hub::parse_repo_address(model_ref)) {
    ModelLoadOptions by_id = options;
    std::optional<hub::HubSettings> settings;
    std::string revision_note;
    if (!address->revision.empty() && options.hub != nullptr) {
      if (options.hub->revision == "main") {
        settings = *options.hub;
        settings->revision = address->revision;
        by_id.hub = &*settings;
        revision_note = " at revision " + address->revision;
      } else if (options.hub->revision != address->revision) {
        revision_note = " at revision " + options.hub->revision + " as asked (the address shows " + address->revision + ")";
      }
    }
    if (options.on_note) options.on_note("read the address " + std::string(model_ref) + " as the Hub repo " + address->repo + revision_note);
    return load_model_config(address->repo, by_id);
  }
  std::error_code ec;
  fs::path path{std::string(model_ref)};
  if (fs::is_directory(path, ec)) {
    if (fs::exists(path / "config.json", ec)) return load_folder(path, model_ref, ModelSource::local_dir);
    return make_error(ErrorCode::not_found, "folder has no config.json", path.string());
  }
  if (fs::is_regular_file(path, ec)) {
    if (path.extension() == ".gguf") {
      auto spec = read_gguf_model(path.string());
      if (spec) spec->id = std::string(model_ref);
      return spec;
    }
    auto text = util::read_file(path.string());
    if (!text) return tl::unexpected(text.error());
    auto spec = parse_model_config_text(*text, path.string());
    if (!spec) return spec;
    spec->id = std::string(model_ref);
    spec->source = ModelSource::config_file;
    spec->location = path.string();
    return spec;
  }
  // A FIFO, socket or device named as the model: refused without opening it (it would block).
  if (fs::exists(path, ec))
    if (auto regular = util::check_regular_file(path.string()); !regular) return tl::unexpected(regular.error());
  // Something written as a path ("./x", "/x", "../x", "~/x") is never a Hub id.
  std::string_view ref = model_ref;
  if (ref.starts_with("./") || ref.starts_with("/") || ref.starts_with("../") || ref.starts_with("~/") || ref == "." ||
      ref == "..")
    return make_error(ErrorCode::not_found, "no such folder or file (a local model is a folder with config.json, or a .gguf file)",
                      std::string(model_ref));
  std::string hf_cache = hub_cache_dir(options);
  if (std::string snap = find_cached_snapshot(hf_cache, model_ref); !snap.empty())
    return load_folder(snap, model_ref, ModelSource::hf_cache);
  if (options.hub != nullptr && hub::is_repo_id(model_ref)) {
    auto from_hub = load_from_hub(model_ref, options);
    if (!from_hub) return tl::unexpected(from_hub.error());
    if (*from_hub) return std::move(**from_hub);
  }
  // Looked up first, so that an id the catalogue lacks gets one "did you mean" (below), not two.
  if (options.use_catalog && model_detail::find_catalog_line(model_ref) != nullptr) return catalog_model(model_ref);
  if (auto assumed = assumed_by_name(model_ref, options)) return std::move(*assumed);
  std::string msg = unknown_model_message(model_ref, hf_cache, options);
  if (options.hub != nullptr && options.hub->offline && hub::is_repo_id(model_ref)) msg += ", not in headroom's Hub cache (offline)";
  return make_error(ErrorCode::not_found, msg + did_you_mean(model_ref, options));
}

}  // namespace

Result<ModelSpec> load_model(std::string_view model_ref, const ModelLoadOptions& options) {
  auto spec = load_model_config(model_ref, options);
  if (spec && spec->linked_unread) return model_detail::read_linked_repos(*spec, options);
  return spec;
}

std::string_view to_string(ModelSource source) {
  switch (source) {
    case ModelSource::local_dir: return "local folder";
    case ModelSource::config_file: return "config file";
    case ModelSource::hf_cache: return "Hugging Face cache";
    case ModelSource::hub: return "Hugging Face Hub";
    case ModelSource::catalog: return "built-in catalogue";
  }
  return "unknown";
}

std::string_view to_string(LayerKind kind) {
  switch (kind) {
    case LayerKind::full_attention: return "full_attention";
    case LayerKind::sliding_attention: return "sliding_attention";
    case LayerKind::chunked_attention: return "chunked_attention";
    case LayerKind::cross_attention: return "cross_attention";
    case LayerKind::mamba: return "mamba";
    case LayerKind::linear_attention: return "linear_attention";
    case LayerKind::kda_attention: return "kda_attention";
    case LayerKind::no_attention: return "no_attention";
  }
  return "unknown";
}

}  // namespace headroom
