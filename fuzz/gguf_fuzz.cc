// libFuzzer target: the first bytes of a .gguf file → parse_gguf_header → gguf_model (the
// architecture, the tensor table's block sizes and offsets, the mapped names and config), with
// the input's own length as the file size and, for one input in two, a larger file size, so that
// the data checks see both a truncated and a complete file.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::uint64_t file_size = size % 2 == 0 ? size : std::uint64_t{1} << 40;
  auto header = headroom::parse_gguf_header(bytes, file_size, "fuzz.gguf");
  if (header) (void)headroom::gguf_model(*header, file_size, "fuzz.gguf");
  return 0;
}
