// The Hugging Face Hub as a source of model facts: a repo's config files and the exact weight bytes
// from its safetensors headers, read with HTTP range requests (nothing else is downloaded) and kept
// in headroom's Hub metadata cache. I/O goes through HttpTransport (libcurl, or a fake in tests).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/error.h"
#include "headroom/model.h"
#include "headroom/units.h"

namespace headroom::hub {

// ---- Transport ---------------------------------------------------------------------------------

struct HttpRequest {
  std::string url;
  bool head = false;                       // HEAD instead of GET
  bool authorize = false;                  // send the token (only to the Hub's own endpoint)
  std::optional<std::uint64_t> range_end;  // "Range: bytes=range_begin-range_end" (inclusive)
  std::uint64_t range_begin = 0;
  std::size_t max_body_bytes = 16 * 1024 * 1024;
  // Limit on name resolution + connection for this request; unset: the transport's. The first
  // request to the Hub uses the short one (an unreachable Hub is detected at once); later ones,
  // to a Hub known to answer, wait as long as the whole request may.
  std::optional<double> connect_timeout_s;
};

// Why a request produced no HTTP answer.
enum class TransportFailure { none, resolve, connect, timeout, cut, too_large, other };

struct HttpResult {
  TransportFailure failure = TransportFailure::none;
  std::string detail;  // what went wrong, when failure != none
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;        // of the last response, names in lower case
  std::map<std::string, std::string> first_headers;  // of the first response (before redirects)
  std::string effective_url;                          // after redirects
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Performs every request (in parallel, bounded by the transport's limit) and returns the results
  // in request order. `on_done(i, result)` is called as each finishes (on the calling thread).
  virtual std::vector<HttpResult> perform(const std::vector<HttpRequest>& requests,
                                          const std::function<void(std::size_t, const HttpResult&)>& on_done) = 0;
};

struct TransportOptions {
  double connect_timeout_s = 1.0;  // name resolution + TCP + TLS
  double total_timeout_s = 30.0;   // per request
  int max_parallel = 32;           // requests in flight at once
  std::string token;               // Bearer token for requests with authorize = true; never logged
};

// libcurl multi: parallel transfers, connections kept alive between perform() calls, redirects
// followed, proxies from libcurl's usual environment variables (https_proxy, no_proxy, ...).
std::unique_ptr<HttpTransport> make_curl_transport(const TransportOptions& options);

// ---- Settings ----------------------------------------------------------------------------------

struct FetchProgress {
  int files_done = 0;
  int files_total = 0;
  std::uint64_t bytes = 0;  // bytes received so far
};

struct HubSettings {
  std::string endpoint = "https://huggingface.co";  // HF_ENDPOINT
  std::string token;                                // HF_TOKEN, HUGGING_FACE_HUB_TOKEN, $HF_HOME/token
  std::string revision = "main";                    // branch, tag or commit sha (--revision)
  bool offline = false;                             // --offline or HF_HUB_OFFLINE=1: cache only
  std::string cache_dir;                            // $XDG_CACHE_HOME/headroom/hub
  double connect_timeout_s = 1.0;
  double total_timeout_s = 30.0;
  int max_parallel = 32;
  int max_retries = 3;             // for 429 and 5xx answers
  double max_retry_wait_s = 10.0;  // a longer Retry-After is reported instead of waited for
  std::uint64_t initial_header_bytes = 128 * 1024;  // first range read of each shard
  // After the Hub was found unreachable, how long later commands fall back at once without asking
  // it again (HEADROOM_HUB_RETRY_AFTER_S; 0 asks every time). See src/hub/no_network_memo.h.
  double no_network_memo_s = 60;
  std::function<void(const FetchProgress&)> on_progress;
  // Injected for tests: the transport (default libcurl) and how to wait between retries.
  std::shared_ptr<HttpTransport> transport;
  std::function<void(double seconds)> sleep;
};

// Settings from the environment: HF_ENDPOINT, HF_HUB_OFFLINE, HF_TOKEN, HUGGING_FACE_HUB_TOKEN,
// the token file ($HF_TOKEN_PATH, else $HF_HOME/token, else ~/.cache/huggingface/token) and
// XDG_CACHE_HOME / HOME for the cache folder.
HubSettings settings_from_environment();

// Whether `ref` has the shape of a Hub repo id ("org/name", letters, digits, - _ .).
bool is_repo_id(std::string_view ref);

// Errors that mean the Hub could not be reached at all (no name resolution, no connection within
// the connect timeout) start with this: the model loader then falls back at once.
inline constexpr std::string_view k_no_network_prefix = "no network: ";
inline bool is_no_network(const Error& e) { return e.message.starts_with(k_no_network_prefix); }

// Whether `revision` is a full 40-hex commit sha.
bool is_commit_sha(std::string_view revision);

// A model's page or file address on the Hub, as copied from a browser:
// [https://]huggingface.co/OWNER/NAME[/tree/REV | /blob/REV/... | /resolve/REV/...][?...][#...]
// (also hf.co). nullopt for anything else, Dataset and Space addresses included.
struct RepoAddress {
  std::string repo;      // OWNER/NAME
  std::string revision;  // REV, percent-decoded ("" when the address names none)
};
std::optional<RepoAddress> parse_repo_address(std::string_view text);

// ---- What the Hub holds for one repo revision ----------------------------------------------------

struct ShardHeader {
  std::string file;
  std::uint64_t file_size = 0;
  std::vector<TensorInfo> tensors;
};

// The facts read for one repo at one commit: what the cache stores (never a token).
struct HubSnapshot {
  std::string repo;  // as the Hub spells it
  std::string sha;   // commit
  std::vector<std::string> files;                  // the revision's file list
  std::map<std::string, std::string> json_files;   // config.json, params.json, ... (text)
  std::vector<ShardHeader> shards;                 // in the index's order
  std::int64_t fetched_unix_s = 0;
};

// Parses the answer of /api/models/{repo}/revision/{rev}: "sha" and "siblings"[].rfilename.
// Errors: parse_error naming `origin`.
struct FileList {
  std::string repo;
  std::string sha;
  std::vector<std::string> files;
};
Result<FileList> parse_file_list(std::string_view json_text, const std::string& origin);

// Reads the Hub revision of `repo`: file list, config files, every shard's safetensors header
// (range reads, in parallel). Errors (code, message) as docs/models.md lists them: gated,
// unknown repo or revision, rate limits, timeouts, no network (code unavailable), hostile headers.
Result<HubSnapshot> fetch_snapshot(const std::string& repo, const HubSettings& settings);

// The commit sha `revision` of `repo` points at (one HEAD request). Errors as fetch_snapshot.
Result<std::string> resolve_revision(const std::string& repo, const HubSettings& settings);

// Builds the ModelSpec of a snapshot (source hub): config.json (or params.json), tokenizer and
// quantization files, exact weights from the shard headers. `notes` receives warnings such as a
// repo without safetensors files (weights then come from the architecture).
Result<ModelSpec> model_from_snapshot(const HubSnapshot& snapshot, std::vector<std::string>& notes);

// The exact weights inventory of a snapshot's shard headers (every tensor, in the index's order);
// empty when the repo has no safetensors shards.
WeightsInventory shard_inventory(const HubSnapshot& snapshot);

// The snapshot `repo` at settings.revision, as load_hub_model reads it (cache, Hub, cache again),
// and the cache's alone (offline; nullopt when absent): for a repo another repo's config names
// (Ultravox's text_model_id and audio_model_id), whose files are read, not modelled.
Result<HubSnapshot> load_hub_snapshot(const std::string& repo, const HubSettings& settings, std::vector<std::string>& notes);
Result<std::optional<HubSnapshot>> load_cached_snapshot(const std::string& repo, const HubSettings& settings,
                                                        std::vector<std::string>& notes);

// The model `repo` at settings.revision: from headroom's Hub cache when it holds that commit (a
// branch or tag costs one HEAD request to learn its commit; a sha none), else read from the Hub and
// cached. An unreachable Hub falls back to the last cached commit of the revision, with a note.
Result<ModelSpec> load_hub_model(const std::string& repo, const HubSettings& settings, std::vector<std::string>& notes);

// The cache alone (offline): the cached commit of settings.revision, or nullopt.
Result<std::optional<ModelSpec>> load_cached_model(const std::string& repo, const HubSettings& settings,
                                                   std::vector<std::string>& notes);

// ---- Cache -------------------------------------------------------------------------------------

struct CachedRepo {
  std::string repo;
  std::string sha;
  std::vector<std::string> refs;  // revisions known to point at sha
  std::uint64_t bytes = 0;        // size of the cache file
  std::int64_t fetched_unix_s = 0;
  int shard_count = 0;
};

// headroom's Hub metadata cache under `dir`: one file per repo and commit, written atomically
// (temp file + rename), plus one small file per revision name that records its last sha.
class HubCache {
 public:
  explicit HubCache(std::string dir) : m_dir(std::move(dir)) {}
  const std::string& dir() const { return m_dir; }

  // nullopt when not cached; errors only for unreadable or corrupt files.
  Result<std::optional<HubSnapshot>> load(const std::string& repo, const std::string& sha) const;
  Result<void> store(const HubSnapshot& snapshot, const std::string& revision) const;
  // The sha a revision name pointed at when last fetched.
  std::optional<std::string> ref(const std::string& repo, const std::string& revision) const;
  std::vector<CachedRepo> list() const;
  std::vector<std::string> repo_ids() const;
  // Removes every entry (or only those of `repo`); returns how many files were removed.
  Result<int> clear(const std::string& repo = {}) const;

 private:
  std::string m_dir;
};

}  // namespace headroom::hub
