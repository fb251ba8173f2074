// libFuzzer target: the first bytes of a connection, as the reception of `headroom serve` peeks at
// them (src/server/request_head.cc): never read past them, and a verdict within the limits.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/request_head.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  headroom::server::HeadLimits limits;
  limits.max_request_line_bytes = 512;
  limits.max_header_bytes = 1024;
  limits.max_header_count = 16;
  limits.body_prefix_bytes = 256;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto head = headroom::server::inspect_head(bytes, limits);
  if (head.head_bytes > size) std::abort();
  if (head.verdict == headroom::server::HeadVerdict::ready && head.head_bytes == 0) std::abort();
  if (head.head_bytes > limits.max_request_line_bytes + limits.max_header_bytes + 4) std::abort();
  return 0;
}
