// libFuzzer target: a `vllm serve --config` YAML file → config_file_args → parse_vllm_command.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "headroom/vllm_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto args = headroom::config_file_args(text, "fuzz.yaml");
  if (args) {
    auto cmd = headroom::parse_vllm_command(*args);
    if (cmd) (void)headroom::validate_flags(cmd->flags);
  }
  return 0;
}
