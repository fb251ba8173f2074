// Errors of the HTTP API: {"error": {"code", "message", "where"}} with an HTTP status. Library
// errors map by their code; the server adds its own (unauthorized, forbidden, payload_too_large).
#pragma once

#include <string>

#include <tl/expected.hpp>

#include "headroom/error.h"

namespace headroom::server {

struct ApiError {
  int status = 500;
  std::string code;  // "invalid_argument", "not_found", "payload_too_large", ...
  std::string message;
  std::string where;
};

template <class T>
using ApiResult = tl::expected<T, ApiError>;

// 400 for bodies that are not JSON objects, 422 for values the engine refuses, 404 for unknown
// models and GPUs, 500 for the rest (a database that cannot be reached, I/O).
ApiError from_library(const Error& error);

// Longest message and `where` an error document carries; longer ones are cut (with "…") before
// anything else reads them.
inline constexpr std::size_t k_max_message_bytes = 2048;
inline constexpr std::size_t k_max_where_bytes = 256;

// The JSON text of the error document.
std::string error_body(const ApiError& error);

// A response: status, body and its type.
struct ApiResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::string error_code;  // for /metrics; "" on success
};

ApiResponse error_response(const ApiError& error);
ApiResponse json_response(const std::string& body, int status = 200);

}  // namespace headroom::server
