// The libcurl plugin (headroom_curl.so): the Hub transport (curl_transport.cc) and the watch
// scraper's client (watch/http_client.cc), built into a shared object of their own so that only
// the commands that go on the network load libcurl. curl_loader.cc loads it.
#pragma once

#include <memory>

#include "headroom/hub.h"
#include "headroom/watch.h"

namespace headroom::plugin {

inline constexpr const char* k_curl_file = "headroom_curl.so";
inline constexpr const char* k_curl_entry = "headroom_curl_plugin_v1";

struct CurlPlugin {
  const char* version;  // HEADROOM_VERSION of the plugin's build; the loader checks it
  std::unique_ptr<hub::HttpTransport> (*make_transport)(const hub::TransportOptions& options);
  std::unique_ptr<watch::HttpClient> (*make_http_client)(watch::CurlClientOptions options);
};

}  // namespace headroom::plugin
