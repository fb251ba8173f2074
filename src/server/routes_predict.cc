// POST /v1/check and POST /v1/plan: the steps of `headroom check` and `headroom plan` (src/cli/
// check.cc, plan.cc) with the request body in place of the options, answered with their
// --format json documents.
#include "headroom/api_request.h"
#include "headroom/check_changes.h"
#include "headroom/check_document.h"
#include "headroom/history.h"
#include "headroom/plan.h"
#include "headroom/plan_render.h"
#include "headroom/units.h"
#include "server/api.h"
#include "server/request_target.h"

namespace headroom::server {

namespace {

// Answers come from the cache when the same canonical request was answered with the same run
// history; only answers that do not depend on this host's GPUs are kept.
std::string cache_key(const char* route, std::uint64_t history, const std::string& canonical) {
  return std::string(route) + '\n' + std::to_string(history) + '\n' + canonical;
}

}  // namespace

ApiResponse api_check(ApiContext& ctx, std::string_view body) {
  auto parsed = parse_check_request(body);
  if (!parsed) return error_response(from_library(parsed.error()));
  const CheckApiRequest& req = parsed->request;
  auto history = ctx.history.get();
  bool cacheable = target_is_static(req.target);
  std::string key = cacheable ? cache_key("check", history.fingerprint, parsed->canonical) : "";
  if (cacheable)
    if (auto hit = ctx.cache.get(key)) return json_response(*hit);

  auto version = resolve_target_version(req.target);
  if (!version) return error_response(version.error());
  auto model = load_requested_model(req.command.model, ctx.options);
  if (!model) return error_response(model.error());
  const auto& f = req.command.flags;
  int needed = f.tensor_parallel_size.value_or(1) * f.pipeline_parallel_size.value_or(1) * f.data_parallel_size.value_or(1);
  std::vector<std::string> warnings;
  auto gpus = resolve_target_gpus(req.target, needed, ctx.options, warnings);
  if (!gpus) return error_response(gpus.error());
  HistoryAdvice advice;
  auto prediction = predict_with_history(*model, *gpus, f, *version, *history.records, &advice);
  if (!prediction) return error_response(from_library(prediction.error()));
  auto doc = check_document(*model, *gpus, *prediction, req.command.warnings, *history.records, advice, ctx.history.location());
  const PredictFn predict_changed = [&](const VllmFlags& changed, const GpuSetup& setup) {
    return predict_with_history(*model, setup, changed, *version, *history.records);
  };
  doc["changes"] = changes_document(suggest_changes(*model, *gpus, f, *prediction, predict_changed));
  std::string out = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (cacheable) ctx.cache.put(key, out);
  return json_response(out);
}

std::optional<ApiResponse> prepare_plan(ApiContext& ctx, std::string_view body, PreparedPlan& out) {
  auto parsed = parse_plan_request(body);
  if (!parsed) return error_response(from_library(parsed.error()));
  PlanApiRequest req = parsed->request;
  auto goal = parse_plan_goal(req.goal);
  if (!goal) {
    auto e = from_library(goal.error());
    e.where = "goal";
    return error_response(e);
  }
  if (req.gpus_per_node) {
    if (req.target.gpus > 0 && req.target.gpus != *req.gpus_per_node)
      return error_response({422, "invalid_argument",
                             "\"gpus\" " + std::to_string(req.target.gpus) + " and \"gpus_per_node\" " +
                                 std::to_string(*req.gpus_per_node) +
                                 " disagree: with \"nodes\", \"gpus\" is the count per node; give one of them",
                             "gpus_per_node"});
    req.target.gpus = *req.gpus_per_node;
  }
  out.history = ctx.history.get();
  out.cacheable = target_is_static(req.target);
  out.cache_key = out.cacheable ? cache_key("plan", out.history.fingerprint, parsed->canonical) : "";
  if (out.cacheable)
    if (auto hit = ctx.cache.get(out.cache_key)) return json_response(*hit);

  auto version = resolve_target_version(req.target);
  if (!version) return error_response(version.error());
  out.version = *version;
  auto model = load_requested_model(req.model, ctx.options);
  if (!model) return error_response(model.error());
  out.model = std::move(*model);
  std::vector<std::string> warnings;
  // 0: every live GPU when probing; one catalogue GPU per node unless "gpus" says more (as `plan`).
  auto gpus = resolve_target_gpus(req.target, 0, ctx.options, warnings);
  if (!gpus) return error_response(gpus.error());
  out.gpus = std::move(*gpus);

  PlanRequest& request = out.request;
  request.context_tokens = req.context;
  request.concurrency = req.concurrency;
  request.goal = *goal;
  request.max_gpus = req.max_gpus;
  request.allow_fp8_kv = req.allow_fp8_kv;
  request.allow_eager = req.allow_eager;
  request.kept = req.kept;
  if (req.margin_gib) request.safety_margin_bytes = from_gib(*req.margin_gib);
  request.history = out.history.records.get();
  out.from_command = req.from_command;
  return std::nullopt;
}

ApiResponse answer_plan(ApiContext& ctx, PreparedPlan& prepared) {
  auto plan = make_plan(prepared.model, prepared.gpus, prepared.request, prepared.version);
  if (!plan) return error_response(from_library(plan.error()));
  if (!prepared.from_command.empty()) {
    std::string line;
    for (const auto& t : prepared.from_command) line += (line.empty() ? "" : "; ") + t;
    plan->explanation.insert(plan->explanation.begin(), "from the command: " + line);
  }
  std::string out = plan_to_json(prepared.model, *plan).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (prepared.cacheable) ctx.cache.put(prepared.cache_key, out);
  return json_response(out);
}

ApiResponse api_plan(ApiContext& ctx, std::string_view body) {
  PreparedPlan prepared;
  if (auto answered = prepare_plan(ctx, body, prepared)) return std::move(*answered);
  return answer_plan(ctx, prepared);
}

}  // namespace headroom::server
