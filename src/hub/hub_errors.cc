// Hub failures as messages. The Hub's conventions (huggingface_hub utils/_http.py,
// hf_raise_for_status): X-Error-Code names GatedRepo, RepoNotFound, RevisionNotFound and
// EntryNotFound; X-Error-Message carries the server's words; an unauthenticated request for a
// private, gated or missing repo gets 401.
#include <fmt/format.h>

#include <cstdlib>

#include "hub/hub_errors.h"

namespace headroom::hub::detail {

namespace {

std::string header(const HttpResult& r, const std::string& name) {
  auto it = r.headers.find(name);
  if (it != r.headers.end()) return it->second;
  it = r.first_headers.find(name);
  return it != r.first_headers.end() ? it->second : std::string();
}

std::string what(const RequestContext& c) {
  return c.file.empty() ? "the file list of " + c.repo + "@" + c.revision : c.file + " of " + c.repo + "@" + c.revision;
}

}  // namespace

bool is_unreachable(const HttpResult& r) {
  return r.failure == TransportFailure::resolve || r.failure == TransportFailure::connect;
}

bool is_retryable(const HttpResult& r) {
  if (r.failure == TransportFailure::cut) return true;
  return r.failure == TransportFailure::none && (r.status == 429 || (r.status >= 500 && r.status <= 599));
}

std::optional<double> retry_after_s(const HttpResult& r) {
  std::string v = header(r, "retry-after");
  if (v.empty() || v.size() > 9) return std::nullopt;
  char* end = nullptr;
  double s = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || s < 0) return std::nullopt;  // HTTP dates are not used by the Hub
  return s;
}

Error request_error(const HttpResult& r, const RequestContext& c, int retries) {
  const HubSettings& s = *c.settings;
  const std::string page = s.endpoint + "/" + c.repo;
  switch (r.failure) {
    case TransportFailure::none: break;
    case TransportFailure::resolve:
    case TransportFailure::connect:
      return Error{ErrorCode::unavailable,
                   fmt::format("{}cannot reach the Hub at {} ({}); use --offline (headroom's Hub cache), an id from the "
                               "built-in catalogue, or a local folder with config.json",
                               k_no_network_prefix, s.endpoint, r.detail),
                   {}};
    case TransportFailure::timeout:
      return Error{ErrorCode::unavailable,
                   fmt::format("reading {} from the Hub: {} (--hub-timeout)", what(c), r.detail), {}};
    case TransportFailure::cut:
      return Error{ErrorCode::unavailable,
                   fmt::format("reading {} from the Hub: {}{}", what(c), r.detail,
                               retries > 0 ? fmt::format(" ({} retries)", retries) : ""),
                   {}};
    case TransportFailure::too_large:
      return Error{ErrorCode::parse_error, fmt::format("reading {} from the Hub: {}", what(c), r.detail), {}};
    case TransportFailure::other:
      return Error{ErrorCode::unavailable, fmt::format("reading {} from the Hub: {}", what(c), r.detail), {}};
  }
  const std::string code = header(r, "x-error-code");
  const bool has_token = !s.token.empty();
  if (code == "GatedRepo") {
    if (!has_token || r.status == 401)
      return Error{ErrorCode::unavailable,
                   fmt::format("{} is a gated model and {} (HTTP {}): accept its license on {} and set HF_TOKEN to a "
                               "token of that account",
                               c.repo, has_token ? "the Hub did not accept the token" : "no Hugging Face token was given",
                               r.status, page),
                   {}};
    return Error{ErrorCode::unavailable,
                 fmt::format("{} is a gated model and the Hub refused the token (HTTP {}): the token's account has not "
                             "been granted access; accept the license on {} with that account, or set HF_TOKEN to a "
                             "token of an account that has",
                             c.repo, r.status, page),
                 {}};
  }
  if (code == "RevisionNotFound")
    return Error{ErrorCode::not_found,
                 fmt::format("unknown revision '{}' of {}: expected a branch, tag or commit sha of the repo (HTTP {})",
                             c.revision, c.repo, r.status),
                 {}};
  if (code == "RepoNotFound" || (r.status == 404 && c.file.empty()) || (r.status == 401 && c.file.empty() && code.empty()))
    return Error{ErrorCode::not_found,
                 fmt::format("unknown model '{}': the Hub has no such repo (HTTP {}{})", c.repo, r.status,
                             has_token ? "" : "; if it is private, set HF_TOKEN"),
                 {}};
  if (code == "EntryNotFound" || r.status == 404)
    return Error{ErrorCode::not_found, fmt::format("{} is not in {}@{} (HTTP {})", c.file, c.repo, c.revision, r.status), {}};
  if (r.status == 401)
    return Error{ErrorCode::unavailable,
                 fmt::format("the Hub refused the token (HTTP 401) reading {}: check HF_TOKEN", what(c)), {}};
  if (r.status == 403)
    return Error{ErrorCode::unavailable,
                 fmt::format("the Hub refused access to {} (HTTP 403){}", what(c),
                             has_token ? ": the token lacks the permission" : ": set HF_TOKEN"),
                 {}};
  if (r.status == 429) {
    auto wait = retry_after_s(r);
    return Error{ErrorCode::unavailable,
                 fmt::format("the Hub is rate limiting requests (HTTP 429) reading {} after {} retries{}", what(c), retries,
                             wait ? fmt::format("; it asks to retry after {:g} s", *wait) : ""),
                 {}};
  }
  return Error{ErrorCode::unavailable,
               fmt::format("the Hub answered HTTP {} reading {}{}", r.status, what(c),
                           retries > 0 ? fmt::format(" after {} retries", retries) : ""),
               {}};
}

}  // namespace headroom::hub::detail
