#include "cli/watch_prediction.h"

#include <fmt/format.h>

#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_engine.h"

namespace headroom::cli {

Result<std::optional<watch::KvCapacityExpectation>> watch_expectation(const std::string& model, const TargetOptions& target,
                                                                      const Args& vllm_args,
                                                                      std::vector<std::string>& warnings) {
  if (model.empty() && vllm_args.empty()) return std::optional<watch::KvCapacityExpectation>{};
  Args command = vllm_args;
  if (!model.empty()) command.insert(command.begin(), model);
  auto cmd = parse_vllm_command(command);
  if (!cmd) return tl::unexpected(cmd.error());
  if (cmd->model.empty())
    return make_error(ErrorCode::invalid_argument, "expected the model the server runs, to compare its KV cache with the prediction", "--model");
  for (const auto& w : cmd->warnings) warnings.push_back(w);
  if (auto ok = validate_flags(cmd->flags); !ok) return tl::unexpected(ok.error());
  if ((target.gpu.empty() || target.gpu == "auto") && !target.gpu_memory_gib)
    return make_error(ErrorCode::invalid_argument,
                      "expected the GPU the server runs on (e.g. --gpu H100): the live GPUs are held by the server itself",
                      "--gpu");
  auto version = resolve_version(target);
  if (!version) return tl::unexpected(version.error());
  auto spec = load_model(cmd->model);
  if (!spec) return tl::unexpected(spec.error());
  const auto& f = cmd->flags;
  int needed = f.tensor_parallel_size.value_or(1) * f.pipeline_parallel_size.value_or(1) * f.data_parallel_size.value_or(1);
  auto gpus = resolve_gpu_setup(target, needed, warnings);
  if (!gpus) return tl::unexpected(gpus.error());
  auto prediction = predict(*spec, *gpus, cmd->flags, *version);
  if (!prediction) return tl::unexpected(prediction.error());
  for (const auto& w : prediction->warnings) warnings.push_back(w);
  std::string setup = fmt::format("{} on {} × {}, vLLM {}", cmd->model, prediction->gpus_used, gpus->gpu.name,
                                  prediction->version.to_string());
  return std::optional<watch::KvCapacityExpectation>(watch::expectation_from(*prediction, setup));
}

}  // namespace headroom::cli
