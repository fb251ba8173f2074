#include "cli/check_command.h"

#include <cstdio>

#include "headroom/report.h"
#include "headroom/vllm_config.h"
#include "util/strings.h"
#include "util/terminal_text.h"

namespace headroom::cli {

tl::expected<CheckedPrediction, CheckFailure> predict_checked(const Args& vllm_args, CheckInputs inputs, CheckWarnings warnings) {
  const bool print = warnings == CheckWarnings::print;
  auto fail = [](Error e, int code) { return tl::unexpected(CheckFailure{std::move(e), code}); };
  CheckedPrediction out;
  auto cmd = resolve_vllm_command(vllm_args, inputs.entry);
  if (!cmd) return fail(cmd.error(), k_exit_usage);
  if (cmd->model.empty())
    return fail(Error{ErrorCode::invalid_argument, "no model given: headroom check MODEL [vLLM flags] (see 'headroom check --help')", ""},
                k_exit_usage);
  if (print)
    for (const auto& w : cmd->warnings) print_warning(w);
  if (auto ok = validate_flags(cmd->flags); !ok) return fail(ok.error(), k_exit_usage);
  auto version = resolve_version(inputs.target);
  if (!version) return fail(version.error(), k_exit_usage);
  if (auto installed = installed_vllm(inputs.target, !print)) {
    version = installed->version;
    const auto path = engine::sampler_path_from_install(*installed);
    if (path && !cmd->flags.use_flashinfer_sampler) {
      // Without VLLM_USE_FLASHINFER_SAMPLER this version samples with FlashInfer's kernels exactly
      // when FlashInfer is installed: what is installed settles it.
      cmd->flags.use_flashinfer_sampler = *path;
      if (print)
        std::fprintf(stderr, "headroom: note: FlashInfer is %s beside it: the sampler takes %s\n",
                     *path ? "installed" : "not installed", *path ? "FlashInfer's top-k/top-p kernels" : "PyTorch's sort path");
    }
  }

  inputs.hub.revision = cmd->revision;
  if (!print) inputs.hub.quiet = true;
  auto model = load_model_with_hub(cmd->model, inputs.hub);
  if (!model) return fail(model.error(), exit_code_for(model.error()));

  const auto& f = cmd->flags;
  int needed = f.tensor_parallel_size.value_or(1) * f.pipeline_parallel_size.value_or(1) * f.data_parallel_size.value_or(1);
  std::vector<std::string> gpu_warnings;
  auto gpus = resolve_gpu_setup(inputs.target, needed, gpu_warnings);
  if (!gpus) return fail(gpus.error(), exit_code_for(gpus.error()));
  if (print)
    for (const auto& w : gpu_warnings) print_warning(w);

  out.records = read_history_or_warn(inputs.db, inputs.no_history, &out.history_location);
  auto prediction = predict_with_history(*model, *gpus, cmd->flags, *version, out.records, &out.advice);
  if (!prediction) return fail(prediction.error(), exit_code_for(prediction.error()));
  if (print)
    for (const auto& w : prediction->warnings) print_warning(w);

  // When vLLM would not start: single changes to these flags that the same prediction says start.
  const auto& records = out.records;
  const PredictFn predict_changed = [&](const VllmFlags& changed, const GpuSetup& setup) {
    return predict_with_history(*model, setup, changed, *version, records);
  };
  out.changes = suggest_changes(*model, *gpus, cmd->flags, *prediction, predict_changed);
  out.command = std::move(*cmd);
  out.model = std::move(*model);
  out.gpus = std::move(*gpus);
  out.prediction = std::move(*prediction);
  return out;
}

std::string render_check_text(const CheckedPrediction& c, ColorMode color) {
  const Prediction& p = c.prediction;
  std::string out = render_prediction_text(c.model, c.gpus, p, use_color(color) ? TextStyle::color : TextStyle::plain);
  const int gpus_used = p.settings.tensor_parallel_size * p.settings.pipeline_parallel_size;
  if (!p.starts && p.failure && p.failure->phase != "history" && c.changes.empty()) {
    out += "\nno single change of these flags is predicted to start it; 'headroom plan " + util::terminal_safe(c.command.model) +
           "' with the same\n"
           "GPU options (or with this command after --) searches the combinations: length, utilization,\n"
           "KV cache dtype, parallelism, quantized checkpoints\n";
  }
  if (!c.changes.empty()) {
    out += "\nto start, change one of (each predicted the same way):\n";
    for (const auto& ch : c.changes) {
      std::string what = util::terminal_safe(describe_change(ch, c.command.flags));
      if (ch.gpus != gpus_used) what += " (" + std::to_string(ch.gpus) + " GPUs)";
      // A change longer than the column (a JSON value) puts its figures on a line of their own.
      if (what.size() < 34) what.resize(34, ' ');
      else if (what.size() > 34) what += "\n" + std::string(36, ' ');
      char concurrency[32];
      std::snprintf(concurrency, sizeof concurrency, "%.2fx", ch.prediction.max_concurrency);
      out += "  " + what + " " + util::with_commas(ch.prediction.kv_cache_tokens) + " tokens of KV cache, " + concurrency +
             " at " + util::with_commas(ch.prediction.settings.max_model_len) + " tokens\n      " + util::terminal_safe(ch.why) + "\n";
    }
  }
  return out;
}

}  // namespace headroom::cli
