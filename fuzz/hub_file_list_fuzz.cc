// libFuzzer target: the Hub's /api/models/{repo}/revision/{rev} answer → parse_file_list.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "headroom/hub.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)headroom::hub::parse_file_list(text, "fuzz");
  return 0;
}
