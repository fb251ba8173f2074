// Shared plumbing of the subcommands: exit codes, output format, colour, error printing.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "headroom/error.h"

namespace headroom::cli {

// One table of exit codes for every command (HOUSE_STYLE: 0 ok, 1 failure, 2 usage, 3 negative verdict;
// 4 inconclusive: diagnose read a log that ends before vLLM was ready and holds no failure).
enum ExitCode : int { k_exit_ok = 0, k_exit_failure = 1, k_exit_usage = 2, k_exit_negative = 3, k_exit_inconclusive = 4 };

enum class Format { text, json };
enum class ColorMode { automatic, always, never };

// Prints "headroom: error: <where>: <message>" on stderr.
void print_error(const Error& error);
void print_error(const std::string& message);
void print_warning(const std::string& message);

// Exit code for a library error: usage errors (invalid_argument) → 2, the rest → 1.
int exit_code_for(const Error& error);

// Whether to colour stdout: --color, then NO_COLOR, then whether stdout is a terminal.
bool use_color(ColorMode mode);

Result<Format> parse_format(const std::string& text);
Result<ColorMode> parse_color(const std::string& text);

}  // namespace headroom::cli
