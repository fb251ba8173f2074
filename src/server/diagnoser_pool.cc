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
  // Outside the idle lock: requests with an idle diagnoser go on meanwhile.
  std::lock_guard<std::mutex> build(m_build_mutex);
  if (!m_prototype) {
    auto created = LogDiagnoser::create(m_kb);
    if (!created) return tl::unexpected(created.error());
    m_prototype = std::move(*created);
  }
  auto copy = m_prototype->clone();
  if (!copy) return tl::unexpected(copy.error());
  return Lease(this, std::move(*copy));
}

void DiagnoserPool::give_back(std::unique_ptr<LogDiagnoser> d) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_idle.size() < m_keep) m_idle.push_back(std::move(d));
}

}  // namespace headroom::server
