#include "server/response_cache.h"

namespace headroom::server {

std::optional<std::string> ResponseCache::get(const std::string& key) {
  std::lock_guard lock(m_mutex);
  auto it = m_index.find(key);
  if (it == m_index.end()) {
    ++m_stats.misses;
    return std::nullopt;
  }
  ++m_stats.hits;
  m_lru.splice(m_lru.begin(), m_lru, it->second);
  return it->second->second;
}

void ResponseCache::put(const std::string& key, const std::string& body) {
  std::size_t size = key.size() + body.size();
  if (m_max_entries == 0 || size > m_max_bytes) return;
  std::lock_guard lock(m_mutex);
  if (auto it = m_index.find(key); it != m_index.end()) {
    m_stats.bytes -= it->second->first.size() + it->second->second.size();
    m_lru.erase(it->second);
    m_index.erase(it);
  }
  m_lru.emplace_front(key, body);
  m_index[key] = m_lru.begin();
  m_stats.bytes += size;
  while (m_lru.size() > m_max_entries || m_stats.bytes > m_max_bytes) {
    auto& last = m_lru.back();
    m_stats.bytes -= last.first.size() + last.second.size();
    m_index.erase(last.first);
    m_lru.pop_back();
    ++m_stats.evictions;
  }
  m_stats.entries = m_lru.size();
}

ResponseCache::Stats ResponseCache::stats() const {
  std::lock_guard lock(m_mutex);
  Stats s = m_stats;
  s.entries = m_lru.size();
  return s;
}

}  // namespace headroom::server
