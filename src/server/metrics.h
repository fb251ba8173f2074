// The server's own numbers for GET /metrics (Prometheus text format 0.0.4): requests by route and
// status, a latency histogram by route, errors by code, response cache hits and misses.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "server/response_cache.h"

namespace headroom::server {

class Metrics {
 public:
  // `route` is one of the server's route names ("/v1/check", ..., "other"): never a raw path, so
  // the label set stays bounded.
  void observe(const std::string& route, int status, double seconds, const std::string& error_code);
  std::string render(const ResponseCache::Stats& cache, int connections) const;

  static constexpr std::array<double, 12> k_buckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                        0.05,   0.1,   0.25,   0.5,   1.0,  5.0};

 private:
  struct Histogram {
    std::array<std::uint64_t, k_buckets.size()> counts{};
    std::uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex m_mutex;
  std::map<std::pair<std::string, int>, std::uint64_t> m_requests;
  std::map<std::string, Histogram> m_latency;
  std::map<std::string, std::uint64_t> m_errors;
};

}  // namespace headroom::server
