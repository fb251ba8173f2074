// libFuzzer target: arbitrary lines through LogNormalizer (colour codes, prefixes, joins, splits).
// Checks what callers rely on: output lines are bounded, their line numbers lie within the input
// and never go backwards.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "headroom/log_normalizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t k_max_line = 4096;
  std::int64_t lines = 0;
  std::int64_t previous = 0;
  headroom::LogNormalizer normalizer(
      [&](const headroom::NormalizedLine& line) {
        if (line.text.size() > k_max_line + 1024) std::abort();
        if (line.first_line < 1 || line.first_line > line.last_line || line.last_line > lines) std::abort();
        if (line.first_line < previous) std::abort();
        previous = line.first_line;
      },
      k_max_line);
  std::string_view input(reinterpret_cast<const char*>(data), size);
  while (!input.empty()) {
    std::size_t nl = input.find('\n');
    std::string_view line = input.substr(0, nl);
    normalizer.feed(++lines, line.substr(0, k_max_line));
    if (nl == std::string_view::npos) break;
    input.remove_prefix(nl + 1);
  }
  normalizer.finish();
  return 0;
}
