// Text that came from outside (a server's labels, model names, log lines, error messages quoting
// input) made safe to print on a terminal: no escape sequences, no line breaks, valid UTF-8.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace headroom::util {

// `text` with every control character (C0, DEL, C1), every byte that is not UTF-8, and the Unicode
// bidirectional overrides written as escapes ("\n", "\t", "\x1b", "\u202e"), so that printing it
// cannot move the cursor, clear the screen, set a window title or start a new line. Printable text
// (any script) is kept as it is. At most `max_bytes` of the input are looked at; past that, "…" ends
// the result.
std::string terminal_safe(std::string_view text, std::size_t max_bytes = 4096);

}  // namespace headroom::util
