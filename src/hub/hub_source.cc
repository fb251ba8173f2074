// The Hub as a model source: headroom's Hub metadata cache first (by commit sha), the Hub itself
// when the cache does not hold the revision, and the cache again when the Hub cannot be reached.
#include <fmt/format.h>

#include "headroom/hub.h"

namespace headroom::hub {

namespace {

std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

// The cached snapshot of `sha` as a model, nullopt when absent; a corrupt entry is a note and a miss.
Result<std::optional<ModelSpec>> from_cache(const HubCache& cache, const std::string& repo, const std::string& sha,
                                            std::vector<std::string>& notes) {
  auto snap = cache.load(repo, sha);
  if (!snap) {
    notes.push_back("ignoring a damaged Hub cache entry (" + snap.error().to_string() + ")");
    return std::optional<ModelSpec>{};
  }
  if (!*snap) return std::optional<ModelSpec>{};
  auto spec = model_from_snapshot(**snap, notes);
  if (!spec) return tl::unexpected(spec.error());
  return std::optional<ModelSpec>(std::move(*spec));
}

}  // namespace

Result<std::optional<ModelSpec>> load_cached_model(const std::string& repo, const HubSettings& s,
                                                   std::vector<std::string>& notes) {
  HubCache cache(s.cache_dir);
  std::optional<std::string> sha = is_commit_sha(s.revision) ? std::optional<std::string>(s.revision) : cache.ref(repo, s.revision);
  if (!sha) return std::optional<ModelSpec>{};
  return from_cache(cache, repo, *sha, notes);
}

Result<ModelSpec> load_hub_model(const std::string& repo, const HubSettings& s, std::vector<std::string>& notes) {
  HubCache cache(s.cache_dir);
  // A commit sha names one immutable snapshot: the cache answers without a request.
  if (is_commit_sha(s.revision)) {
    auto cached = from_cache(cache, repo, s.revision, notes);
    if (!cached) return tl::unexpected(cached.error());
    if (*cached) return std::move(**cached);
  } else if (auto known = cache.ref(repo, s.revision)) {
    // A branch or tag fetched before: one small request says whether it still points there.
    auto sha = resolve_revision(repo, s);
    if (!sha) {
      if (!is_no_network(sha.error())) return tl::unexpected(sha.error());
      auto cached = from_cache(cache, repo, *known, notes);
      if (!cached) return tl::unexpected(cached.error());
      if (*cached) {
        notes.push_back(fmt::format("the Hub is unreachable; using {}@{} from headroom's Hub cache", repo, short_sha(*known)));
        return std::move(**cached);
      }
      return tl::unexpected(sha.error());
    }
    auto cached = from_cache(cache, repo, *sha, notes);
    if (!cached) return tl::unexpected(cached.error());
    if (*cached) return std::move(**cached);
  }
  auto snap = fetch_snapshot(repo, s);
  if (!snap) return tl::unexpected(snap.error());
  if (auto stored = cache.store(*snap, s.revision); !stored)
    notes.push_back("the Hub cache was not written: " + stored.error().to_string());
  return model_from_snapshot(*snap, notes);
}

}  // namespace headroom::hub
