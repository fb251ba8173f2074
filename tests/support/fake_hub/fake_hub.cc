#include "fake_hub.h"

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "headroom/model.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace headroom::testing {

namespace fs = std::filesystem;

namespace {

void nodelay(httplib::Server& s) {
  s.set_socket_options([](socket_t sock) {
    httplib::default_socket_options(sock);
    int yes = 1;
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
  });
}

// cpp-httplib (Debian's compiled 0.11) listens with a backlog of 5: a client opening 32 connections
// at once would see SYNs dropped and retried a second later. Linux lets listen() be called again
// on the listening socket to raise it; the socket is found by its port.
void widen_backlog(int port) {
  for (int fd = 0; fd < 4096; ++fd) {
    int listening = 0;
    socklen_t len = sizeof listening;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || listening == 0) continue;
    sockaddr_in addr{};
    socklen_t alen = sizeof addr;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &alen) == 0 && addr.sin_family == AF_INET &&
        ntohs(addr.sin_port) == port)
      listen(fd, 1024);
  }
}

void sleep_ms(int ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// The Hub's error answer: status, X-Error-Code, X-Error-Message and a JSON body.
void hub_error(httplib::Response& res, int status, const std::string& code, const std::string& message) {
  res.status = status;
  if (!code.empty()) res.set_header("X-Error-Code", code);
  res.set_header("X-Error-Message", message);
  res.set_content(nlohmann::json{{"error", message}}.dump(), "application/json");
}

std::string bearer(const httplib::Request& req) {
  std::string auth = req.get_header_value("Authorization");
  return auth.starts_with("Bearer ") ? auth.substr(7) : std::string();
}

}  // namespace

FakeHub::FakeHub(std::string accepted_token, int latency_ms) : m_token(std::move(accepted_token)), m_latency_ms(latency_ms) {
  start();
}

FakeHub::~FakeHub() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stopping = true;
  }
  m_stopping_cv.notify_all();
  m_hub->stop();
  m_storage->stop();
  if (m_hub_thread.joinable()) m_hub_thread.join();
  if (m_storage_thread.joinable()) m_storage_thread.join();
}

void FakeHub::add_repo(FakeRepo repo) {
  if (repo.refs.empty()) repo.refs["main"] = repo.sha;
  std::lock_guard<std::mutex> lock(m_mutex);
  m_repos[util::to_lower(repo.id)] = std::move(repo);
}

std::string FakeHub::endpoint() const { return "http://127.0.0.1:" + std::to_string(m_hub_port); }

FakeHubStats FakeHub::stats() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_stats;
}

void FakeHub::reset_stats() {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_stats = {};
}

const FakeRepo* FakeHub::find_repo(const std::string& id) const {
  auto it = m_repos.find(util::to_lower(id));
  return it == m_repos.end() ? nullptr : &it->second;
}

void FakeHub::start() {
  m_hub = std::make_unique<httplib::Server>();
  m_storage = std::make_unique<httplib::Server>();
  nodelay(*m_hub);
  nodelay(*m_storage);
  m_hub->new_task_queue = [] { return new httplib::ThreadPool(64); };
  m_storage->new_task_queue = [] { return new httplib::ThreadPool(64); };
  m_hub_port = m_hub->bind_to_any_port("127.0.0.1");
  m_storage_port = m_storage->bind_to_any_port("127.0.0.1");
  if (m_hub_port <= 0 || m_storage_port <= 0) throw std::runtime_error("fake Hub: cannot bind to 127.0.0.1");
  widen_backlog(m_hub_port);
  widen_backlog(m_storage_port);
  install_hub_routes();
  install_storage_routes();
  m_hub_thread = std::thread([this] { m_hub->listen_after_bind(); });
  m_storage_thread = std::thread([this] { m_storage->listen_after_bind(); });
  while (!m_hub->is_running() || !m_storage->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void FakeHub::install_hub_routes() {
  m_hub->Get("/__stats", [this](const httplib::Request&, httplib::Response& res) {
    FakeHubStats st = stats();
    res.set_content(nlohmann::json{{"hub_requests", st.hub_requests},
                                   {"storage_requests", st.storage_requests},
                                   {"storage_with_authorization", st.storage_with_authorization}}
                        .dump(),
                    "application/json");
  });
  // Checks shared by the API and /resolve/: the repo, access, scripted failures, the revision.
  // Returns the repo and the sha, or nullptr after writing the error answer.
  auto admit = [this](const httplib::Request& req, httplib::Response& res, const std::string& id,
                      const std::string& rev, std::string& sha) -> const FakeRepo* {
    sleep_ms(m_latency_ms);
    std::lock_guard<std::mutex> lock(m_mutex);
    ++m_stats.hub_requests;
    const FakeRepo* repo = find_repo(id);
    std::string token = bearer(req);
    if (repo == nullptr) {
      // Like the Hub: without a token a missing repo is 401 (it might be private).
      hub_error(res, token.empty() ? 401 : 404, "RepoNotFound", "Repository not found");
      return nullptr;
    }
    if (repo->always_503) {
      hub_error(res, 503, "", "Service Unavailable");
      res.set_header("Retry-After", "0");
      return nullptr;
    }
    if (repo->rate_limit_first > 0 && m_rate_limited[repo->id] < repo->rate_limit_first) {
      ++m_rate_limited[repo->id];
      hub_error(res, 429, "", "You have been rate-limited; you can retry this action in about 1 second.");
      res.set_header("Retry-After", repo->retry_after);
      return nullptr;
    }
    if (repo->gated && token != m_token) {
      if (token.empty())
        hub_error(res, 401, "GatedRepo", "Access to model " + repo->id + " is restricted. You must have access to it and be authenticated to access it. Please log in.");
      else
        hub_error(res, 403, "GatedRepo", "Access to model " + repo->id + " is restricted and you are not in the authorized list. Visit https://huggingface.co/" + repo->id + " to ask for access.");
      return nullptr;
    }
    if (auto r = repo->refs.find(rev); r != repo->refs.end()) sha = r->second;
    else if (rev == repo->sha) sha = repo->sha;
    else {
      hub_error(res, 404, "RevisionNotFound", "Invalid rev id: " + rev);
      return nullptr;
    }
    return repo;
  };

  m_hub->Get(R"(/api/models/([^/]+)/([^/]+)/revision/([^/]+))", [this, admit](const httplib::Request& req, httplib::Response& res) {
    std::string id = req.matches[1].str() + "/" + req.matches[2].str(), sha;
    const FakeRepo* repo = admit(req, res, id, req.matches[3].str(), sha);
    if (repo == nullptr) return;
    nlohmann::json j = {{"_id", "fake" + repo->sha.substr(0, 8)}, {"id", repo->id},     {"modelId", repo->id},
                        {"sha", sha},                              {"private", false}, {"gated", repo->gated ? nlohmann::json("manual") : nlohmann::json(false)},
                        {"siblings", nlohmann::json::array()}};
    for (const auto& [name, f] : repo->files) j["siblings"].push_back({{"rfilename", name}});
    res.set_content(j.dump(), "application/json");
  });

  m_hub->Get(R"(/([^/]+)/([^/]+)/resolve/([^/]+)/(.+))", [this, admit](const httplib::Request& req, httplib::Response& res) {
    std::string id = req.matches[1].str() + "/" + req.matches[2].str(), sha;
    const FakeRepo* repo = admit(req, res, id, req.matches[3].str(), sha);
    if (repo == nullptr) return;
    std::string file = req.matches[4].str();
    res.set_header("X-Repo-Commit", sha);
    auto it = repo->files.find(file);
    if (it == repo->files.end()) {
      hub_error(res, 404, "EntryNotFound", "Entry not found");
      res.set_header("X-Repo-Commit", sha);
      return;
    }
    std::string etag = "\"" + util::sha256_hex(repo->id + file).substr(0, 40) + "\"";
    if (it->second.lfs) {
      // Large files live in the file storage: a redirect with the file's size and hash.
      res.set_header("X-Linked-Size", std::to_string(it->second.size));
      res.set_header("X-Linked-Etag", etag);
      res.set_header("ETag", etag);
      res.set_redirect("http://127.0.0.1:" + std::to_string(m_storage_port) + "/lfs/" + repo->id + "/" + sha + "/" + file, 302);
      return;
    }
    res.set_header("ETag", etag);
    res.set_content(it->second.head, "application/json");
  });
}

void FakeHub::install_storage_routes() {
  m_storage->Get(R"(/lfs/([^/]+)/([^/]+)/([0-9a-f]{40})/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    sleep_ms(m_latency_ms);
    FakeFile file;
    bool cut = false;
    int slow_ms = 0;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      ++m_stats.storage_requests;
      if (req.has_header("Authorization")) ++m_stats.storage_with_authorization;
      const FakeRepo* repo = find_repo(req.matches[1].str() + "/" + req.matches[2].str());
      std::string name = req.matches[4].str();
      auto it = repo != nullptr ? repo->files.find(name) : std::map<std::string, FakeFile>::const_iterator{};
      if (repo == nullptr || it == repo->files.end()) {
        res.status = 404;
        res.set_content("NoSuchKey", "text/plain");
        return;
      }
      file = it->second;
      cut = repo->cut_file == name;
      if (repo->slow_file == name) slow_ms = repo->slow_ms;
    }
    if (slow_ms > 0) {  // until slow_ms pass or the hub stops, whichever is first
      std::unique_lock<std::mutex> lock(m_mutex);
      m_stopping_cv.wait_for(lock, std::chrono::milliseconds(slow_ms), [this] { return m_stopping; });
    }
    // httplib answers a Range request through the provider: 206 with Content-Range.
    res.set_content_provider(
        file.size, "application/octet-stream",
        [file, cut](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
          std::string chunk(std::min<std::size_t>(length, 1 << 20), '\0');
          for (std::size_t i = 0; i < chunk.size(); ++i)
            if (offset + i < file.head.size()) chunk[i] = file.head[offset + i];
          if (cut) {
            sink.write(chunk.data(), std::min<std::size_t>(chunk.size(), 8 + (file.head.size() - 8) / 2));
            return false;  // the connection closes in the middle of the header
          }
          sink.write(chunk.data(), chunk.size());
          return true;
        });
  });
}

// ---- Fixtures ------------------------------------------------------------------------------------

std::string safetensors_head(const std::string& header_json) {
  std::string out(8, '\0');
  std::uint64_t n = header_json.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header_json;
}

FakeRepo make_fixture_repo(const std::string& id, const std::string& config_text, int shards) {
  auto spec = parse_model_config_text(config_text, id + "/config.json");
  if (!spec) throw std::runtime_error(spec.error().to_string());
  WeightsInventory inv = synthesize_weights(*spec);
  FakeRepo repo;
  repo.id = id;
  repo.sha = util::sha256_hex(id + config_text + std::to_string(shards)).substr(0, 40);
  repo.files["config.json"] = FakeFile{config_text, config_text.size(), false};
  const std::size_t n = inv.tensors.size();
  nlohmann::json weight_map = nlohmann::json::object();
  for (int k = 0; k < shards; ++k) {
    char name[64];
    std::snprintf(name, sizeof name, shards == 1 ? "model.safetensors" : "model-%05d-of-%05d.safetensors", k + 1, shards);
    nlohmann::json header = {{"__metadata__", {{"format", "pt"}}}};
    std::uint64_t offset = 0;
    for (std::size_t i = n * static_cast<std::size_t>(k) / static_cast<std::size_t>(shards);
         i < n * static_cast<std::size_t>(k + 1) / static_cast<std::size_t>(shards); ++i) {
      const TensorInfo& t = inv.tensors[i];
      auto bytes = static_cast<std::uint64_t>(t.bytes);
      header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
      offset += bytes;
      weight_map[t.name] = name;
    }
    std::string head = safetensors_head(header.dump());
    repo.files[name] = FakeFile{head, head.size() + offset, true};
  }
  if (shards > 1) {
    std::string index = nlohmann::json{{"metadata", {{"total_size", inv.total_bytes}}}, {"weight_map", weight_map}}.dump();
    repo.files["model.safetensors.index.json"] = FakeFile{index, index.size(), false};
  }
  return repo;
}

void write_local_copy(const FakeRepo& repo, const std::string& dir) {
  fs::create_directories(dir);
  for (const auto& [name, f] : repo.files) {
    fs::path p = fs::path(dir) / name;
    fs::create_directories(p.parent_path());
    {
      std::ofstream out(p, std::ios::binary | std::ios::trunc);
      out << f.head;
    }
    if (f.size > f.head.size()) fs::resize_file(p, f.size);  // sparse: no disk for the zeros
  }
}

}  // namespace headroom::testing
