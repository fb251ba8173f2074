#include "cli/target_options.h"

#include <algorithm>

#include "cli/cli_common.h"
#include "headroom/api_request.h"
#include "headroom/engine_limits.h"
#include "headroom/gpu.h"
#include "headroom/gpu_probe.h"

namespace headroom::cli {

void add_target_options(CLI::App& app, TargetOptions& t) {
  app.add_option("--gpu", t.gpu);
  app.add_option("--gpus", t.gpus)->check(CLI::PositiveNumber);
  app.add_option("--nodes", t.nodes)->check(CLI::PositiveNumber);
  app.add_option("--gpu-memory-gib", t.gpu_memory_gib);
  app.add_option("--used-gib", t.used_gib);
  app.add_option("--free-gib", t.free_gib);
  app.add_option("--vllm-version,--vllm", t.vllm_version);
}

void add_entrypoint_options(CLI::App& app, EntrypointOptions& o) {
  app.add_option("--entrypoint", o.entrypoint)->check(CLI::IsMember({"llm", "serve"}));
  app.add_option("--env", o.env);
}

Result<VllmCommand> resolve_vllm_command(const Args& vllm_args, const EntrypointOptions& o) {
  std::string joined;
  for (const auto& a : vllm_args) joined += (joined.empty() ? "" : " ") + a;
  const bool llm_call = joined.find("LLM(") != std::string::npos;
  // A whole command pasted as one quoted argument (`-- "vllm serve M --max-model-len 8192"`): no
  // model id or single flag value holds whitespace on its own, so split it as the shell would have.
  Args words = vllm_args;
  if (!llm_call && vllm_args.size() == 1 && vllm_args[0].find_first_of(" \t\r\n") != std::string::npos) {
    auto split = split_shell_words(vllm_args[0]);
    if (!split) return make_error(ErrorCode::invalid_argument, split.error().message, "the pasted command");
    words = std::move(*split);
  }
  Result<VllmCommand> cmd = llm_call ? parse_llm_call(joined) : parse_vllm_command(words);
  if (!cmd) return cmd;
  if (o.entrypoint == "llm") cmd->flags.usage_context = UsageContext::llm_class;
  if (o.entrypoint == "serve") cmd->flags.usage_context = UsageContext::api_server;
  for (const auto& e : o.env) {
    auto eq = e.find('=');
    if (eq == std::string::npos || eq == 0)
      return make_error(ErrorCode::invalid_argument, "expected VAR=value, got '" + e + "'", "--env");
    auto applied = apply_vllm_env(cmd->flags, e.substr(0, eq), e.substr(eq + 1));
    if (!applied) return tl::unexpected(applied.error());
    if (!*applied) cmd->warnings.push_back("environment variable " + e.substr(0, eq) + " does not change the prediction; ignored");
  }
  return cmd;
}

void split_args(const Args& args, const std::vector<std::string>& own_value_flags,
                const std::vector<std::string>& own_bool_flags, Args& own, Args& vllm) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      vllm.insert(vllm.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      return;
    }
    std::string name = a.substr(0, a.find('='));
    if (std::find(own_value_flags.begin(), own_value_flags.end(), name) != own_value_flags.end()) {
      own.push_back(a);
      if (name == a && i + 1 < args.size()) own.push_back(args[++i]);
    } else if (std::find(own_bool_flags.begin(), own_bool_flags.end(), name) != own_bool_flags.end()) {
      own.push_back(a);
    } else {
      vllm.push_back(a);
    }
  }
}

Result<void> apply_gpu_count(TargetOptions& o) {
  auto counted = split_gpu_count(o.gpu);
  if (counted.count == 0) return {};
  if (o.gpus > 0 && o.gpus != counted.count)
    return make_error(ErrorCode::invalid_argument,
                      "'" + o.gpu + "' means " + std::to_string(counted.count) + " GPUs but --gpus says " +
                          std::to_string(o.gpus) + ": give the count once",
                      "--gpu");
  o.gpu = counted.name;
  o.gpus = counted.count;
  return {};
}

Result<GpuSetup> resolve_gpu_setup(const TargetOptions& given, int needed, std::vector<std::string>& warnings) {
  TargetOptions o = given;
  if (auto counted = apply_gpu_count(o); !counted) return tl::unexpected(counted.error());
  GpuSetup setup;
  setup.nodes = std::max(1, o.nodes);
  setup.count = o.gpus > 0 ? o.gpus : std::max(1, (needed + setup.nodes - 1) / setup.nodes);
  if (auto ok = validate_gpu_setup_size(setup); !ok) return tl::unexpected(ok.error());
  if (o.gpu_memory_gib) {
    if (*o.gpu_memory_gib <= 0)
      return make_error(ErrorCode::invalid_argument, "must be a positive number of GiB", "--gpu-memory-gib");
    setup.gpu = custom_gpu(*o.gpu_memory_gib);
  } else if (o.gpu == "auto" || o.gpu.empty()) {
    // The live GPUs of this host: `needed` of them, or all when needed is 0.
    auto inventory = probe_gpus();
    if (!inventory)
      return make_error(ErrorCode::invalid_argument,
                        "no GPU given and none found on this host (" + inventory.error().message +
                            "): name one with --gpu NAME (see 'headroom gpus --catalog') or give its memory with --gpu-memory-gib X");
    for (const auto& w : inventory->warnings) warnings.push_back(w);
    int count = o.gpus > 0 ? o.gpus : needed > 0 ? needed : static_cast<int>(usable_gpus(*inventory).size());
    auto live = gpu_setup_from_inventory(*inventory, std::max(1, count), &warnings);
    if (!live) return tl::unexpected(live.error());
    live->nodes = setup.nodes;
    if (o.used_gib || o.free_gib) {
      // The options describe the memory others hold instead of what the probe saw.
      Bytes free = o.free_gib ? from_gib(*o.free_gib) : live->gpu.total_bytes - from_gib(*o.used_gib);
      if (free <= 0 || free > live->gpu.total_bytes)
        return make_error(ErrorCode::invalid_argument, "free memory must be between 0 and the GPU's total",
                          o.free_gib ? "--free-gib" : "--used-gib");
      live->free_bytes = free;
      live->memory_holders.clear();
    }
    return *live;
  } else {
    auto gpu = GpuCatalog::builtin().find(o.gpu);
    if (!gpu) return tl::unexpected(gpu.error());
    setup.gpu = *gpu;
  }
  setup.count = o.gpus > 0 ? o.gpus : std::max(1, (needed + setup.nodes - 1) / setup.nodes);
  if (o.used_gib || o.free_gib) {
    Bytes free = o.free_gib ? from_gib(*o.free_gib) : setup.gpu.total_bytes - from_gib(*o.used_gib);
    if (free <= 0 || free > setup.gpu.total_bytes)
      return make_error(ErrorCode::invalid_argument,
                        "free memory must be between 0 and the GPU's " + std::to_string(setup.gpu.total_gib()) + " GiB",
                        o.free_gib ? "--free-gib" : "--used-gib");
    setup.free_bytes = free;
    if (o.used_gib)
      setup.memory_holders.push_back("other processes hold " + std::to_string(*o.used_gib).substr(0, 4) + " GiB on each GPU (--used-gib)");
  }
  return setup;
}

std::vector<RunRecord> read_history_or_warn(const std::string& db, bool no_history, std::string* location) {
  if (location) location->clear();
  if (no_history) return {};
  std::string where = default_history_location(db);
  if (location) *location = where;
  auto read = read_history(where);
  if (!read) {
    print_warning("run history not used: " + read.error().to_string());
    return {};
  }
  return std::move(*read);
}

Result<VllmVersion> resolve_version(const TargetOptions& o) {
  if (o.vllm_version.empty()) return VllmVersion::newest_modelled();
  return VllmVersion::parse(o.vllm_version);
}

}  // namespace headroom::cli
