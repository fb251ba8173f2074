// make_curl_transport and make_curl_http_client for the library: they load headroom_curl.so at
// first use (util/plugin_loader.h). When it cannot be loaded, the transport and the client answer
// every request with the reason, so the Hub falls back as it does without network.
#include <cstring>

#include "hub/curl_plugin.h"
#include "util/plugin_loader.h"

namespace headroom {

namespace {

Result<const plugin::CurlPlugin*> curl_plugin() {
  auto entry = plugin::entry_point(plugin::k_curl_file, plugin::k_curl_entry);
  if (!entry) return tl::unexpected(entry.error());
  auto* plugin = reinterpret_cast<const plugin::CurlPlugin* (*)()>(*entry)();
  if (std::strcmp(plugin->version, HEADROOM_VERSION) != 0)
    return make_error(ErrorCode::unavailable, std::string(plugin::k_curl_file) + " is from headroom " + plugin->version +
                                                  ", this is " + HEADROOM_VERSION + "; rebuild");
  return plugin;
}

class UnavailableTransport final : public hub::HttpTransport {
 public:
  explicit UnavailableTransport(std::string why) : m_why(std::move(why)) {}
  std::vector<hub::HttpResult> perform(const std::vector<hub::HttpRequest>& requests,
                                       const std::function<void(std::size_t, const hub::HttpResult&)>& on_done) override {
    std::vector<hub::HttpResult> out(requests.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i].failure = hub::TransportFailure::other;
      out[i].detail = m_why;
      if (on_done) on_done(i, out[i]);
    }
    return out;
  }

 private:
  std::string m_why;
};

class UnavailableClient final : public watch::HttpClient {
 public:
  explicit UnavailableClient(Error why) : m_why(std::move(why)) {}
  Result<watch::HttpResponse> get(const std::string& url, double) override {
    return make_error(ErrorCode::unavailable, m_why.message, url);
  }

 private:
  Error m_why;
};

}  // namespace

std::unique_ptr<hub::HttpTransport> hub::make_curl_transport(const TransportOptions& options) {
  auto plugin = curl_plugin();
  if (!plugin) return std::make_unique<UnavailableTransport>(plugin.error().to_string());
  return (*plugin)->make_transport(options);
}

std::unique_ptr<watch::HttpClient> watch::make_curl_http_client(CurlClientOptions options) {
  auto plugin = curl_plugin();
  if (!plugin) return std::make_unique<UnavailableClient>(plugin.error());
  return (*plugin)->make_http_client(options);
}

}  // namespace headroom
