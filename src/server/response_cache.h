// Answers of check and plan by canonical request: the same request gets the same bytes until the
// run history changes. Bounded by entries and bytes; the least recently used go first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace headroom::server {

class ResponseCache {
 public:
  ResponseCache(std::size_t max_entries, std::size_t max_bytes) : m_max_entries(max_entries), m_max_bytes(max_bytes) {}

  std::optional<std::string> get(const std::string& key);
  void put(const std::string& key, const std::string& body);

  struct Stats {
    std::uint64_t hits = 0, misses = 0, evictions = 0;
    std::size_t entries = 0, bytes = 0;
  };
  Stats stats() const;

 private:
  using Entry = std::pair<std::string, std::string>;  // key, body
  std::size_t m_max_entries, m_max_bytes;
  mutable std::mutex m_mutex;
  std::list<Entry> m_lru;  // most recent first
  std::unordered_map<std::string, std::list<Entry>::iterator> m_index;
  Stats m_stats;
};

}  // namespace headroom::server
