#include "cli/cli_common.h"

#include <unistd.h>

#include <cstdlib>

namespace headroom::cli {

void print_error(const Error& error) { std::fprintf(stderr, "headroom: error: %s\n", error.to_string().c_str()); }

void print_error(const std::string& message) { std::fprintf(stderr, "headroom: error: %s\n", message.c_str()); }

void print_warning(const std::string& message) { std::fprintf(stderr, "headroom: warning: %s\n", message.c_str()); }

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
