// The head of an HTTP request (request line and headers) as the reception sees it before a worker
// takes the connection: complete or not, and within the limits (docs/serve.md "Limits").
#pragma once

#include <cstddef>
#include <string_view>

namespace headroom::server {

struct HeadLimits {
  std::size_t max_request_line_bytes = 8192;  // as cpp-httplib's CPPHTTPLIB_REQUEST_URI_MAX_LENGTH
  std::size_t max_header_bytes = 8192;        // all header lines together, CRLFs included
  std::size_t max_header_count = 100;
  // A body with a Content-Length of at most whole_body_bytes is waited for whole (the JSON bodies:
  // ServerOptions::max_body_bytes, as far as the socket's receive buffer holds it); of a larger one
  // (a log upload), its first body_prefix_bytes.
  std::size_t whole_body_bytes = 1 << 20;
  std::size_t body_prefix_bytes = 32768;
};

enum class HeadVerdict {
  incomplete,        // wait for more bytes
  ready,             // the head and the body (or the first body_prefix_bytes of a large one) are here
  line_too_long,     // 414
  headers_too_large, // 431
  too_many_headers,  // 431
};

struct HeadCheck {
  HeadVerdict verdict = HeadVerdict::incomplete;
  std::size_t head_bytes = 0;    // request line + headers + blank line, when complete
  std::size_t wanted_bytes = 0;  // head_bytes and the body bytes to wait for, when the head is complete
  // The body is not waited for whole (chunked, or longer than whole_body_bytes): the worker that
  // takes the connection reads the rest as it arrives.
  bool streams = false;
};

// Looks at the first bytes a client sent (at most peek_bytes(limits) of them). Linear in their
// length; never allocates. A whole body longer than the bytes looked at is not seen here: the
// caller compares wanted_bytes with what the socket holds (FIONREAD).
HeadCheck inspect_head(std::string_view bytes, const HeadLimits& limits);

// How many bytes inspect_head may need to see.
std::size_t peek_bytes(const HeadLimits& limits);

}  // namespace headroom::server
