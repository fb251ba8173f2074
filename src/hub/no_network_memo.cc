#include "hub/no_network_memo.h"

#include <sys/stat.h>

#include <chrono>
#include <filesystem>

#include "hub/hub_errors.h"
#include "util/json_file.h"
#include "util/regular_file.h"
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
  auto text = util::read_file(path, k_max_memo_bytes);  // regular files only, bounded
  struct stat st {};
  if (!text || ::stat(path.c_str(), &st) != 0) return std::nullopt;
  const auto lines = util::split(*text, '\n');
  if (lines.size() < 3) return std::nullopt;
  Memo m{lines[0], lines[1], lines[2]};
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  m.age_s = std::chrono::duration<double>(now).count() - static_cast<double>(st.st_mtim.tv_sec);
  return m;
}

void write_memo(const HubSettings& s, const HttpResult& failed) {
  std::string detail = failed.detail.substr(0, 512);
  for (char& c : detail)
    if (c == '\n' || c == '\r') c = ' ';
  const std::string kind = failed.failure == TransportFailure::resolve ? "resolve" : "connect";
  // A memo that cannot be written only costs the next command its wait.
  (void)util::write_file_atomically(memo_path(s), s.endpoint + '\n' + kind + '\n' + detail + '\n');
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
