// A loopback stand-in for the Hugging Face Hub (cpp-httplib): the model API
// (/api/models/{repo}/revision/{rev}), /{repo}/resolve/{rev}/{file} with the Hub's headers
// (X-Repo-Commit, ETag, X-Linked-Etag, X-Linked-Size, X-Error-Code), and a second host:port that
// plays the file storage large files are redirected to, answering Range requests (206,
// Content-Range). Scripted misbehaviour: gated repos, 429 with Retry-After, 503, a slow shard, a
// connection cut in the middle of a safetensors header, added latency on every request.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Server;
}

namespace headroom::testing {

struct FakeFile {
  std::string head;         // the first bytes (a whole small file, or a safetensors length + header)
  std::uint64_t size = 0;   // the whole file's size; bytes after `head` are zeros
  bool lfs = false;         // served through a redirect to the storage host
};

struct FakeRepo {
  std::string id;
  std::string sha;                          // 40 hex
  std::map<std::string, std::string> refs;  // branch or tag → sha (main → sha by default)
  std::map<std::string, FakeFile> files;
  bool gated = false;          // needs the fake's accepted token
  int rate_limit_first = 0;    // the first N API/resolve requests answer 429 with Retry-After
  std::string retry_after = "1";
  bool always_503 = false;     // every request answers 503
  std::string slow_file;       // the storage host answers this file after slow_ms
  int slow_ms = 0;
  std::string cut_file;        // the storage host cuts the connection in the middle of this file's header
};

struct FakeHubStats {
  int hub_requests = 0;
  int storage_requests = 0;
  int storage_with_authorization = 0;  // requests that reached the storage host with a token
};

class FakeHub {
 public:
  // `accepted_token`: the token that opens gated repos. `latency_ms`: added to every request.
  explicit FakeHub(std::string accepted_token = "hf_fake_accepted_token", int latency_ms = 0);
  ~FakeHub();
  FakeHub(const FakeHub&) = delete;
  FakeHub& operator=(const FakeHub&) = delete;

  void add_repo(FakeRepo repo);
  std::string endpoint() const;  // http://127.0.0.1:PORT (what HF_ENDPOINT is set to)
  int hub_port() const { return m_hub_port; }
  int storage_port() const { return m_storage_port; }
  FakeHubStats stats() const;
  void reset_stats();

 private:
  void start();
  void install_hub_routes();
  void install_storage_routes();
  const FakeRepo* find_repo(const std::string& id) const;

  std::string m_token;
  int m_latency_ms;
  mutable std::mutex m_mutex;
  std::condition_variable m_stopping_cv;  // wakes a slow answer when the hub stops
  bool m_stopping = false;
  std::map<std::string, FakeRepo> m_repos;  // by lower-case id
  std::map<std::string, int> m_rate_limited;
  FakeHubStats m_stats;
  std::unique_ptr<httplib::Server> m_hub, m_storage;
  std::thread m_hub_thread, m_storage_thread;
  int m_hub_port = 0, m_storage_port = 0;
};

// ---- Fixture repos, generated from a config.json the suite knows ------------------------------

// A repo whose config.json is `config_text` and whose safetensors shards hold the tensors the
// model's checkpoint would (synthesize_weights), split over `shards` files (an index when > 1).
FakeRepo make_fixture_repo(const std::string& id, const std::string& config_text, int shards);

// A safetensors file's first bytes: the 8-byte little-endian length and the JSON header.
std::string safetensors_head(const std::string& header_json);

// The repos the Hub tests use, from the config.json files in `models_dir` (tests/data/models):
//   headroom-test/llama-sharded   llama_gqa.json in 60 shards      headroom-test/deepseek-moe  MoE + MLA, fp8
//   headroom-test/w4a16           compressed-tensors (quantized)   headroom-test/gated-llama   gated
//   headroom-test/rate-limited    first request 429, Retry-After 1 headroom-test/overloaded    always 503
//   headroom-test/slow            a shard answered after 3 s       headroom-test/cut           a shard cut mid-header
//   headroom-test/absurd-header, not-json-header, overflow-shape   hostile safetensors headers
//   headroom-test/missing-shard   the index names an absent shard  headroom-test/bin-only, gguf-only
std::vector<FakeRepo> standard_fixtures(const std::string& models_dir);

// DeepSeek-V3's checkpoint layout: its config (deepseek_mla_moe.json) in 163 shards.
FakeRepo deepseek_v3_fixture(const std::string& models_dir);

// Writes the repo as a local folder (config files; shards as sparse files of the full size).
void write_local_copy(const FakeRepo& repo, const std::string& dir);

}  // namespace headroom::testing
