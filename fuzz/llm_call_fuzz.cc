// libFuzzer target: pasted Python text → parse_llm_call, then validate_flags.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "headroom/vllm_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto cmd = headroom::parse_llm_call(text);
  if (cmd) (void)headroom::validate_flags(cmd->flags);
  return 0;
}
