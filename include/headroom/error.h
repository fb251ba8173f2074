// Error and Result: how the headroom library reports expected failures (bad input, missing files,
// no GPU) without throwing. Messages say what was expected, what was found, and where.
#pragma once

#include <string>
#include <tl/expected.hpp>

namespace headroom {

enum class ErrorCode {
  invalid_argument,  // a flag or value the user gave is not acceptable
  not_found,         // a file, model or GPU that does not exist
  parse_error,       // malformed input (JSON, safetensors header, log line)
  io_error,          // the OS refused a read or write
  unsupported,       // valid input that headroom does not model yet
  unavailable,       // a resource (GPU driver, server, database) cannot be reached
  internal,
};

// The code's name as the API and the Python package report it: "invalid_argument", "not_found", ...
inline const char* to_string(ErrorCode code) {
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

struct Error {
  ErrorCode code = ErrorCode::internal;
  std::string message;  // what was expected and what was found
  std::string where;    // "path:line:col", "path", "--flag" or empty

  // "where: message", or just the message when there is no location.
  std::string to_string() const { return where.empty() ? message : where + ": " + message; }
};

template <class T>
using Result = tl::expected<T, Error>;

inline tl::unexpected<Error> make_error(ErrorCode code, std::string message, std::string where = {}) {
  return tl::unexpected<Error>(Error{code, std::move(message), std::move(where)});
}

}  // namespace headroom
