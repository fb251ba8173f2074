// The Hub as a model source: headroom's Hub metadata cache first (by commit sha), the Hub itself
// when the cache does not hold the revision, and the cache again when the Hub cannot be reached.
#include <fmt/format.h>

#include <algorithm>

#include "headroom/hub.h"
#include "model/model_internal.h"

namespace headroom::hub {

namespace {

std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

// Whether an entry lists a file headroom reads now but an older headroom did not fetch
// (preprocessor_config.json and video_preprocessor_config.json size a vision model's dummy input).
bool lacks_files_read_now(const HubSnapshot& snap) {
  for (const auto& later : model_detail::processor_configs())
    if (std::find(snap.files.begin(), snap.files.end(), later.name) != snap.files.end() && !snap.json_files.count(later.name))
      return true;
  return false;
}

// The cached snapshot of `sha`, nullopt when absent; a corrupt entry is a note and a miss. With
// `complete_only`, an entry lacking a file headroom now reads is a miss too, so that the Hub is
// asked again while it answers.
Result<std::optional<HubSnapshot>> from_cache(const HubCache& cache, const std::string& repo, const std::string& sha,
                                              std::vector<std::string>& notes, bool complete_only = false) {
  auto snap = cache.load(repo, sha);
  if (!snap) {
    notes.push_back("ignoring a damaged Hub cache entry (" + snap.error().to_string() + ")");
    return std::optional<HubSnapshot>{};
  }
  if (!*snap || (complete_only && lacks_files_read_now(**snap))) return std::optional<HubSnapshot>{};
  return std::move(*snap);
}

}  // namespace

Result<std::optional<HubSnapshot>> load_cached_snapshot(const std::string& repo, const HubSettings& s,
                                                        std::vector<std::string>& notes) {
  HubCache cache(s.cache_dir);
  std::optional<std::string> sha = is_commit_sha(s.revision) ? std::optional<std::string>(s.revision) : cache.ref(repo, s.revision);
  if (!sha) return std::optional<HubSnapshot>{};
  return from_cache(cache, repo, *sha, notes);
}

Result<HubSnapshot> load_hub_snapshot(const std::string& repo, const HubSettings& s, std::vector<std::string>& notes) {
  HubCache cache(s.cache_dir);
  // A commit sha names one immutable snapshot: the cache answers without a request.
  std::optional<std::string> cached_sha;  // a cached entry to fall back on when the Hub does not answer
  if (is_commit_sha(s.revision)) {
    HR_TRY(cached, from_cache(cache, repo, s.revision, notes, true));
    if (cached) return std::move(*cached);
    cached_sha = s.revision;
  } else if (auto known = cache.ref(repo, s.revision)) {
    // A branch or tag fetched before: one small request says whether it still points there.
    auto sha = resolve_revision(repo, s);
    if (!sha) {
      if (!is_no_network(sha.error())) return tl::unexpected(sha.error());
      HR_TRY(cached, from_cache(cache, repo, *known, notes));
      if (!cached) return tl::unexpected(sha.error());
      notes.push_back(fmt::format("the Hub is unreachable; using {}@{} from headroom's Hub cache", repo, short_sha(*known)));
      return std::move(*cached);
    }
    HR_TRY(cached, from_cache(cache, repo, *sha, notes, true));
    if (cached) return std::move(*cached);
    cached_sha = *sha;
  }
  auto snap = fetch_snapshot(repo, s);
  if (!snap && cached_sha && is_no_network(snap.error())) {
    auto cached = from_cache(cache, repo, *cached_sha, notes);
    if (cached && *cached) return std::move(**cached);
  }
  if (!snap) return tl::unexpected(snap.error());
  if (auto stored = cache.store(*snap, s.revision); !stored)
    notes.push_back("the Hub cache was not written: " + stored.error().to_string());
  return std::move(*snap);
}

Result<std::optional<ModelSpec>> load_cached_model(const std::string& repo, const HubSettings& s,
                                                   std::vector<std::string>& notes) {
  HR_TRY(snap, load_cached_snapshot(repo, s, notes));
  if (!snap) return std::optional<ModelSpec>{};
  HR_TRY(spec, model_from_snapshot(*snap, notes));
  return std::optional<ModelSpec>(std::move(spec));
}

Result<ModelSpec> load_hub_model(const std::string& repo, const HubSettings& s, std::vector<std::string>& notes) {
  HR_TRY(snap, load_hub_snapshot(repo, s, notes));
  return model_from_snapshot(snap, notes);
}

}  // namespace headroom::hub
