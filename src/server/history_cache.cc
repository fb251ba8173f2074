#include "server/history_cache.h"

#include <cstdio>
#include <functional>

#include "headroom/check_document.h"

namespace headroom::server {

HistoryCache::HistoryCache(std::string location, bool disabled, int refresh_ms)
    : m_location(std::move(location)), m_disabled(disabled), m_refresh(refresh_ms) {
  m_snapshot.records = std::make_shared<const std::vector<RunRecord>>();
}

HistoryCache::Snapshot HistoryCache::get() {
  if (m_disabled) return m_snapshot;
  std::lock_guard lock(m_mutex);
  auto now = std::chrono::steady_clock::now();
  if (m_loaded && now - m_loaded_at < m_refresh) return m_snapshot;
  m_loaded = true;
  m_loaded_at = now;
  // Like `check`: a missing database is no history and is not created; an unreadable one is a
  // warning (once per distinct message) and no history.
  std::vector<RunRecord> records;
  auto store = open_history(m_location, OpenMode::existing_only);
  std::string warning;
  if (!store) {
    warning = store.error().to_string();
  } else if (*store) {
    auto list = (*store)->list();
    if (list) records = std::move(*list);
    else warning = list.error().to_string();
  }
  if (!warning.empty() && warning != m_last_warning)
    std::fprintf(stderr, "headroom: warning: run history not used: %s\n", redact_location(warning).c_str());
  m_last_warning = warning;
  std::uint64_t fp = records.size();
  for (const auto& r : records)
    fp = fp * 1099511628211ULL ^ (std::hash<std::string>{}(r.content_hash) + static_cast<std::uint64_t>(r.id));
  m_snapshot.fingerprint = fp;
  m_snapshot.records = std::make_shared<const std::vector<RunRecord>>(std::move(records));
  return m_snapshot;
}

void HistoryCache::invalidate() {
  std::lock_guard lock(m_mutex);
  m_loaded = false;
}

}  // namespace headroom::server
