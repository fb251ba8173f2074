#include "server/request_target.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "headroom/gpu.h"
#include "headroom/gpu_setup.h"
#include "headroom/hub.h"
#include "headroom/gpu_probe.h"
#include "headroom/units.h"

namespace headroom::server {

namespace fs = std::filesystem;

namespace {

ApiError forbidden(const std::string& message) { return {403, "forbidden", message, "model"}; }

bool written_as_path(const std::string& ref) {
  return ref.starts_with("/") || ref.starts_with("./") || ref.starts_with("../") || ref.starts_with("~") || ref == "." ||
         ref == ".." || ref.find('\\') != std::string::npos;
}

bool has_dot_dot(const std::string& ref) {
  for (const auto& part : fs::path(ref)) {
    if (part == "..") return true;
  }
  return false;
}

// `path` resolved (symlinks followed) lies inside `root` (already canonical).
bool inside(const fs::path& root, const fs::path& path) {
  auto r = root.begin(), p = path.begin();
  for (; r != root.end(); ++r, ++p) {
    if (p == path.end() || *r != *p) return false;
  }
  return true;
}

// Library errors name the server's folders ("not in the Hugging Face cache (/srv/hf/hub)"): an
// answer says "the server's Hugging Face cache" instead.
ApiError model_error(const Error& e, const ServerOptions& options) {
  ApiError out = from_library(e);
  std::string hub = server_hub_cache(options);
  for (std::size_t pos; !hub.empty() && (pos = out.message.find(" (" + hub + ")")) != std::string::npos;)
    out.message.erase(pos, hub.size() + 3);
  return out;
}

}  // namespace

std::string server_hub_cache(const ServerOptions& options) {
  if (!options.hf_hub_cache.empty()) return options.hf_hub_cache;
  if (const char* c = std::getenv("HF_HUB_CACHE"); c && *c) return c;
  if (const char* h = std::getenv("HF_HOME"); h && *h) return (fs::path(h) / "hub").string();
  if (const char* home = std::getenv("HOME"); home && *home) return (fs::path(home) / ".cache" / "huggingface" / "hub").string();
  return ".cache/huggingface/hub";
}

ApiResult<ModelSpec> load_requested_model(const std::string& ref, const ServerOptions& options) {
  if (ref.find('\0') != std::string::npos) return tl::unexpected(ApiError{400, "parse_error", "model contains a NUL byte", "model"});
  std::error_code ec;
  // load_model reads a folder or file before it looks anywhere else, relative to the server's
  // working folder too: anything that exists there is a local path.
  bool path_like = written_as_path(ref) || has_dot_dot(ref) || fs::exists(fs::path(ref), ec);
  ModelLoadOptions load;
  load.hf_hub_cache = options.hf_hub_cache;
  load.hub = options.hub.get();
  if (options.models_dir) {
    fs::path root = fs::canonical(*options.models_dir, ec);
    if (ec) return tl::unexpected(ApiError{500, "io_error", "the models folder cannot be read", "--models-dir"});
    fs::path candidate = fs::path(ref).is_absolute() ? fs::path(ref) : root / ref;
    if (has_dot_dot(ref))
      return tl::unexpected(forbidden("'..' is not allowed in a model path: name a folder below the models folder"));
    if (path_like || fs::exists(candidate, ec)) {
      fs::path real = fs::canonical(candidate, ec);
      if (ec) return tl::unexpected(ApiError{404, "not_found", "no model folder or config.json at this path below the models folder", "model"});
      if (!inside(root, real))
        return tl::unexpected(forbidden("the model path is outside the models folder this server was given (--models-dir)"));
      auto spec = load_model(real.string(), load);
      if (!spec) return tl::unexpected(from_library(spec.error()));
      spec->id = ref;
      return std::move(*spec);
    }
  } else if (path_like) {
    return tl::unexpected(forbidden(
        "local model paths are not served: name a catalogue or Hugging Face id (GET /v1/models lists them), or start the "
        "server with --models-dir DIR to serve the folders below DIR"));
  }
  auto spec = load_model(ref, load);
  if (!spec) return tl::unexpected(model_error(spec.error(), options));
  return std::move(*spec);
}

bool target_is_static(const TargetRequest& t) { return t.gpu_memory_gib || !(t.gpu.empty() || t.gpu == "auto"); }

ApiResult<GpuSetup> resolve_target_gpus(const TargetRequest& t, int needed, const ServerOptions& options,
                                        std::vector<std::string>& warnings) {
  // The server's policy first; the rest is gpu_setup.cc's, with the request's member names.
  if (t.used_gib && t.free_gib)
    return tl::unexpected(ApiError{422, "invalid_argument",
                                   "\"used_gib\" and \"free_gib\" describe the same memory: give one of them", "used_gib"});
  const bool live = !t.gpu_memory_gib && (t.gpu.empty() || t.gpu == "auto");
  if (live && !options.live_gpus)
    return tl::unexpected(ApiError{422, "invalid_argument",
                                   "no GPU given: name one with \"gpu\" (GET /v1/gpus lists the catalogue) or give its memory "
                                   "with \"gpu_memory_gib\" (this server does not offer its own GPUs: --live-gpus)",
                                   "gpu"});
  auto setup = resolve_gpu_setup(t, needed, warnings, TargetFieldNames::json());
  if (!setup) return tl::unexpected(from_library(setup.error()));
  return std::move(*setup);
}

ApiResult<VllmVersion> resolve_target_version(const TargetRequest& t) {
  if (t.vllm_version.empty()) return VllmVersion::newest_modelled();
  auto v = VllmVersion::parse(t.vllm_version);
  if (!v) {
    auto e = from_library(v.error());
    e.where = "vllm_version";
    return tl::unexpected(e);
  }
  return *v;
}

}  // namespace headroom::server
