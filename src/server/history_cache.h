// The run history as the server reads it: the records of the database, reread at most every
// `refresh_ms` so replicas sharing one PostgreSQL see each other's records soon, and a fingerprint
// that changes with them (it is part of the response cache's key).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "headroom/history.h"

namespace headroom::server {

class HistoryCache {
 public:
  HistoryCache(std::string location, bool disabled, int refresh_ms);

  struct Snapshot {
    std::shared_ptr<const std::vector<RunRecord>> records;
    std::uint64_t fingerprint = 0;
  };
  Snapshot get();
  // The next get() rereads the database (after this server recorded a run).
  void invalidate();

  const std::string& location() const { return m_location; }  // may hold a password: never show it
  bool disabled() const { return m_disabled; }

 private:
  std::string m_location;
  bool m_disabled;
  std::chrono::milliseconds m_refresh;
  std::mutex m_mutex;
  Snapshot m_snapshot;
  std::chrono::steady_clock::time_point m_loaded_at{};
  bool m_loaded = false;
  std::string m_last_warning;
};

}  // namespace headroom::server
