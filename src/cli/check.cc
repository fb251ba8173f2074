// headroom check MODEL [vLLM flags] | headroom check [options] -- vllm serve MODEL [flags]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "cli/check_command.h"
#include "cli/cli_common.h"
#include "cli/cli_parse.h"
#include "cli/commands.h"
#include "cli/hub_options.h"
#include "cli/target_options.h"
#include "headroom/check_changes.h"
#include "headroom/check_document.h"
#include "headroom/history.h"
#include "headroom/model.h"
#include "headroom/report.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_engine.h"
#include "util/strings.h"

namespace headroom::cli {

namespace {

constexpr const char* k_check_help = R"(usage: headroom check MODEL [vLLM flags] [options]
       headroom check [options] -- vllm serve MODEL [flags]
       headroom check [options] -- 'LLM(model="MODEL", gpu_memory_utilization=0.85, ...)'

Predicts vLLM's startup memory for MODEL on the given GPUs: weights, activation peak, non-torch
memory, CUDA graphs, KV cache blocks and tokens, maximum concurrency, and whether it starts.

MODEL: a folder with config.json, a config.json path, or a Hugging Face id, read from the local
Hugging Face cache, headroom's Hub cache or the Hub itself (config files and safetensors headers
only, nothing else is downloaded; --revision REV picks a branch, tag or commit), else the built-in
catalogue (offline, or when the Hub cannot be reached).

vLLM flags (vLLM's names and defaults): --tensor-parallel-size/-tp, --pipeline-parallel-size/-pp,
  --data-parallel-size/-dp, --max-model-len (or auto), --gpu-memory-utilization, --max-num-seqs,
  --max-num-batched-tokens, --kv-cache-dtype, --dtype, --quantization/-q, --enforce-eager,
  --block-size, --enable-prefix-caching, --enable-chunked-prefill, --kv-cache-memory-bytes,
  --num-gpu-blocks-override, --cpu-offload-gb, --enable-expert-parallel, --attention-config (use_fp4_indexer_cache;
  JSON or --attention-config.FIELD VALUE), --hf-overrides (its max_position_embeddings and the RoPE
  key the release reads: rope_scaling before v0.12, rope_parameters from v0.19.1 (transformers v5),
  rope_scaling (or rope_parameters where the config has no scaling) between; top level or in
  text_config; also the older --rope-scaling and --rope-theta),
  --compilation-config (its cudagraph_capture_sizes, max_cudagraph_capture_size, cudagraph_mode),
  --performance-mode, and the multimodal --limit-mm-per-prompt,
  --mm-processor-kwargs, --mm-encoder-tp-mode, --language-model-only, --skip-mm-profiling,
  --disable-chunked-mm-input. Other vLLM flags are ignored with a warning.
  --config FILE.yaml is read as vLLM reads it (the command line wins). A pasted command may be
  one quoted argument (-- "vllm serve MODEL --max-model-len 8192"), split as the shell would, and
  may start with VAR=value assignments; VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, VLLM_ATTENTION_BACKEND,
  VLLM_USE_V1, VLLM_USE_FLASHINFER_SAMPLER, VLLM_USE_V2_MODEL_RUNNER, VLLM_ROCM_MOE_PADDING,
  VLLM_ROCM_USE_AITER, VLLM_ALLOW_LONG_MAX_MODEL_LEN and VLLM_PP_LAYER_PARTITION change the prediction.

options:
  --gpu NAME            GPU model from the catalogue (e.g. H100, A100-40GB, RTX 4090); a count
                        may come with it: 2xA100, 8 x H100 or H100:8 (as --gpus N)
  --gpus N              GPUs available (default: what the flags use)
  --nodes N             nodes (GPUs per node = --gpus)
  --gpu-memory-gib X    any GPU, by the total memory CUDA reports
  --used-gib X          memory already used by other processes on each GPU
  --free-gib X          free memory on each GPU right now
  --vllm-version V      vLLM version to model (default: newest modelled; also --vllm V)
  --entrypoint llm|serve  how vLLM is started: Python LLM(...) (offline batch defaults) or
                        vllm serve (default; a pasted LLM(...) call implies llm)
  --env VAR=value       a VLLM_* environment variable of the run (repeatable)
  --db URL              run history to consult: SQLite file or postgresql:// URL (default:
                        $HEADROOM_DB, else $XDG_DATA_HOME/headroom/history.db; never created)
  --no-history          ignore the run history
  --format text|json    output format (default text)
  --color auto|always|never
  --offline             never contact the Hub (also HF_HUB_OFFLINE=1): caches and catalogue only
  --hub-timeout S       give up on a Hub request after S seconds (default 30)
  --hub-connect-timeout S  fall back when no connection to the Hub is made within S s (default 1)
  --quiet               no progress and no notes on stderr
exit: 0 starts, 3 predicted to fail, 1 error, 2 bad usage
)";

}  // namespace

int run_check(const Args& args) {
  for (const auto& a : args) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") {
      std::fputs(k_check_help, stdout);
      return k_exit_ok;
    }
  }
  Args own, vllm_args;
  std::vector<std::string> own_values = {"--gpu",    "--gpus",  "--nodes", "--gpu-memory-gib", "--used-gib",
                                         "--free-gib", "--vllm-version", "--vllm", "--format", "--color", "--db", "--entrypoint", "--env"};
  std::vector<std::string> own_bools = {"--no-history"};
  own_values.insert(own_values.end(), hub_value_flags().begin(), hub_value_flags().end());
  own_bools.insert(own_bools.end(), hub_bool_flags().begin(), hub_bool_flags().end());
  split_args(args, own_values, own_bools, own, vllm_args);
  CheckInputs in;
  std::string format_text = "text", color_text = "auto";
  CLI::App app{"headroom check"};
  add_target_options(app, in.target);
  add_entrypoint_options(app, in.entry);
  app.add_option("--format", format_text);
  app.add_option("--color", color_text);
  app.add_option("--db", in.db);
  app.add_flag("--no-history", in.no_history);
  add_hub_options(app, in.hub, RevisionOption::omit);
  if (auto rc = parse_or_exit(app, own, "check")) return *rc;
  auto format = parse_format(format_text);
  if (!format) return print_error(format.error()), k_exit_usage;
  auto color = parse_color(color_text);
  if (!color) return print_error(color.error()), k_exit_usage;

  auto checked = predict_checked(vllm_args, in, CheckWarnings::print);
  if (!checked) return print_error(checked.error().error), checked.error().exit_code;
  const Prediction& prediction = checked->prediction;
  if (*format == Format::json) {
    auto j = check_document(checked->model, checked->gpus, prediction, checked->command.warnings, checked->records,
                            checked->advice, checked->history_location);
    j["changes"] = changes_document(checked->changes);
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::fputs(render_check_text(*checked, *color).c_str(), stdout);
  }
  return prediction.starts ? k_exit_ok : k_exit_negative;
}

}  // namespace headroom::cli
