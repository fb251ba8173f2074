// libFuzzer target: a command line (arguments separated by newlines) → parse_vllm_command.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "headroom/vllm_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') args.emplace_back();
    else args.back().push_back(static_cast<char>(data[i]));
  }
  auto cmd = headroom::parse_vllm_command(args);
  if (cmd) (void)headroom::validate_flags(cmd->flags);
  return 0;
}
