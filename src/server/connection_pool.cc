#include "server/connection_pool.h"

namespace headroom::server {

namespace {
thread_local bool t_overflow = false;
}

bool serving_overflow() { return t_overflow; }

ConnectionPool::ConnectionPool(int threads, int max_connections, std::atomic<int>& open)
    : m_max(max_connections), m_open(open) {
  for (int i = 0; i < threads; ++i) m_threads.emplace_back([this] { work(m_jobs, false); });
  m_threads.emplace_back([this] { work(m_overflow, true); });
}

ConnectionPool::~ConnectionPool() { shutdown(); }

void ConnectionPool::enqueue(std::function<void()> fn) {
  {
    std::lock_guard lock(m_mutex);
    bool full = m_open.load() >= m_max;
    // The overflow queue is bounded too: past it, the connection is still served by the overflow
    // thread (which only answers 503), so nothing is dropped without an answer.
    (full ? m_overflow : m_jobs).push_back(std::move(fn));
    if (!full) ++m_open;
  }
  m_cond.notify_all();
}

void ConnectionPool::work(std::deque<std::function<void()>>& jobs, bool overflow) {
  t_overflow = overflow;
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock lock(m_mutex);
      m_cond.wait(lock, [&] { return m_shutdown || !jobs.empty(); });
      if (jobs.empty()) return;  // shut down and drained
      fn = std::move(jobs.front());
      jobs.pop_front();
    }
    fn();
    if (!overflow) --m_open;
  }
}

void ConnectionPool::shutdown() {
  {
    std::lock_guard lock(m_mutex);
    if (m_shutdown) return;
    m_shutdown = true;
  }
  m_cond.notify_all();
  for (auto& t : m_threads)
    if (t.joinable()) t.join();
}

}  // namespace headroom::server
