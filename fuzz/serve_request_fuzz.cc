// libFuzzer target: an HTTP request body of `headroom serve` → the check and plan body parsers and
// the shell word splitter of pasted commands (never crash, never throw; errors are values).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "headroom/api_request.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  (void)headroom::parse_check_request(body);
  (void)headroom::parse_plan_request(body);
  (void)headroom::split_shell_words(body);
  return 0;
}
