// The routes of `headroom serve`, each as thin as the CLI subcommand it mirrors: parse the request
// into the library calls the CLI makes and render with the CLI's JSON renderers, so an answer is
// byte for byte what `headroom CMD --format json` prints. HTTP concerns (auth, limits, CORS,
// metrics) live in server.cc, not here.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "headroom/knowledge_base.h"
#include "headroom/model.h"
#include "headroom/plan.h"
#include "headroom/vllm_engine.h"
#include "headroom/vllm_version.h"
#include "headroom/server.h"
#include "server/api_error.h"
#include "server/diagnoser_pool.h"
#include "server/history_cache.h"
#include "server/response_cache.h"

namespace headroom::server {

struct ApiContext {
  const ServerOptions& options;
  HistoryCache& history;
  ResponseCache& cache;
  const KnowledgeBase& kb;
  DiagnoserPool& diagnosers;  // built from kb
};

// Request parameters from the URL's query string.
using Query = std::multimap<std::string, std::string>;

// Reads a request body in chunks: calls `receive(data, size)` until the body ends or receive
// returns false; returns false when reading stopped early (httplib's ContentReader).
using BodyReader = std::function<bool(const std::function<bool(const char*, std::size_t)>& receive)>;

ApiResponse api_check(ApiContext& ctx, std::string_view body);
ApiResponse api_plan(ApiContext& ctx, std::string_view body);

// api_plan's two steps: the request checked and resolved (parse, range checks, goal, cache, vLLM
// version, model, GPUs), then the search and its document. prepare_plan answers errors and cached
// answers itself (the optional is set) and otherwise fills `out` for answer_plan.
struct PreparedPlan {
  HistoryCache::Snapshot history;
  bool cacheable = false;
  std::string cache_key;
  VllmVersion version;
  ModelSpec model;
  GpuSetup gpus;
  PlanRequest request;
  std::vector<std::string> from_command;
};
std::optional<ApiResponse> prepare_plan(ApiContext& ctx, std::string_view body, PreparedPlan& out);
ApiResponse answer_plan(ApiContext& ctx, PreparedPlan& prepared);
ApiResponse api_gpus(ApiContext& ctx, const Query& query);
ApiResponse api_models(ApiContext& ctx, const Query& query);
ApiResponse api_history(ApiContext& ctx);
// The log is streamed from `read`: diagnosis runs while the body arrives (plain or gzip), memory
// stays bounded, and a body past options.max_log_bytes is answered 413.
ApiResponse api_diagnose(ApiContext& ctx, const BodyReader& read, const Query& query);
ApiResponse api_record(ApiContext& ctx, const BodyReader& read, const Query& query);

// Reads a whole JSON body of at most `limit` bytes. Errors: 413 past the limit, 408 past the
// request deadline.
ApiResult<std::string> read_small_body(const BodyReader& read, std::size_t limit, int timeout_s);

}  // namespace headroom::server
