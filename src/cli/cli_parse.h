// Parsing a subcommand's options with CLI11, the same way for every command.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string_view>

#include "cli/commands.h"

namespace headroom::cli {

// Parses `args` with `app`. Returns the exit code when the command should stop: 0 after printing
// the help on stdout (--help), 2 after reporting bad usage ("headroom: error: COMMAND: ...");
// nullopt when the command goes on.
std::optional<int> parse_or_exit(CLI::App& app, const Args& args, std::string_view command);

}  // namespace headroom::cli
