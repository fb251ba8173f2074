#include "server/api_error.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "headroom/check_document.h"

namespace headroom::server {

namespace {

int status_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::parse_error: return 400;
    case ErrorCode::invalid_argument:
    case ErrorCode::unsupported: return 422;
    case ErrorCode::not_found: return 404;
    default: return 500;
  }
}

// The library names what was wrong as the CLI spells it ("--gpu", "--context",
// "--max-model-len"); a client of the API wrote JSON members, so `where` names those.
std::string api_field(const std::string& where) {
  if (!where.starts_with("--")) return where;
  static const char* const k_members[] = {"gpu",       "gpus",        "nodes",    "gpu_memory_gib", "used_gib",
                                          "free_gib",  "vllm_version", "model",   "context",        "concurrency",
                                          "goal",      "max_gpus",    "gpus_per_node", "allow_fp8_kv", "allow_eager",
                                          "margin_gib", "command"};
  std::string key = where.substr(2);
  std::size_t end = key.find_first_of(" :=");
  std::string rest = end == std::string::npos ? "" : key.substr(end);
  key = key.substr(0, end);
  std::replace(key.begin(), key.end(), '-', '_');
  if (key == "vllm") key = "vllm_version";
  for (const char* m : k_members)
    if (key == m) return key + rest;
  return "flags." + key + rest;
}

}  // namespace

ApiError from_library(const Error& error) {
  return {status_for(error.code), to_string(error.code), error.message, api_field(error.where)};
}

// Every error body passes here: a database URL in a message or location loses its password.


// Text cut to `max` bytes, at a character boundary, with "…" when cut: a message quoting a
// request is bounded before anything else reads it.
namespace {
std::string cut(const std::string& text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) --end;
  return text.substr(0, end) + "…";
}
}  // namespace

std::string error_body(const ApiError& e) {
  // dump() with replace: a message quoting a request's bytes may hold invalid UTF-8.
  return nlohmann::json{{"error",
                         {{"code", e.code},
                          {"message", redact_location(cut(e.message, k_max_message_bytes))},
                          {"where", redact_location(cut(e.where, k_max_where_bytes))}}}}
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

ApiResponse error_response(const ApiError& e) { return {e.status, error_body(e), "application/json", e.code}; }

ApiResponse json_response(const std::string& body, int status) { return {status, body, "application/json", ""}; }

}  // namespace headroom::server
