#include "hub/no_network_memo.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include "hub/hub_errors.h"
#include "util/strings.h"

namespace headroom::hub::detail {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_max_memo_bytes = 4096;  // endpoint and reason; anything longer is not ours

std::string memo_path(const HubSettings& s) { return (fs::path(s.cache_dir) / "no-network").string(); }

class RememberedFailure final : public HttpTransport {
 public:
  RememberedFailure(TransportFailure failure, std::string detail) : m_failure(failure), m_detail(std::move(detail)) {}
  std::vector<HttpResult> perform(const std::vector<HttpRequest>& requests,
                                  const std::function<void(std::size_t, const HttpResult&)>& on_done) override {
    std::vector<HttpResult> out(requests.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i].failure = m_failure;
      out[i].detail = m_detail;
      if (on_done) on_done(i, out[i]);
    }
    return out;
  }

 private:
  TransportFailure m_failure;
  std::string m_detail;
};

// The memo: line 1 the endpoint, line 2 "resolve" or "connect", line 3 what the transport said.
struct Memo {
  std::string endpoint, kind, detail;
  double age_s = 0;
};

std::optional<Memo> read_memo(const HubSettings& s) {
  const std::string path = memo_path(s);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
      static_cast<std::size_t>(st.st_size) > k_max_memo_bytes)
    return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  Memo m;
  if (!std::getline(in, m.endpoint) || !std::getline(in, m.kind) || !std::getline(in, m.detail)) return std::nullopt;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  m.age_s = std::chrono::duration<double>(now).count() - static_cast<double>(st.st_mtim.tv_sec);
  return m;
}

void write_memo(const HubSettings& s, const HttpResult& failed) {
  std::error_code ec;
  fs::create_directories(s.cache_dir, ec);
  if (ec) return;  // a memo that cannot be written only costs the next command its wait
  std::string detail = failed.detail.substr(0, 512);
  for (char& c : detail)
    if (c == '\n' || c == '\r') c = ' ';
  const std::string path = memo_path(s), tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << s.endpoint << '\n' << (failed.failure == TransportFailure::resolve ? "resolve" : "connect") << '\n' << detail << '\n';
    if (!out) return (void)fs::remove(tmp, ec);
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
}

}  // namespace

std::shared_ptr<HttpTransport> remembered_no_network(const HubSettings& s) {
  if (s.no_network_memo_s <= 0 || s.cache_dir.empty()) return nullptr;
  auto memo = read_memo(s);
  if (!memo || memo->endpoint != s.endpoint || memo->age_s < 0 || memo->age_s >= s.no_network_memo_s) return nullptr;
  const TransportFailure failure = memo->kind == "resolve" ? TransportFailure::resolve : TransportFailure::connect;
  const long ago = static_cast<long>(memo->age_s);
  return std::make_shared<RememberedFailure>(
      failure, memo->detail + ", " + std::to_string(ago) + " s ago; headroom asks again " +
                   std::to_string(static_cast<long>(s.no_network_memo_s) - ago) +
                   " s after that (HEADROOM_HUB_RETRY_AFTER_S=0 asks every time)");
}

void note_reachability(const HubSettings& s, const std::vector<HttpResult>& results) {
  if (s.no_network_memo_s <= 0 || s.cache_dir.empty() || results.empty()) return;
  bool any_answer = false, all_unreachable = true;
  for (const auto& r : results) {
    if (r.failure == TransportFailure::none) any_answer = true;
    if (!is_unreachable(r)) all_unreachable = false;
  }
  if (all_unreachable) return write_memo(s, results.front());
  // Only this endpoint's memo: another HF_ENDPOINT answering says nothing of the one remembered.
  if (auto memo = any_answer ? read_memo(s) : std::nullopt; memo && memo->endpoint == s.endpoint) {
    std::error_code ec;
    fs::remove(memo_path(s), ec);
  }
}

}  // namespace headroom::hub::detail
