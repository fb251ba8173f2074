#include "cli/commands.h"

namespace headroom::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"check", "predict vLLM's startup memory for a model, GPUs and flags", run_check},
      {"plan", "search vLLM flags for a configuration that fits and serves a workload", run_plan},
      {"gpus", "list live GPUs, or the built-in GPU catalogue (--catalog)", run_gpus},
  };
  return table;
}

}  // namespace headroom::cli
