#include "cli/commands.h"

namespace headroom::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"check", "predict vLLM's startup memory for a model, GPUs and flags", run_check},
      {"plan", "search vLLM flags for a configuration that fits and serves a workload", run_plan},
      {"diagnose", "name the failure in vLLM logs and compute the flags that fix it", run_diagnose},
      {"kb", "list, show and validate the failure knowledge base", run_kb},
      {"run", "predict, launch and follow a vLLM command: record its start, diagnose and fix its failure", run_run},
      {"record", "store what a vLLM startup log measured, and its outcome, in the run history", run_record},
      {"history", "list, show, export, import and forget recorded vLLM runs", run_history},
      {"gpus", "list live GPUs, or the built-in GPU catalogue (--catalog)", run_gpus},
      {"rules", "print Prometheus alerting rules for the alerts of 'watch'", run_rules},
      {"watch", "watch a running vLLM server's metrics, with alerts and what to change", run_watch},
      {"cache", "list or clear headroom's cache of what was read from the Hugging Face Hub", run_cache},
      {"serve", "answer check, plan and diagnose over HTTP, with a web page", run_serve},
  };
  return table;
}

}  // namespace headroom::cli
