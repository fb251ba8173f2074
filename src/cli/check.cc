#include <cstdio>

#include "cli/cli_common.h"
#include "cli/commands.h"

namespace headroom::cli {

int run_check(const Args& args) {
  print_error("check: not implemented yet");
  return k_exit_failure;
}

}  // namespace headroom::cli
