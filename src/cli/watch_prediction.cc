#include "cli/watch_prediction.h"

#include <fmt/format.h>

#include <fstream>
#include <string_view>
#include <vector>

#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/vllm_log.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_engine.h"
#include "util/regular_file.h"

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

Result<watch::KvCapacityExpectation> watch_expectation_from_log(const std::string& path, std::vector<std::string>& warnings) {
  if (auto regular = util::check_regular_file(path); !regular && regular.error().code != ErrorCode::not_found)
    return tl::unexpected(regular.error());
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::not_found, "cannot open the vLLM log", path);
  // Lines are cut at 1 MiB, as the log scanner cuts them (DiagnoseOptions::max_line_bytes): a file
  // without newlines must not be read into one string.
  constexpr std::size_t k_max_line = 1 << 20;
  VllmLogParser parser;
  std::string line;
  std::vector<char> buf(1 << 16);
  bool skipping = false;  // past the first k_max_line bytes of a long line
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    std::string_view chunk(buf.data(), static_cast<std::size_t>(in.gcount()));
    while (!chunk.empty()) {
      auto nl = chunk.find('\n');
      std::string_view piece = chunk.substr(0, nl);
      if (!skipping) line.append(piece.substr(0, k_max_line - std::min(k_max_line, line.size())));
      if (line.size() >= k_max_line) skipping = true;
      if (nl == std::string_view::npos) break;
      parser.feed(line);
      line.clear();
      skipping = false;
      chunk.remove_prefix(nl + 1);
    }
  }
  if (!line.empty()) parser.feed(line);
  const LoggedRun& run = parser.run();
  const int block_size = run.flags.block_size.value_or(16);
  const std::string what = run.model.empty() ? path : run.model + " (" + path + ")";
  if (run.num_gpu_blocks && *run.num_gpu_blocks > 0) {
    watch::KvCapacityExpectation e;
    e.num_gpu_blocks = *run.num_gpu_blocks;
    e.block_size = block_size;
    e.setup = "blocks vLLM logged at startup for " + what;
    return e;
  }
  if (run.kv_tokens && *run.kv_tokens > 0) {
    // "GPU KV cache size: N tokens" is blocks × block size for one KV cache group.
    watch::KvCapacityExpectation e;
    e.num_gpu_blocks = *run.kv_tokens / block_size;
    e.block_size = block_size;
    e.setup = "KV cache size vLLM logged at startup for " + what;
    return e;
  }
  if (run.model.empty() || !run.total_gib)
    return make_error(ErrorCode::invalid_argument,
                      "the log names neither its KV cache blocks nor the model and GPU memory to predict them", path);
  auto spec = load_model(run.model);
  if (!spec) return tl::unexpected(spec.error());
  GpuSetup gpus;
  gpus.gpu = custom_gpu(*run.total_gib);
  const auto& f = run.flags;
  gpus.count = f.tensor_parallel_size.value_or(1) * f.pipeline_parallel_size.value_or(1) * f.data_parallel_size.value_or(1);
  MeasuredTerms measured;
  auto bytes = [](const std::optional<double>& gib) { return gib ? std::optional<Bytes>(from_gib(*gib)) : std::nullopt; };
  measured.weights = bytes(run.weights_gib);
  measured.activation_peak = bytes(run.activation_peak_gib);
  measured.non_torch = bytes(run.non_torch_gib);
  measured.source = "measured in " + path;
  PredictOptions options;
  options.measured = measured;
  auto prediction = predict(*spec, gpus, run.flags, run.version.value_or(VllmVersion::newest_modelled()), options);
  if (!prediction) return tl::unexpected(prediction.error());
  for (const auto& w : prediction->warnings) warnings.push_back(w);
  return watch::expectation_from(*prediction, "predicted from " + what);
}

}  // namespace headroom::cli
