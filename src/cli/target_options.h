// Options shared by `check` and `plan`: which GPUs (--gpu, --gpus, --nodes, --gpu-memory-gib,
// --used-gib/--free-gib), which vLLM version, and the split between headroom's own options and the
// vLLM flags of a pasted command.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "engine/installed_vllm.h"
#include "headroom/error.h"
#include "headroom/history.h"
#include "headroom/vllm_engine.h"
#include "headroom/vllm_version.h"

namespace headroom::cli {

struct TargetOptions {
  std::string gpu = "auto";  // catalogue name, or "auto" for the live GPUs
  int gpus = 0;              // 0: as many as the flags need
  int nodes = 1;
  std::optional<double> gpu_memory_gib;
  std::optional<double> used_gib;
  std::optional<double> free_gib;
  std::string vllm_version;
};

// How vLLM is started: the entry point (its batch defaults differ) and VLLM_* environment variables.
struct EntrypointOptions {
  std::string entrypoint;        // "", "serve" or "llm"
  std::vector<std::string> env;  // VAR=value, repeatable
};

// The option names EntrypointOptions takes (for split_args).
inline const std::vector<std::string> k_entrypoint_value_flags = {"--entrypoint", "--env"};

// Registers --entrypoint llm|serve and --env VAR=value.
void add_entrypoint_options(CLI::App& app, EntrypointOptions& options);

// The vLLM command from what the user pasted: a Python `LLM(...)` call (one or more words that
// contain "LLM("), or a `vllm serve` command line / flags; then --entrypoint and --env applied
// (they override what the paste implies). Errors name the option or the position in the paste.
Result<VllmCommand> resolve_vllm_command(const Args& vllm_args, const EntrypointOptions& options);

// Registers the GPU and version options (--gpu, --gpus, --nodes, --gpu-memory-gib, --used-gib,
// --free-gib, --vllm-version) on a command's parser.
void add_target_options(CLI::App& app, TargetOptions& target);

// Splits `args` into headroom's own options (those in `own_value_flags` / `own_bool_flags`, with
// their values) and the rest, which is a vLLM command line. Everything after "--" is vLLM's.
void split_args(const Args& args, const std::vector<std::string>& own_value_flags,
                const std::vector<std::string>& own_bool_flags, Args& own, Args& vllm);

// The GPU setup for the options: a catalogue GPU, a custom size, or the live GPUs.
// `needed` is how many GPUs the configuration uses.
// "--gpu 2xA100" or "--gpu H100:8": moves the count into `gpus` (an error when --gpus disagrees).
Result<void> apply_gpu_count(TargetOptions& options);

Result<GpuSetup> resolve_gpu_setup(const TargetOptions& options, int needed, std::vector<std::string>& warnings);

Result<VllmVersion> resolve_version(const TargetOptions& options);

// Without --vllm-version: the vLLM installed in this machine's Python environment, whose version
// is then modelled (a note on stderr says so unless `quiet`); nullopt with --vllm-version or when
// none is installed (then the newest modelled version stands).
std::optional<engine::InstalledVllm> installed_vllm(const TargetOptions& options, bool quiet);

// The run history for check and plan: the records at --db / $HEADROOM_DB / the default location,
// none with --no-history. A missing database is not an error and is not created; an unreadable one
// is a warning on stderr. `location` receives where it looked ("" with --no-history).
std::vector<RunRecord> read_history_or_warn(const std::string& db, bool no_history, std::string* location = nullptr);

}  // namespace headroom::cli
