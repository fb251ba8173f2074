// The command table: every subcommand of `headroom`, its one-line summary and entry point.
#pragma once

#include <string>
#include <vector>

namespace headroom::cli {

// Arguments after the subcommand name.
using Args = std::vector<std::string>;

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const Args& args);
};

const std::vector<Command>& commands();

// One entry point per subcommand, each in src/cli/<name>.cc.
int run_check(const Args& args);
int run_gpus(const Args& args);
int run_plan(const Args& args);
int run_diagnose(const Args& args);
int run_kb(const Args& args);
int run_rules(const Args& args);
int run_watch(const Args& args);
int run_record(const Args& args);
int run_history(const Args& args);
int run_cache(const Args& args);
int run_serve(const Args& args);
int run_run(const Args& args);

}  // namespace headroom::cli
