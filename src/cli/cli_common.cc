#include "cli/cli_common.h"

#include <unistd.h>

#include <cstdlib>

#include "util/strings.h"
#include "util/terminal_text.h"

namespace headroom::cli {

// Errors and warnings quote input (paths, model names, flag values, log text): each line goes
// through terminal_safe, so quoted escape sequences reach the terminal as visible escapes. The
// line breaks are kept: some messages are two lines (what was wrong, then what to do).
constexpr std::size_t k_message_bytes = 16384;

std::string safe_lines(const std::string& text) {
  std::string out;
  for (const auto& line : util::split(text.substr(0, k_message_bytes), '\n'))
    out += (out.empty() ? "" : "\n") + util::terminal_safe(line, k_message_bytes);
  return out;
}

void print_error(const Error& error) { std::fprintf(stderr, "headroom: error: %s\n", safe_lines(error.to_string()).c_str()); }

void print_error(const std::string& message) { std::fprintf(stderr, "headroom: error: %s\n", safe_lines(message).c_str()); }

void print_warning(const std::string& message) { std::fprintf(stderr, "headroom: warning: %s\n", safe_lines(message).c_str()); }

int exit_code_for(const Error& error) {
  return error.code == ErrorCode::invalid_argument ? k_exit_usage : k_exit_failure;
}

bool use_color(ColorMode mode) {
  if (mode == ColorMode::always) return true;
  if (mode == ColorMode::never) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  return isatty(STDOUT_FILENO) != 0;
}

Result<Format> parse_format(const std::string& text) {
  if (text == "text") return Format::text;
  if (text == "json") return Format::json;
  return make_error(ErrorCode::invalid_argument, "expected text or json, got '" + text + "'", "--format");
}

Result<ColorMode> parse_color(const std::string& text) {
  if (text == "auto") return ColorMode::automatic;
  if (text == "always") return ColorMode::always;
  if (text == "never") return ColorMode::never;
  return make_error(ErrorCode::invalid_argument, "expected auto, always or never, got '" + text + "'", "--color");
}

}  // namespace headroom::cli
