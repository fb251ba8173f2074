// headroom/vllm_engine.h for Python: check(), the steps of `headroom check` (src/cli/check.cc)
// with a JSON request in place of the command line, answered with check's --format json document.
#include <pybind11/stl.h>

#include "binding.h"
#include "headroom/api_request.h"
#include "headroom/check_changes.h"
#include "headroom/check_document.h"
#include "headroom/gpu_setup.h"
#include "headroom/vllm_engine.h"

namespace headroom::python {

namespace {

struct CheckOutput {
  std::string document;
  std::vector<std::string> warnings;  // ignored flags, probe and history warnings, Hub notes
};

// How vLLM is started and its VLLM_* environment, as check's --entrypoint and --env.
void apply_entrypoint(VllmCommand& cmd, const std::string& entrypoint, const std::vector<std::string>& env) {
  if (entrypoint == "llm") cmd.flags.usage_context = UsageContext::llm_class;
  else if (entrypoint == "serve") cmd.flags.usage_context = UsageContext::api_server;
  else throw LibraryError({ErrorCode::invalid_argument, "expected 'llm' or 'serve', got '" + entrypoint + "'", "entrypoint"}, Step::request);
  for (const auto& e : env) {
    auto eq = e.find('=');
    if (eq == std::string::npos || eq == 0)
      throw LibraryError({ErrorCode::invalid_argument, "expected VAR=value, got '" + e + "'", "env"}, Step::request);
    if (!take(apply_vllm_env(cmd.flags, e.substr(0, eq), e.substr(eq + 1)), Step::request))
      cmd.warnings.push_back("environment variable " + e.substr(0, eq) + " does not change the prediction; ignored");
  }
}

CheckOutput run_check(const std::string& request, const std::string& entrypoint, const std::vector<std::string>& env,
                      const HubArgs& given_hub, const std::string& db, bool no_history) {
  CheckOutput out;
  auto parsed = take(parse_check_request(request), Step::request);
  VllmCommand& cmd = parsed.request.command;
  apply_entrypoint(cmd, entrypoint, env);
  for (const auto& w : cmd.warnings) out.warnings.push_back(w);
  auto version = take(resolve_vllm_version(parsed.request.target), Step::request, "vllm_version");
  HubArgs hub = given_hub;
  hub.revision = cmd.revision;
  ModelSpec model = load_model_with(cmd.model, hub, out.warnings);
  const VllmFlags& f = cmd.flags;
  int needed = f.tensor_parallel_size.value_or(1) * f.pipeline_parallel_size.value_or(1) * f.data_parallel_size.value_or(1);
  GpuSetup gpus = take(resolve_gpu_setup(parsed.request.target, needed, out.warnings), Step::gpu);
  std::string history_location;
  std::vector<RunRecord> records = read_history_for(db, no_history, history_location, out.warnings);
  HistoryAdvice advice;
  Prediction prediction = take(predict_with_history(model, gpus, f, version, records, &advice), Step::predict);
  for (const auto& w : prediction.warnings) out.warnings.push_back(w);
  // When vLLM would not start: single changes of these flags that the same prediction says start.
  const PredictFn predict_changed = [&](const VllmFlags& changed, const GpuSetup& setup) {
    return predict_with_history(model, setup, changed, version, records);
  };
  auto doc = check_document(model, gpus, prediction, cmd.warnings, records, advice, history_location);
  doc["changes"] = changes_document(suggest_changes(model, gpus, f, prediction, predict_changed));
  out.document = dump(doc);
  return out;
}

}  // namespace

void bind_vllm_engine(py::module_& m) {
  m.def(
      "check",
      [](const std::string& request, const std::string& entrypoint, const std::vector<std::string>& env, bool offline,
         std::optional<double> hub_timeout, std::optional<double> hub_connect_timeout, const std::string& db,
         bool no_history) {
        CheckOutput out;
        {
          py::gil_scoped_release nogil;
          out = run_check(request, entrypoint, env, HubArgs{offline, hub_timeout, hub_connect_timeout, ""}, db, no_history);
        }
        return py::make_tuple(out.document, out.warnings);
      },
      py::arg("request"), py::arg("entrypoint"), py::arg("env"), py::arg("offline"), py::arg("hub_timeout"),
      py::arg("hub_connect_timeout"), py::arg("db"), py::arg("no_history"),
      "check --format json for a /v1/check request body: (document JSON text, warnings). The GIL is released.");
}

}  // namespace headroom::python
