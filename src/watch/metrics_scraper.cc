// Fetching and reading one /metrics page, the retry backoff, the system clock, the null GPU memory
// source, and the URL helpers of `headroom watch`.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "headroom/watch.h"
#include "headroom/gpu_probe.h"
#include "util/strings.h"

namespace headroom::watch {

namespace {

class SystemClock final : public Clock {
 public:
  double now_s() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  double unix_time_s() override {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  }
  void sleep_s(double seconds) override {
    if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
};

class NullGpuMemorySource final : public GpuMemorySource {
 public:
  Result<std::vector<GpuMemoryReading>> read() override { return std::vector<GpuMemoryReading>{}; }
};

class ProbeGpuMemorySource final : public GpuMemorySource {
 public:
  Result<std::vector<GpuMemoryReading>> read() override {
    std::vector<GpuMemoryReading> out;
    auto inventory = probe_gpus();
    if (!inventory) {
      // No driver or no GPU here: nothing to show, not a failure of the watch.
      if (inventory.error().code == ErrorCode::unavailable) return out;
      return tl::unexpected(inventory.error());
    }
    for (const LiveGpu* g : usable_gpus(*inventory))
      out.push_back({g->index, g->name, g->used_bytes, g->total_bytes});
    return out;
  }
};

}  // namespace

std::unique_ptr<GpuMemorySource> make_probe_gpu_memory_source() { return std::make_unique<ProbeGpuMemorySource>(); }

Clock& system_clock() {
  static SystemClock clock;
  return clock;
}

std::unique_ptr<GpuMemorySource> make_null_gpu_memory_source() { return std::make_unique<NullGpuMemorySource>(); }

double Backoff::next_delay_s() {
  ++m_failures;
  double delay = m_policy.initial_backoff_s * std::pow(m_policy.multiplier, std::min(m_failures - 1, 60));
  return std::min(delay, m_policy.max_backoff_s);
}

Result<ScrapeResult> scrape_once(HttpClient& http, Clock& clock, const std::string& url, double timeout_s) {
  auto response = http.get(url, timeout_s);
  if (!response) return tl::unexpected(response.error());
  double time_s = clock.now_s();
  // Skip mode cannot fail: a bad line is noted and the rest of the page is still read.
  auto page = prometheus::parse_text(response->body, url, prometheus::MalformedLines::skip);
  if (!page) return tl::unexpected(page.error());
  ScrapeResult out;
  out.snapshot = read_vllm_metrics(*page, time_s);
  out.page_bytes = response->body.size();
  out.skipped_lines = page->skipped_lines;
  out.problems = std::move(page->problems);
  if (!out.snapshot.has_vllm_metrics()) {
    std::string msg = "no vllm: metrics on the page (" + std::to_string(page->families.size()) + " metric families";
    if (page->skipped_lines > 0) msg += ", " + std::to_string(page->skipped_lines) + " malformed lines";
    msg += "); expected a vLLM server's /metrics endpoint";
    return make_error(ErrorCode::unavailable, msg, url);
  }
  return out;
}

Result<std::string> metrics_url(const std::string& text) {
  std::string url = util::trim(text);
  if (url.empty()) return make_error(ErrorCode::invalid_argument, "expected a URL such as http://localhost:8000, got ''", "URL");
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    url = "http://" + url;
    scheme_end = 4;
  }
  std::string scheme = util::to_lower(url.substr(0, scheme_end));
  if (scheme != "http" && scheme != "https")
    return make_error(ErrorCode::invalid_argument, "expected an http:// or https:// URL, got '" + text + "'", "URL");
  auto path = url.find('/', scheme_end + 3);
  if (url.size() == scheme_end + 3) return make_error(ErrorCode::invalid_argument, "expected a host after " + scheme + "://", "URL");
  if (path == std::string::npos) return url + "/metrics";
  if (path == url.size() - 1) return url + "metrics";
  return url;
}

bool is_local_url(const std::string& url) {
  auto start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  std::string authority = url.substr(start, url.find('/', start) - start);
  if (auto at = authority.rfind('@'); at != std::string::npos) authority = authority.substr(at + 1);
  std::string host;
  if (!authority.empty() && authority[0] == '[') host = authority.substr(1, authority.find(']') - 1);
  else host = authority.substr(0, authority.find(':'));
  host = util::to_lower(host);
  if (host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0 || host == "0.0.0.0") return true;
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) == 0 && host == util::to_lower(name)) return true;
  return false;
}

}  // namespace headroom::watch
