// libFuzzer target: a /metrics page → the Prometheus text parser (both modes) and vLLM metrics.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "headroom/prometheus.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)headroom::prometheus::parse_text(text, "fuzz", headroom::prometheus::MalformedLines::reject);
  (void)headroom::prometheus::parse_text(text, "fuzz", headroom::prometheus::MalformedLines::skip);
  return 0;
}
