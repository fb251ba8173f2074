// The entry point of headroom_curl.so (built from this file, curl_transport.cc,
// watch/http_client.cc and util/strings.cc; see CMakeLists.txt).
#include "hub/curl_plugin.h"

namespace {

const headroom::plugin::CurlPlugin k_plugin{HEADROOM_VERSION, &headroom::hub::make_curl_transport,
                                            &headroom::watch::make_curl_http_client};

}  // namespace

extern "C" __attribute__((visibility("default"))) const headroom::plugin::CurlPlugin* headroom_curl_plugin_v1() {
  return &k_plugin;
}
