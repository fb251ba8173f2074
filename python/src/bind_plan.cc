// headroom/plan.h for Python: plan(), the steps of `headroom plan` (src/cli/plan.cc) with a JSON
// request in place of the command line, answered with plan's --format json document (plan_render).
#include <pybind11/stl.h>

#include "binding.h"
#include "headroom/api_request.h"
#include "headroom/gpu_setup.h"
#include "headroom/plan.h"
#include "headroom/plan_render.h"
#include "headroom/units.h"

namespace headroom::python {

namespace {

struct PlanOutput {
  std::string document;
  std::vector<std::string> warnings;
};

PlanOutput run_plan(const std::string& request, const HubArgs& hub, const std::string& db, bool no_history) {
  PlanOutput out;
  PlanApiRequest req = take(parse_plan_request(request), Step::request).request;
  PlanRequest plan_request;
  plan_request.goal = take(parse_plan_goal(req.goal), Step::request, "goal");
  if (req.target.used_gib && req.target.free_gib)
    throw LibraryError({ErrorCode::invalid_argument, "used_gib and free_gib describe the same memory: give one of them", "used_gib"},
                       Step::request);
  if (req.gpus_per_node) {
    if (req.target.gpus > 0 && req.target.gpus != *req.gpus_per_node)
      throw LibraryError({ErrorCode::invalid_argument,
                          "gpus " + std::to_string(req.target.gpus) + " and gpus_per_node " + std::to_string(*req.gpus_per_node) +
                              " disagree: with nodes, gpus is the count per node; give one of them",
                          "gpus_per_node"},
                         Step::request);
    req.target.gpus = *req.gpus_per_node;
  }
  auto version = take(resolve_vllm_version(req.target), Step::request, "vllm_version");
  ModelSpec model = load_model_with(req.model, hub, out.warnings);
  // 0: every live GPU when probing; one catalogue GPU per node unless gpus says more (as `plan`).
  GpuSetup gpus = take(resolve_gpu_setup(req.target, 0, out.warnings), Step::gpu);
  std::string location;
  std::vector<RunRecord> records = read_history_for(db, no_history, location, out.warnings);
  plan_request.context_tokens = req.context;
  plan_request.concurrency = req.concurrency;
  plan_request.max_gpus = req.max_gpus;
  plan_request.allow_fp8_kv = req.allow_fp8_kv;
  plan_request.allow_eager = req.allow_eager;
  plan_request.kept = req.kept;
  if (req.margin_gib) plan_request.safety_margin_bytes = from_gib(*req.margin_gib);
  plan_request.history = &records;
  Plan plan = take(make_plan(model, gpus, plan_request, version), Step::predict);
  out.document = dump(plan_to_json(model, plan));
  return out;
}

}  // namespace

void bind_plan(py::module_& m) {
  m.def(
      "plan",
      [](const std::string& request, bool offline, std::optional<double> hub_timeout, std::optional<double> hub_connect_timeout,
         const std::string& revision, const std::string& db, bool no_history) {
        PlanOutput out;
        {
          py::gil_scoped_release nogil;
          out = run_plan(request, HubArgs{offline, hub_timeout, hub_connect_timeout, revision}, db, no_history);
        }
        return py::make_tuple(out.document, out.warnings);
      },
      py::arg("request"), py::arg("offline"), py::arg("hub_timeout"), py::arg("hub_connect_timeout"), py::arg("revision"),
      py::arg("db"), py::arg("no_history"),
      "plan --format json for a /v1/plan request body: (document JSON text, warnings). The GIL is released.");
}

}  // namespace headroom::python
