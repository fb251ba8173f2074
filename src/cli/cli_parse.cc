#include "cli/cli_parse.h"

#include <cstdio>
#include <string>

#include "cli/cli_common.h"

namespace headroom::cli {

std::optional<int> parse_or_exit(CLI::App& app, const Args& args, std::string_view command) {
  // CLI11 consumes its argument vector from the back.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return k_exit_ok;
  } catch (const CLI::ParseError& e) {
    print_error(std::string(command) + ": " + e.what());
    return k_exit_usage;
  }
  return std::nullopt;
}

}  // namespace headroom::cli
