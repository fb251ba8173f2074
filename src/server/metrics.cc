#include "server/metrics.h"

#include <fmt/format.h>

namespace headroom::server {

void Metrics::observe(const std::string& route, int status, double seconds, const std::string& error_code) {
  std::lock_guard lock(m_mutex);
  ++m_requests[{route, status}];
  Histogram& h = m_latency[route];
  for (std::size_t i = 0; i < k_buckets.size(); ++i)
    if (seconds <= k_buckets[i]) ++h.counts[i];
  ++h.count;
  h.sum += seconds;
  if (!error_code.empty()) ++m_errors[error_code];
}

std::string Metrics::render(const ResponseCache::Stats& cache, int connections) const {
  std::lock_guard lock(m_mutex);
  std::string out;
  out += "# HELP headroom_http_requests_total HTTP requests answered, by route and status code.\n";
  out += "# TYPE headroom_http_requests_total counter\n";
  for (const auto& [key, n] : m_requests)
    out += fmt::format("headroom_http_requests_total{{route=\"{}\",code=\"{}\"}} {}\n", key.first, key.second, n);
  out += "# HELP headroom_http_request_duration_seconds Time from the request's arrival to its answer.\n";
  out += "# TYPE headroom_http_request_duration_seconds histogram\n";
  for (const auto& [route, h] : m_latency) {
    for (std::size_t i = 0; i < k_buckets.size(); ++i)
      out += fmt::format("headroom_http_request_duration_seconds_bucket{{route=\"{}\",le=\"{}\"}} {}\n", route, k_buckets[i],
                         h.counts[i]);
    out += fmt::format("headroom_http_request_duration_seconds_bucket{{route=\"{}\",le=\"+Inf\"}} {}\n", route, h.count);
    out += fmt::format("headroom_http_request_duration_seconds_sum{{route=\"{}\"}} {}\n", route, h.sum);
    out += fmt::format("headroom_http_request_duration_seconds_count{{route=\"{}\"}} {}\n", route, h.count);
  }
  out += "# HELP headroom_http_errors_total Error answers by error code.\n";
  out += "# TYPE headroom_http_errors_total counter\n";
  for (const auto& [code, n] : m_errors) out += fmt::format("headroom_http_errors_total{{code=\"{}\"}} {}\n", code, n);
  out += "# HELP headroom_response_cache_hits_total Answers served from the response cache.\n";
  out += "# TYPE headroom_response_cache_hits_total counter\n";
  out += fmt::format("headroom_response_cache_hits_total {}\n", cache.hits);
  out += "# HELP headroom_response_cache_misses_total Cacheable requests that were computed.\n";
  out += "# TYPE headroom_response_cache_misses_total counter\n";
  out += fmt::format("headroom_response_cache_misses_total {}\n", cache.misses);
  out += "# HELP headroom_response_cache_entries Answers held in the response cache.\n";
  out += "# TYPE headroom_response_cache_entries gauge\n";
  out += fmt::format("headroom_response_cache_entries {}\n", cache.entries);
  out += "# HELP headroom_response_cache_bytes Bytes held in the response cache.\n";
  out += "# TYPE headroom_response_cache_bytes gauge\n";
  out += fmt::format("headroom_response_cache_bytes {}\n", cache.bytes);
  out += "# HELP headroom_http_connections Connections open or waiting now.\n";
  out += "# TYPE headroom_http_connections gauge\n";
  out += fmt::format("headroom_http_connections {}\n", connections);
  return out;
}

}  // namespace headroom::server
