// The libcurl HttpTransport: a multi handle kept for the transport's life (so connections to the
// Hub and its file storage stay open between batches), at most max_parallel transfers at once.
#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "headroom/hub.h"
#include "util/strings.h"

namespace headroom::hub {

namespace {

struct Transfer {
  const HttpRequest* request = nullptr;
  HttpResult result;
  bool too_large = false;
  int hops = 0;  // status lines seen (one per redirect hop)
  int requests_sent = 0;  // connections made or reused with the request about to go out (one per hop)
  curl_slist* headers = nullptr;
  char errbuf[CURL_ERROR_SIZE] = {0};
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::size_t n = size * count;
  if (t->result.body.size() + n > t->request->max_body_bytes) {
    t->too_large = true;
    return 0;  // curl aborts the transfer with CURLE_WRITE_ERROR
  }
  t->result.body.append(data, n);
  return n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::size_t n = size * count;
  std::string_view line(data, n);
  if (line.starts_with("HTTP/")) {
    // A new response (the first, or one after a redirect): its headers replace the last ones.
    ++t->hops;
    if (t->hops == 2) t->result.first_headers = t->result.headers;
    t->result.headers.clear();
    return n;
  }
  auto colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  t->result.headers[util::to_lower(util::trim(line.substr(0, colon)))] = util::trim(line.substr(colon + 1));
  return n;
}

// libcurl calls this once per hop, when a connection is made or reused and the request is about to
// be sent. A timeout before any call is a connect timeout; after one, a slow answer. (libcurl reports
// a connect time of 0 for a reused connection, so that time cannot tell the two apart.)
int on_request_ready(void* user, char* /*primary_ip*/, char* /*local_ip*/, int /*primary_port*/, int /*local_port*/) {
  ++static_cast<Transfer*>(user)->requests_sent;
  return CURL_PREREQFUNC_OK;
}

TransportFailure classify(CURLcode rc, const Transfer& t) {
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return TransportFailure::resolve;
    case CURLE_COULDNT_CONNECT: return TransportFailure::connect;
    case CURLE_OPERATION_TIMEDOUT:
      // No request sent yet: a connect timeout (the host is unreachable), else a slow answer.
      return t.requests_sent == 0 ? TransportFailure::connect : TransportFailure::timeout;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR: return TransportFailure::cut;
    default: return TransportFailure::other;
  }
}

std::string describe(CURLcode rc, const Transfer& t, const TransportOptions& o) {
  switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
      return t.result.failure == TransportFailure::connect
                 ? fmt::format("no connection within {:g} s", t.request->connect_timeout_s.value_or(o.connect_timeout_s))
                                                           : fmt::format("no complete answer within {:g} s", o.total_timeout_s);
    case CURLE_COULDNT_RESOLVE_HOST: return "cannot resolve the host name";
    case CURLE_COULDNT_CONNECT: return "cannot connect";
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING: return "the connection was cut in the middle of the answer";
    case CURLE_WRITE_ERROR:
      if (t.too_large) return fmt::format("the answer is larger than {} bytes", t.request->max_body_bytes);
      break;
    default: break;
  }
  return t.errbuf[0] != '\0' ? std::string(t.errbuf) : std::string(curl_easy_strerror(rc));
}

class CurlTransport final : public HttpTransport {
 public:
  explicit CurlTransport(const TransportOptions& options) : m_options(options) {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    m_multi = curl_multi_init();
    curl_multi_setopt(m_multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, static_cast<long>(std::max(1, options.max_parallel)));
  }
  ~CurlTransport() override {
    if (m_multi != nullptr) curl_multi_cleanup(m_multi);
  }
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  std::vector<HttpResult> perform(const std::vector<HttpRequest>& requests,
                                  const std::function<void(std::size_t, const HttpResult&)>& on_done) override {
    std::vector<Transfer> transfers(requests.size());
    std::size_t next = 0, running = 0;
    const std::size_t limit = static_cast<std::size_t>(std::max(1, m_options.max_parallel));
    auto start = [&](std::size_t i) {
      Transfer& t = transfers[i];
      t.request = &requests[i];
      CURL* easy = curl_easy_init();
      setup(easy, t);
      curl_easy_setopt(easy, CURLOPT_PRIVATE, reinterpret_cast<void*>(i));
      curl_multi_add_handle(m_multi, easy);
      ++running;
    };
    while (next < requests.size() && running < limit) start(next++);
    while (running > 0) {
      int still = 0;
      curl_multi_perform(m_multi, &still);
      int queued = 0;
      while (CURLMsg* msg = curl_multi_info_read(m_multi, &queued)) {
        if (msg->msg != CURLMSG_DONE) continue;
        CURL* easy = msg->easy_handle;
        void* priv = nullptr;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv);
        auto i = reinterpret_cast<std::size_t>(priv);
        finish(easy, msg->data.result, transfers[i]);
        curl_multi_remove_handle(m_multi, easy);
        curl_easy_cleanup(easy);
        curl_slist_free_all(transfers[i].headers);
        transfers[i].headers = nullptr;
        --running;
        if (on_done) on_done(i, transfers[i].result);
        if (next < requests.size()) start(next++);
      }
      if (running > 0) curl_multi_poll(m_multi, nullptr, 0, 100, nullptr);
    }
    std::vector<HttpResult> results;
    results.reserve(transfers.size());
    for (auto& t : transfers) results.push_back(std::move(t.result));
    return results;
  }

 private:
  void setup(CURL* easy, Transfer& t) {
    const HttpRequest& r = *t.request;
    curl_easy_setopt(easy, CURLOPT_URL, r.url.c_str());
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "headroom/" HEADROOM_VERSION);
    const double connect_s = r.connect_timeout_s.value_or(m_options.connect_timeout_s);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, std::max(1L, static_cast<long>(connect_s * 1000)));
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, std::max(1L, static_cast<long>(m_options.total_timeout_s * 1000)));
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    // The Hub answers /resolve/ of large files with a redirect to its file storage. libcurl sends a
    // custom Authorization header to the original host only (never to the storage host).
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(easy, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t.errbuf);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, on_request_ready);
    curl_easy_setopt(easy, CURLOPT_PREREQDATA, &t);
    if (r.head) curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
    if (r.range_end) {
      std::string range = fmt::format("{}-{}", r.range_begin, *r.range_end);
      curl_easy_setopt(easy, CURLOPT_RANGE, range.c_str());  // copied by libcurl
    }
    if (r.authorize && !m_options.token.empty())
      t.headers = curl_slist_append(t.headers, ("Authorization: Bearer " + m_options.token).c_str());
    if (t.headers != nullptr) curl_easy_setopt(easy, CURLOPT_HTTPHEADER, t.headers);
  }

  void finish(CURL* easy, CURLcode rc, Transfer& t) {
    char* url = nullptr;
    curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_URL, &url);
    if (url != nullptr) t.result.effective_url = url;
    if (t.hops <= 1) t.result.first_headers = t.result.headers;
    if (rc != CURLE_OK) {
      t.result.failure = t.too_large ? TransportFailure::too_large : classify(rc, t);
      t.result.detail = describe(rc, t, m_options);
      return;
    }
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &t.result.status);
  }

  TransportOptions m_options;
  CURLM* m_multi = nullptr;
};

}  // namespace

std::unique_ptr<HttpTransport> make_curl_transport(const TransportOptions& options) {
  return std::make_unique<CurlTransport>(options);
}

}  // namespace headroom::hub
