// The libcurl HttpClient: one easy handle, reused so the connection to the server stays open
// between scrapes. Errors are turned into short messages that say what happened to the request.
#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "headroom/watch.h"

namespace headroom::watch {

namespace {

struct Transfer {
  std::string body;
  std::size_t max_bytes = 0;
  bool too_large = false;
  const std::atomic<bool>* cancel = nullptr;
};

std::size_t on_data(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::size_t n = size * count;
  if (t->body.size() + n > t->max_bytes) {
    t->too_large = true;
    return 0;  // makes curl abort with CURLE_WRITE_ERROR
  }
  // Grow by doubling but never past the limit: the string's own doubling took a page just under
  // 64 MiB to a 128 MiB buffer (and under ASan, whose quarantine keeps the old buffers, the
  // hostile-input suite's "huge page" case then went past its memory bound now and then).
  if (t->body.capacity() < t->body.size() + n)
    t->body.reserve(std::min(t->max_bytes, std::max(2 * t->body.capacity(), t->body.size() + n)));
  t->body.append(data, n);
  return n;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  return t->cancel != nullptr && t->cancel->load() ? 1 : 0;
}

class CurlHttpClient final : public HttpClient {
 public:
  explicit CurlHttpClient(CurlClientOptions options) : m_options(options) {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    m_curl = curl_easy_init();
    m_headers = curl_slist_append(nullptr, "Accept: text/plain;version=0.0.4;q=1,*/*;q=0.1");
  }
  ~CurlHttpClient() override {
    curl_slist_free_all(m_headers);
    if (m_curl != nullptr) curl_easy_cleanup(m_curl);
  }
  CurlHttpClient(const CurlHttpClient&) = delete;
  CurlHttpClient& operator=(const CurlHttpClient&) = delete;

  Result<HttpResponse> get(const std::string& url, double timeout_s) override {
    if (m_curl == nullptr) return make_error(ErrorCode::internal, "libcurl could not be initialised", url);
    Transfer t;
    t.max_bytes = static_cast<std::size_t>(m_options.max_body_bytes);
    t.cancel = m_options.cancel;
    char errbuf[CURL_ERROR_SIZE] = {0};
    long timeout_ms = std::max(1L, static_cast<long>(timeout_s * 1000));

    curl_easy_reset(m_curl);  // keeps the open connection, clears the options
    curl_easy_setopt(m_curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(m_curl, CURLOPT_HTTPHEADER, m_headers);
    curl_easy_setopt(m_curl, CURLOPT_USERAGENT, "headroom/" HEADROOM_VERSION);
    curl_easy_setopt(m_curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(m_curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(m_curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(m_curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(m_curl, CURLOPT_MAXREDIRS, 3L);
    // gzip only: brotli costs the server far more CPU than a /metrics page is worth.
    curl_easy_setopt(m_curl, CURLOPT_ACCEPT_ENCODING, "gzip");
    curl_easy_setopt(m_curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(m_curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(m_curl, CURLOPT_WRITEDATA, &t);
    if (t.cancel != nullptr) {
      curl_easy_setopt(m_curl, CURLOPT_NOPROGRESS, 0L);
      curl_easy_setopt(m_curl, CURLOPT_XFERINFOFUNCTION, on_progress);
      curl_easy_setopt(m_curl, CURLOPT_XFERINFODATA, &t);
    }

    CURLcode rc = curl_easy_perform(m_curl);
    curl_easy_setopt(m_curl, CURLOPT_ERRORBUFFER, nullptr);  // errbuf dies with this call
    if (rc != CURLE_OK) return make_error(ErrorCode::unavailable, describe(rc, errbuf, t, timeout_s), url);
    long status = 0;
    curl_easy_getinfo(m_curl, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 400) return make_error(ErrorCode::unavailable, fmt::format("the server answered HTTP {}", status), url);
    return HttpResponse{status, std::move(t.body)};
  }

 private:
  std::string describe(CURLcode rc, const char* errbuf, const Transfer& t, double timeout_s) {
    std::string detail = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc);
    switch (rc) {
      case CURLE_OPERATION_TIMEDOUT: return fmt::format("no response within {:g} s", timeout_s);
      case CURLE_COULDNT_CONNECT: {
        long os_errno = 0;
        curl_easy_getinfo(m_curl, CURLINFO_OS_ERRNO, &os_errno);
        return "cannot connect: " + (os_errno != 0 ? std::string(std::strerror(static_cast<int>(os_errno))) : detail);
      }
      case CURLE_COULDNT_RESOLVE_HOST: return "cannot resolve the host name: " + detail;
      case CURLE_GOT_NOTHING: return "the server closed the connection without answering";
      case CURLE_PARTIAL_FILE:
      case CURLE_RECV_ERROR: return "the server closed the connection in the middle of the answer";
      case CURLE_WRITE_ERROR:
        if (t.too_large) return fmt::format("the response is larger than {} bytes", m_options.max_body_bytes);
        return detail;
      case CURLE_ABORTED_BY_CALLBACK: return "cancelled";
      default: return detail;
    }
  }

  CurlClientOptions m_options;
  CURL* m_curl = nullptr;
  curl_slist* m_headers = nullptr;
};

}  // namespace

std::unique_ptr<HttpClient> make_curl_http_client(CurlClientOptions options) {
  return std::make_unique<CurlHttpClient>(options);
}

}  // namespace headroom::watch
