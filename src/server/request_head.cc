#include "server/request_head.h"

#include <algorithm>
#include <cstdint>

namespace headroom::server {

namespace {

bool starts_with_nocase(std::string_view line, std::string_view prefix) {
  if (line.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char c = line[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

// The value of a "Content-Length: N" line, capped at `cap`.
std::size_t content_length(std::string_view line, std::size_t cap) {
  std::size_t i = line.find(':') + 1, n = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  for (; i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i) {
    n = n * 10 + static_cast<std::size_t>(line[i] - '0');
    if (n >= cap) return cap;
  }
  return n;
}

}  // namespace

std::size_t peek_bytes(const HeadLimits& limits) {
  return limits.max_request_line_bytes + limits.max_header_bytes + 4 + limits.body_prefix_bytes;
}

HeadCheck inspect_head(std::string_view bytes, const HeadLimits& limits) {
  HeadCheck out;
  std::size_t eol = bytes.find('\n');
  if (eol == std::string_view::npos) {
    if (bytes.size() > limits.max_request_line_bytes) out.verdict = HeadVerdict::line_too_long;
    return out;
  }
  if (eol > limits.max_request_line_bytes) {
    out.verdict = HeadVerdict::line_too_long;
    return out;
  }
  std::size_t pos = eol + 1, count = 0, body = 0;
  bool chunked = false;
  for (;;) {
    std::size_t end = bytes.find('\n', pos);
    std::size_t seen = (end == std::string_view::npos ? bytes.size() : end + 1) - (eol + 1);
    if (seen > limits.max_header_bytes + 2) {
      out.verdict = HeadVerdict::headers_too_large;
      return out;
    }
    if (end == std::string_view::npos) return out;
    std::string_view line = bytes.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = end + 1;
    if (line.empty()) break;
    if (++count > limits.max_header_count) {
      out.verdict = HeadVerdict::too_many_headers;
      return out;
    }
    if (starts_with_nocase(line, "content-length:"))
      body = content_length(line, std::max(limits.whole_body_bytes, limits.body_prefix_bytes) + 1);
    if (starts_with_nocase(line, "transfer-encoding:")) chunked = true;
  }
  out.head_bytes = pos;
  // A chunked body is not waited for: its size is not known up front.
  const std::size_t waited = chunked ? 0 : body <= limits.whole_body_bytes ? body : std::min(body, limits.body_prefix_bytes);
  out.wanted_bytes = pos + waited;
  out.streams = chunked || body > limits.whole_body_bytes;
  if (bytes.size() >= out.wanted_bytes) out.verdict = HeadVerdict::ready;
  return out;
}

}  // namespace headroom::server
