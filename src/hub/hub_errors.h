// What a failed Hub request means for the user: gated repos, unknown repos and revisions, rate
// limits, timeouts and no network, each as one Error with what to do next. Internal to src/hub/.
#pragma once

#include <string>

#include "headroom/hub.h"

namespace headroom::hub::detail {

// What was being read, for messages: the repo, the revision asked for, the file (or "" for the
// revision's file list).
struct RequestContext {
  const HubSettings* settings = nullptr;
  std::string repo;
  std::string revision;
  std::string file;
};

// Whether the request never reached the Hub (name resolution failed, no connection made): the
// caller falls back at once instead of reporting an error.
bool is_unreachable(const HttpResult& result);

// Whether a retry may succeed: 429, 5xx, a connection cut in the middle of the answer.
bool is_retryable(const HttpResult& result);

// Seconds a 429/503 answer asks to wait (Retry-After in seconds), or nullopt.
std::optional<double> retry_after_s(const HttpResult& result);

// The Error for a result that is not a success (transport failure or HTTP status >= 400).
Error request_error(const HttpResult& result, const RequestContext& context, int retries);

}  // namespace headroom::hub::detail
