// libFuzzer target: config.json text → parse_model_config_text (never crashes; errors are values).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "headroom/model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto spec = headroom::parse_model_config_text(text, "fuzz/config.json");
  if (spec) (void)headroom::synthesize_weights(*spec);
  return 0;
}
