#include "server/api_error.h"

#include <nlohmann/json.hpp>

#include "headroom/check_document.h"

namespace headroom::server {

namespace {

const char* code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::not_found: return "not_found";
    case ErrorCode::parse_error: return "parse_error";
    case ErrorCode::io_error: return "io_error";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::unavailable: return "unavailable";
    case ErrorCode::internal: return "internal";
  }
  return "internal";
}

int status_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::parse_error: return 400;
    case ErrorCode::invalid_argument:
    case ErrorCode::unsupported: return 422;
    case ErrorCode::not_found: return 404;
    default: return 500;
  }
}

}  // namespace

ApiError from_library(const Error& error) { return {status_for(error.code), code_name(error.code), error.message, error.where}; }

// Every error body passes here: a database URL in a message or location loses its password.


std::string error_body(const ApiError& e) {
  // dump() with replace: a message quoting a request's bytes may hold invalid UTF-8.
  return nlohmann::json{{"error", {{"code", e.code}, {"message", redact_location(e.message)}, {"where", redact_location(e.where)}}}}.dump(
             -1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

ApiResponse error_response(const ApiError& e) { return {e.status, error_body(e), "application/json", e.code}; }

ApiResponse json_response(const std::string& body, int status) { return {status, body, "application/json", ""}; }

}  // namespace headroom::server
