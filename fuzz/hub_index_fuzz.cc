// libFuzzer target: a model.safetensors.index.json → parse_safetensors_index, and the bytes as a
// safetensors header read over HTTP (parse_safetensors_header with a claimed file size).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "headroom/model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)headroom::parse_safetensors_index(text, "fuzz");
  (void)headroom::parse_safetensors_header(text, size + 1024, "fuzz");
  return 0;
}
