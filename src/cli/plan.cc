// headroom plan MODEL --gpu NAME [--gpus N] [--context T] [--concurrency N] [--goal G] [constraints]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "cli/cli_common.h"
#include "cli/cli_parse.h"
#include "cli/commands.h"
#include "cli/hub_options.h"
#include "cli/target_options.h"
#include "headroom/model.h"
#include "headroom/history.h"
#include "headroom/plan.h"
#include "headroom/plan_render.h"
#include "headroom/vllm_config.h"
#include "util/strings.h"

namespace headroom::cli {

namespace {

constexpr const char* k_plan_help = R"(usage: headroom plan MODEL [options]
       headroom plan [options] -- vllm serve MODEL [flags]

Searches vLLM's flags with the prediction engine for a configuration that starts on the GPUs,
serves the workload with a safety margin, and is as capable as the hardware allows. Prints each
choice and the number behind it, the predicted memory (as `check`), up to three alternatives, and
the configuration as a `vllm serve` command, Python code and a YAML config (Ray commands for
multi-node plans). When nothing fits: why, and the smallest changes that would.

MODEL: a folder with config.json, a config.json path, or a Hugging Face id, read from the local
Hugging Face cache, headroom's Hub cache or the Hub itself, else the built-in catalogue.
After --, a vllm serve command (or a pasted LLM(...) call) gives the model and starts the search
from its flags: --max-model-len as --context, TP x PP x DP as --gpus, an fp8 --kv-cache-dtype as
--allow-fp8-kv, --enforce-eager as --allow-eager; options given before -- win.

Kept as given in every configuration (as options, or from a pasted command when none is given):
  --quantization/-q METHOD, --dtype DTYPE, --hf-overrides JSON, --compilation-config JSON, --performance-mode MODE,
  --limit-mm-per-prompt JSON, --mm-processor-kwargs JSON, --mm-encoder-tp-mode MODE,
  --language-model-only, --skip-mm-profiling
                        vLLM's flags, in vLLM's spelling: e.g. a vision-language model planned
                        for two 1024x1024 images a prompt: --limit-mm-per-prompt
                        '{"image": {"count": 2, "width": 1024, "height": 1024}, "video": 0}'

GPUs:
  --gpu NAME            GPU model from the catalogue (default: the live GPUs of this host); a
                        count may come with it: 8xH100 or H100:8 (as --gpus 8)
  --gpus N              GPUs available (per node with --nodes; default 1, or every live GPU)
  --nodes N             nodes, each with --gpus-per-node GPUs
  --gpus-per-node M     GPUs per node (same as --gpus)
  --gpu-memory-gib X    any GPU, by the total memory CUDA reports
  --used-gib X          memory already used by other processes on each GPU (a desktop, a model)
  --free-gib X          free memory on each GPU right now
workload and goal:
  --context TOKENS      the longest request to serve (default: the longest that fits)
  --concurrency N       simultaneous requests at that length (default 1)
  --goal G              throughput (default), context or latency
constraints:
  --max-gpus N          use at most N GPUs
  --allow-fp8-kv        the plan may choose an fp8 KV cache
  --allow-eager         the plan may turn CUDA graphs off (--enforce-eager) when they do not fit
  --margin-gib X        memory left unused on each GPU (default max(0.5 GiB, 2% of the GPU))
  --vllm-version V      vLLM version to plan for (default: newest modelled; also --vllm V)
history:
  --db URL              run history to consult: SQLite file or postgresql:// URL (default:
                        $HEADROOM_DB, else $XDG_DATA_HOME/headroom/history.db; never created)
  --no-history          ignore the run history
model source:
  --revision REV        Hub branch, tag or commit sha (default main)
  --offline             never contact the Hub (also HF_HUB_OFFLINE=1)
  --hub-timeout S       give up on a Hub request after S seconds (default 30)
  --hub-connect-timeout S  fall back when no connection to the Hub is made within S s (default 1)
  --quiet               no progress and no notes on stderr
output:
  --format text|json    output format (default text; JSON schema in docs/plan.md)
  --color auto|always|never
exit: 0 a plan was found, 3 nothing fits, 1 error, 2 bad usage
)";

}  // namespace

namespace {

// What `plan`'s options and a pasted command say, before anything is loaded.
struct PlanOptions {
  TargetOptions target;
  HubOptions hub;
  std::string model_ref, format_text = "text", color_text = "auto", goal_text = "throughput", db;
  std::optional<std::int64_t> context;
  std::optional<int> max_gpus, gpus_per_node;
  std::optional<double> margin_gib;
  int concurrency = 1;
  bool allow_fp8_kv = false, allow_eager = false, no_history = false;
  KeptFlags kept;  // the flags every configuration keeps: given as options, else a pasted command's
  std::vector<std::string> kept_args;  // those options as given, in vLLM's command-line form
  std::vector<std::string> read_from_command;  // what the pasted command contributed
};

void add_plan_options(CLI::App& app, PlanOptions& o) {
  app.add_option("model", o.model_ref);
  add_target_options(app, o.target);
  app.add_option("--gpus-per-node", o.gpus_per_node)->check(CLI::PositiveNumber);
  app.add_option("--context", o.context);
  app.add_option("--concurrency", o.concurrency);
  app.add_option("--goal", o.goal_text);
  app.add_option("--max-gpus", o.max_gpus);
  app.add_flag("--allow-fp8-kv", o.allow_fp8_kv);
  app.add_flag("--allow-eager", o.allow_eager);
  app.add_option("--margin-gib", o.margin_gib);
  app.add_option("--db", o.db);
  app.add_flag("--no-history", o.no_history);
  app.add_option("--format", o.format_text);
  app.add_option("--color", o.color_text);
  add_hub_options(app, o.hub, RevisionOption::include);
  // vLLM's flags that every configuration keeps, collected in vLLM's form for its own parser.
  for (const char* name : {"--quantization,-q", "--dtype", "--hf-overrides", "--compilation-config", "--performance-mode",
                           "--limit-mm-per-prompt", "--mm-processor-kwargs", "--mm-encoder-tp-mode"}) {
    const std::string flag = std::string(name).substr(0, std::string(name).find(','));
    app.add_option_function<std::string>(name, [&o, flag](const std::string& value) {
      o.kept_args.insert(o.kept_args.end(), {flag, value});
    });
  }
  for (const char* name : {"--language-model-only", "--skip-mm-profiling"})
    app.add_flag_callback(name, [&o, name] { o.kept_args.emplace_back(name); });
}

// A vLLM flag whose value the plan chooses, given as plan's own option: what to give instead
// (the plan's workload option, or the whole command after --). Empty for any other word.
std::string chosen_flag_advice(const std::string& arg) {
  static const std::vector<std::pair<std::vector<std::string>, std::string>> k_chosen = {
      {{"--max-model-len"}, "give --context TOKENS, the longest request to serve"},
      {{"--tensor-parallel-size", "-tp", "--pipeline-parallel-size", "-pp", "--data-parallel-size", "-dp"},
       "give --gpus N (and --max-gpus), and the plan chooses the layout"},
      {{"--kv-cache-dtype"}, "give --allow-fp8-kv to let the plan choose an fp8 KV cache"},
      {{"--enforce-eager"}, "give --allow-eager to let the plan turn CUDA graphs off"},
      {{"--gpu-memory-utilization", "--max-num-seqs", "--max-num-batched-tokens"}, "the plan chooses it"},
  };
  const std::string name = arg.substr(0, arg.find('='));
  for (const auto& [names, advice] : k_chosen)
    if (std::find(names.begin(), names.end(), name) != names.end())
      return name + " is the plan's to choose: " + advice +
             "; or paste the whole command after -- (headroom plan -- vllm serve MODEL " + name + " ...), and the plan starts from it";
  return "";
}

// The kept flags given as options, read by the parser `check` uses for vLLM's flags, so their
// values are checked the same way (malformed JSON, an unknown mode). Returns an exit code on error.
std::optional<int> apply_kept_options(PlanOptions& o) {
  if (o.kept_args.empty()) return std::nullopt;
  auto parsed = parse_vllm_command(o.kept_args);
  if (!parsed) return print_error(parsed.error()), k_exit_usage;
  o.kept = KeptFlags::from(parsed->flags);
  return std::nullopt;
}

// `plan [options] -- vllm serve MODEL [flags]` (or a pasted LLM(...) call): the command's model,
// and what its flags say about the workload, start the search. Each hint applies only where the
// options before -- say nothing. Returns an exit code on a usage error.
std::optional<int> apply_pasted_command(const Args& command_args, PlanOptions& o) {
  auto cmd = resolve_vllm_command(command_args, EntrypointOptions{});
  if (!cmd) return print_error(cmd.error()), k_exit_usage;
  if (!cmd->model.empty()) {
    if (!o.model_ref.empty() && o.model_ref != cmd->model) {
      print_error("two models given: '" + o.model_ref + "' and the command's '" + cmd->model + "'; give one of them");
      return k_exit_usage;
    }
    o.model_ref = cmd->model;
  }
  if (o.hub.revision.empty() && !cmd->revision.empty()) o.hub.revision = cmd->revision;
  PlanRequest given;
  given.context_tokens = o.context;
  given.allow_fp8_kv = o.allow_fp8_kv;
  given.allow_eager = o.allow_eager;
  given.kept = o.kept;
  const CommandHints hints = plan_hints(cmd->flags, given, o.target.gpus > 0 || o.gpus_per_node.has_value());
  if (hints.context) o.context = hints.context;
  if (hints.gpus > 0) o.target.gpus = hints.gpus;
  o.allow_fp8_kv = o.allow_fp8_kv || hints.allow_fp8_kv;
  o.allow_eager = o.allow_eager || hints.allow_eager;
  if (!hints.kept.empty()) o.kept = hints.kept;
  o.read_from_command = hints.taken;
  if (!o.read_from_command.empty() || cmd->flags.gpu_memory_utilization || cmd->flags.max_num_seqs)
    o.read_from_command.push_back("the plan chooses the other settings itself");
  return std::nullopt;
}

// The checks no single option can make on its own. Returns an exit code on a usage error.
std::optional<int> check_plan_options(PlanOptions& o) {
  if (o.model_ref.empty()) {
    print_error("no model given: headroom plan MODEL --gpu NAME (see 'headroom plan --help')");
    return k_exit_usage;
  }
  if (o.target.used_gib && o.target.free_gib) {
    print_error("--used-gib and --free-gib describe the same memory: give one of them");
    return k_exit_usage;
  }
  if (o.gpus_per_node) {
    if (o.target.gpus > 0 && o.target.gpus != *o.gpus_per_node) {
      print_error("--gpus " + std::to_string(o.target.gpus) + " and --gpus-per-node " +
                  std::to_string(*o.gpus_per_node) +
                  " disagree: with --nodes, --gpus is the count per node; give one of them");
      return k_exit_usage;
    }
    o.target.gpus = *o.gpus_per_node;
  }
  if (o.margin_gib && *o.margin_gib < 0) {
    print_error("--margin-gib: expected a number of GiB ≥ 0, got " + std::to_string(*o.margin_gib));
    return k_exit_usage;
  }
  return std::nullopt;
}

PlanRequest plan_request(const PlanOptions& o, PlanGoal goal, const std::vector<RunRecord>& records) {
  PlanRequest request;
  request.context_tokens = o.context;
  request.concurrency = o.concurrency;
  request.goal = goal;
  request.max_gpus = o.max_gpus;
  request.allow_fp8_kv = o.allow_fp8_kv;
  request.allow_eager = o.allow_eager;
  request.kept = o.kept;
  if (o.margin_gib) request.safety_margin_bytes = from_gib(*o.margin_gib);
  request.history = &records;
  return request;
}

void print_plan(const PlanOptions& o, const ModelSpec& model, const Plan& plan, Format format, bool color) {
  if (!o.read_from_command.empty()) {
    std::string line;
    for (const auto& r : o.read_from_command) line += (line.empty() ? "" : "; ") + r;
    if (!o.hub.quiet) std::fprintf(stderr, "headroom: note: from the command: %s\n", line.c_str());
  }
  if (format == Format::json) {
    std::printf("%s\n", plan_to_json(model, plan).dump(2).c_str());
  } else {
    std::fputs(render_plan_text(model, plan, color ? TextStyle::color : TextStyle::plain).c_str(), stdout);
  }
}

}  // namespace

// plan: options (and a pasted command) → the model and GPUs → make_plan → the plan printed.
int run_plan(const Args& args) {
  for (const auto& a : args)
    if (a == "--help" || a == "-h") {
      std::fputs(k_plan_help, stdout);
      return k_exit_ok;
    }
  PlanOptions o;
  CLI::App app{"headroom plan"};
  add_plan_options(app, o);
  Args own = args, command_args;
  if (auto dash = std::find(args.begin(), args.end(), std::string("--")); dash != args.end()) {
    own.assign(args.begin(), dash);
    command_args.assign(dash + 1, args.end());
  }
  for (const auto& a : own)
    if (auto advice = chosen_flag_advice(a); !advice.empty()) return print_error(advice), k_exit_usage;
  if (auto rc = parse_or_exit(app, own, "plan")) return *rc;
  if (auto counted = apply_gpu_count(o.target); !counted) return print_error(counted.error()), k_exit_usage;
  if (auto rc = apply_kept_options(o)) return *rc;
  if (!command_args.empty())
    if (auto rc = apply_pasted_command(command_args, o)) return *rc;
  auto format = parse_format(o.format_text);
  if (!format) return print_error(format.error()), k_exit_usage;
  auto color = parse_color(o.color_text);
  if (!color) return print_error(color.error()), k_exit_usage;
  auto goal = parse_plan_goal(o.goal_text);
  if (!goal) return print_error(goal.error()), k_exit_usage;
  if (auto rc = check_plan_options(o)) return *rc;
  auto version = resolve_version(o.target);
  if (!version) return print_error(version.error()), k_exit_usage;
  if (auto installed = installed_vllm(o.target, o.hub.quiet)) version = installed->version;
  auto model = load_model_with_hub(o.model_ref, o.hub);
  if (!model) return print_error(model.error()), exit_code_for(model.error());
  std::vector<std::string> warnings;
  // 0: every live GPU when probing; one catalogue GPU per node unless --gpus says more.
  auto gpus = resolve_gpu_setup(o.target, 0, warnings);
  if (!gpus) return print_error(gpus.error()), exit_code_for(gpus.error());
  for (const auto& w : warnings) print_warning(w);
  const std::vector<RunRecord> records = read_history_or_warn(o.db, o.no_history);
  auto plan = make_plan(*model, *gpus, plan_request(o, *goal, records), *version);
  if (!plan) return print_error(plan.error()), exit_code_for(plan.error());
  print_plan(o, *model, *plan, *format, use_color(*color));
  return plan->recommended ? k_exit_ok : k_exit_negative;
}

}  // namespace headroom::cli
