#include "server/diagnoser_pool.h"

namespace headroom::server {

Result<DiagnoserPool::Lease> DiagnoserPool::acquire() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_idle.empty()) {
      auto d = std::move(m_idle.back());
      m_idle.pop_back();
      return Lease(this, std::move(d));
    }
  }
  auto created = LogDiagnoser::create(m_kb);  // outside the lock: other requests go on meanwhile
  if (!created) return tl::unexpected(created.error());
  return Lease(this, std::move(*created));
}

void DiagnoserPool::give_back(std::unique_ptr<LogDiagnoser> d) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_idle.size() < m_keep) m_idle.push_back(std::move(d));
}

}  // namespace headroom::server
