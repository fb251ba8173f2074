#include "cli/target_options.h"

#include <algorithm>
#include <cstdio>

#include "cli/cli_common.h"
#include "headroom/api_request.h"
#include "headroom/gpu_setup.h"
#include "util/terminal_text.h"

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

namespace {

TargetRequest to_request(const TargetOptions& o) {
  TargetRequest t;
  t.gpu = o.gpu;
  t.gpus = o.gpus;
  t.nodes = o.nodes;
  t.gpu_memory_gib = o.gpu_memory_gib;
  t.used_gib = o.used_gib;
  t.free_gib = o.free_gib;
  t.vllm_version = o.vllm_version;
  return t;
}

}  // namespace

Result<void> apply_gpu_count(TargetOptions& o) {
  TargetRequest t = to_request(o);
  if (auto counted = headroom::apply_gpu_count(t); !counted) return counted;
  o.gpu = t.gpu;
  o.gpus = t.gpus;
  return {};
}

Result<GpuSetup> resolve_gpu_setup(const TargetOptions& o, int needed, std::vector<std::string>& warnings) {
  return headroom::resolve_gpu_setup(to_request(o), needed, warnings);
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

Result<VllmVersion> resolve_version(const TargetOptions& o) { return resolve_vllm_version(to_request(o)); }

std::optional<engine::InstalledVllm> installed_vllm(const TargetOptions& o, bool quiet) {
  if (!o.vllm_version.empty()) return std::nullopt;
  auto found = engine::find_installed_vllm(engine::python_site_dirs());
  if (found && !quiet)
    std::fprintf(stderr, "headroom: note: modelling vLLM %s, installed in %s (--vllm-version V models another)\n",
                 util::terminal_safe(found->version_text).c_str(), util::terminal_safe(found->site.string()).c_str());
  return found;
}

}  // namespace headroom::cli
