// Reading one revision of a Hub repo: the file list (/api/models/{repo}/revision/{rev}), the small
// config files and, for every safetensors shard, the 8-byte length and JSON header by Range
// requests on /{repo}/resolve/{sha}/{file} (which redirects to the Hub's file storage). Requests of
// one step go out together through the transport; 429/5xx answers are retried.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <thread>

#include "hub/hub_errors.h"
#include "model/model_internal.h"
#include "hub/no_network_memo.h"

namespace headroom::hub {

namespace {

using detail::RequestContext;

const std::vector<std::string>& config_files() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> files = {"config.json", "params.json", "hf_quant_config.json", "tokenizer_config.json"};
    for (const auto& processor : model_detail::processor_configs()) files.push_back(processor.name);
    files.push_back("model.safetensors.index.json");
    return files;
  }();
  return k;
}

// Percent-encoding of a path segment (RFC 3986 unreserved characters stay); '/' stays when asked.
std::string encode(std::string_view s, bool keep_slash) {
  std::string out;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) out += ch;
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

std::optional<std::uint64_t> content_range_total(const HttpResult& r) {
  auto it = r.headers.find("content-range");
  if (it == r.headers.end()) return std::nullopt;
  auto slash = it->second.rfind('/');
  if (slash == std::string::npos) return std::nullopt;
  std::string total = it->second.substr(slash + 1);
  if (total.empty() || total.size() > 19 || !std::all_of(total.begin(), total.end(), ::isdigit)) return std::nullopt;
  return std::stoull(total);
}

class Fetcher {
 public:
  Fetcher(std::string repo, const HubSettings& s) : m_repo(std::move(repo)), m_s(s) {
    m_transport = s.transport;
    if (!m_transport) m_transport = detail::remembered_no_network(s);
    if (!m_transport) {
      m_note_reachability = true;
      TransportOptions o;
      o.connect_timeout_s = s.connect_timeout_s;
      o.total_timeout_s = s.total_timeout_s;
      o.max_parallel = s.max_parallel;
      o.token = s.token;
      m_transport = make_curl_transport(o);
    }
  }

  std::string api_url(const std::string& rev) const {
    return m_s.endpoint + "/api/models/" + m_repo + "/revision/" + encode(rev, false);
  }
  std::string resolve_url(const std::string& rev, const std::string& file) const {
    return m_s.endpoint + "/" + m_repo + "/resolve/" + encode(rev, false) + "/" + encode(file, true);
  }
  RequestContext context(const std::string& rev, const std::string& file) const { return {&m_s, m_repo, rev, file}; }

  // Performs `requests`, retrying those answered 429/5xx or cut (at most max_retries times, waiting
  // Retry-After when given, else 0.5 s doubling). `retries[i]` receives how often request i was retried.
  std::vector<HttpResult> run(const std::vector<HttpRequest>& requests_in, std::vector<int>& retries) {
    // Only the first request to the Hub gets the short connect timeout (see HttpRequest).
    std::vector<HttpRequest> requests = requests_in;
    for (auto& r : requests)
      if (!r.connect_timeout_s) r.connect_timeout_s = m_first ? m_s.connect_timeout_s : m_s.total_timeout_s;
    m_first = false;
    retries.assign(requests.size(), 0);
    m_progress.files_total += static_cast<int>(requests.size());
    auto on_done = [this](std::size_t, const HttpResult& r) {
      if (r.failure != TransportFailure::none || r.status >= 400 || r.status == 0) return;
      ++m_progress.files_done;
      m_progress.bytes += r.body.size();
      if (m_s.on_progress) m_s.on_progress(m_progress);
    };
    auto results = m_transport->perform(requests, on_done);
    // The first round says whether the Hub is reachable; later rounds of the same command add nothing.
    if (m_note_reachability) detail::note_reachability(m_s, results), m_note_reachability = false;
    for (int attempt = 0; attempt < m_s.max_retries; ++attempt) {
      std::vector<std::size_t> again;
      double wait = 0.5 * std::pow(2.0, attempt);
      bool asked = false;
      for (std::size_t i = 0; i < results.size(); ++i) {
        if (!detail::is_retryable(results[i])) continue;
        again.push_back(i);
        if (auto ra = detail::retry_after_s(results[i])) wait = asked ? std::max(wait, *ra) : *ra, asked = true;
      }
      if (again.empty() || wait > m_s.max_retry_wait_s) break;
      if (m_s.sleep) m_s.sleep(wait);
      else std::this_thread::sleep_for(std::chrono::duration<double>(wait));
      std::vector<HttpRequest> sub;
      for (auto i : again) sub.push_back(requests[i]);
      auto redo = m_transport->perform(sub, on_done);
      for (std::size_t k = 0; k < again.size(); ++k) {
        results[again[k]] = std::move(redo[k]);
        ++retries[again[k]];
      }
    }
    return results;
  }

  HttpResult run_one(const HttpRequest& request, int& retries) {
    std::vector<int> r;
    auto results = run({request}, r);
    retries = r[0];
    return std::move(results[0]);
  }

  const std::string& repo() const { return m_repo; }

 private:
  std::string m_repo;
  const HubSettings& m_s;
  std::shared_ptr<HttpTransport> m_transport;
  FetchProgress m_progress;
  bool m_first = true;
  bool m_note_reachability = false;  // the real transport: remember an unreachable Hub (no_network_memo.h)
};

bool ok(const HttpResult& r) { return r.failure == TransportFailure::none && r.status >= 200 && r.status < 300; }

std::string header_of(const HttpResult& r, const std::string& name) {
  if (auto it = r.first_headers.find(name); it != r.first_headers.end()) return it->second;
  if (auto it = r.headers.find(name); it != r.headers.end()) return it->second;
  return {};
}

// Reads the safetensors headers of `shards`: one range read each, then a second one for headers
// longer than the first read (straight from the storage URL the first was redirected to).
Result<std::vector<ShardHeader>> read_shards(Fetcher& f, const HubSettings& s, const std::string& sha,
                                             const std::vector<std::string>& shards) {
  std::vector<HttpRequest> requests;
  for (const auto& name : shards) {
    HttpRequest r;
    r.url = f.resolve_url(sha, name);
    r.authorize = true;
    r.range_begin = 0;
    r.range_end = s.initial_header_bytes - 1;
    r.max_body_bytes = s.initial_header_bytes;
    requests.push_back(std::move(r));
  }
  std::vector<int> retries;
  auto results = f.run(requests, retries);
  const std::string at = f.repo() + "@" + sha.substr(0, 7) + "/";
  std::vector<std::uint64_t> sizes(shards.size());
  std::vector<HttpRequest> more;
  std::vector<std::size_t> more_of;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const HttpResult& r = results[i];
    if (!ok(r)) return tl::unexpected(detail::request_error(r, f.context(sha, shards[i]), retries[i]));
    if (r.status == 200 && r.body.size() >= s.initial_header_bytes)
      return make_error(ErrorCode::unavailable, "the file server ignored the Range request (HTTP 200 with the whole file)",
                        at + shards[i]);
    std::optional<std::uint64_t> size = r.status == 200 ? std::optional<std::uint64_t>(r.body.size()) : content_range_total(r);
    if (!size) {
      std::string linked = header_of(r, "x-linked-size");
      if (!linked.empty() && linked.size() < 20 && std::all_of(linked.begin(), linked.end(), ::isdigit)) size = std::stoull(linked);
    }
    if (!size) return make_error(ErrorCode::parse_error, "the file server gave no file size (Content-Range)", at + shards[i]);
    sizes[i] = *size;
    auto length = safetensors_header_length(r.body, *size, at + shards[i]);
    if (!length) return tl::unexpected(length.error());
    if (8 + *length > r.body.size()) {
      HttpRequest rest;
      rest.url = r.effective_url;
      rest.range_begin = r.body.size();
      rest.range_end = 8 + *length - 1;
      rest.max_body_bytes = static_cast<std::size_t>(8 + *length - r.body.size());
      more.push_back(std::move(rest));
      more_of.push_back(i);
    }
  }
  if (!more.empty()) {
    auto rest = f.run(more, retries);
    for (std::size_t k = 0; k < more.size(); ++k) {
      if (!ok(rest[k])) return tl::unexpected(detail::request_error(rest[k], f.context(sha, shards[more_of[k]]), retries[k]));
      results[more_of[k]].body += rest[k].body;
    }
  }
  std::vector<ShardHeader> headers;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    auto tensors = parse_safetensors_header(results[i].body, sizes[i], at + shards[i]);
    if (!tensors) return tl::unexpected(tensors.error());
    headers.push_back(ShardHeader{shards[i], sizes[i], std::move(*tensors)});
  }
  return headers;
}

}  // namespace

Result<std::string> resolve_revision(const std::string& repo, const HubSettings& s) {
  if (is_commit_sha(s.revision)) return s.revision;
  Fetcher f(repo, s);
  HttpRequest head;
  head.url = f.resolve_url(s.revision, "config.json");
  head.head = true;
  head.authorize = true;
  int retries = 0;
  HttpResult r = f.run_one(head, retries);
  std::string sha = header_of(r, "x-repo-commit");
  if (r.failure == TransportFailure::none && is_commit_sha(sha)) return sha;
  if (!ok(r)) return tl::unexpected(detail::request_error(r, f.context(s.revision, ""), retries));
  return make_error(ErrorCode::parse_error, "the Hub's answer carries no X-Repo-Commit header",
                    repo + "@" + s.revision + "/config.json");
}

Result<HubSnapshot> fetch_snapshot(const std::string& repo, const HubSettings& s) {
  Fetcher f(repo, s);
  HttpRequest listing;
  listing.url = f.api_url(s.revision);
  listing.authorize = true;
  int retries = 0;
  HttpResult lr = f.run_one(listing, retries);
  if (!ok(lr)) return tl::unexpected(detail::request_error(lr, f.context(s.revision, ""), retries));
  auto list = parse_file_list(lr.body, repo + "@" + s.revision + " (file list)");
  if (!list) return tl::unexpected(list.error());

  HubSnapshot snap;
  snap.repo = list->repo.empty() ? repo : list->repo;
  snap.sha = list->sha;
  snap.files = list->files;
  snap.fetched_unix_s = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::set<std::string> present(list->files.begin(), list->files.end());

  std::vector<std::string> wanted;
  for (const auto& name : config_files())
    if (present.count(name)) wanted.push_back(name);
  std::vector<HttpRequest> requests;
  for (const auto& name : wanted) {
    HttpRequest r;
    r.url = f.resolve_url(snap.sha, name);
    r.authorize = true;
    requests.push_back(std::move(r));
  }
  std::vector<int> file_retries;
  auto results = f.run(requests, file_retries);
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    if (!ok(results[i])) return tl::unexpected(detail::request_error(results[i], f.context(snap.sha, wanted[i]), file_retries[i]));
    snap.json_files[wanted[i]] = std::move(results[i].body);
  }

  // The shards: those the index names (Mistral repos also hold consolidated.safetensors, which
  // vLLM does not load beside an index), else every top-level .safetensors file.
  std::vector<std::string> shards;
  if (auto idx = snap.json_files.find("model.safetensors.index.json"); idx != snap.json_files.end()) {
    auto names = parse_safetensors_index(idx->second, snap.repo + "@" + snap.sha.substr(0, 7) + "/model.safetensors.index.json");
    if (!names) return tl::unexpected(names.error());
    std::vector<std::string> missing;
    for (const auto& n : *names)
      if (!present.count(n)) missing.push_back(n);
    if (!missing.empty()) {
      std::vector<std::string> shown(missing.begin(), missing.begin() + static_cast<long>(std::min<std::size_t>(missing.size(), 3)));
      if (missing.size() > 3) shown.push_back("...");
      return make_error(ErrorCode::not_found,
                        fmt::format("model.safetensors.index.json names {} shard{} that the repo does not hold: {}",
                                    missing.size(), missing.size() == 1 ? "" : "s", fmt::join(shown, ", ")),
                        snap.repo + "@" + snap.sha.substr(0, 7));
    }
    shards = std::move(*names);
  } else {
    for (const auto& n : list->files)
      if (n.find('/') == std::string::npos && n.ends_with(".safetensors")) shards.push_back(n);
    std::sort(shards.begin(), shards.end());
  }
  if (!shards.empty()) {
    auto headers = read_shards(f, s, snap.sha, shards);
    if (!headers) return tl::unexpected(headers.error());
    snap.shards = std::move(*headers);
  }
  return snap;
}

}  // namespace headroom::hub
