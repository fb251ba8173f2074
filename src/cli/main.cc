// headroom: will this model fit on these GPUs with these vLLM flags, and if not, what to change.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "util/strings.h"

namespace {

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: headroom <command> [options]\n\n"
               "Predicts vLLM's GPU memory use before you launch it.\n\ncommands:\n");
  for (const auto& c : headroom::cli::commands()) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out,
               "\nRun 'headroom help <command>' or 'headroom <command> --help' for a command's options.\n"
               "Example: headroom check meta-llama/Llama-3.1-8B-Instruct --gpu H100\n");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace headroom::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_usage(stderr);
    return k_exit_usage;
  }
  std::string name = args[0];
  if (name == "--help" || name == "-h") {
    print_usage(stdout);
    return k_exit_ok;
  }
  if (name == "--version" || name == "version") {
    std::printf("headroom %s\n", HEADROOM_VERSION);
    return k_exit_ok;
  }
  Args rest(args.begin() + 1, args.end());
  if (name == "help") {
    if (rest.empty()) {
      print_usage(stdout);
      return k_exit_ok;
    }
    name = rest[0];
    rest = {"--help"};
  }
  std::vector<std::string> names;
  for (const auto& c : commands()) {
    if (name == c.name) return c.run(rest);
    names.emplace_back(c.name);
  }
  std::string msg = "unknown command '" + name + "'";
  auto close = headroom::util::closest_matches(name, names);
  if (!close.empty()) msg += "; did you mean " + headroom::util::or_list(close) + "?";
  print_error(msg);
  print_usage(stderr);
  return k_exit_usage;
}
