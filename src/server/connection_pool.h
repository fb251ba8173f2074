// The server's threads: `threads` workers serve connections (a connection keeps its worker while
// it is open, as in cpp-httplib's own pool); at most `max_connections` wait or are served, and
// each one past that is handed to a single overflow thread that answers 503 and closes it.
#pragma once

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace headroom::server {

// True on the overflow thread: the request must be refused (checked by the pre-routing handler).
bool serving_overflow();

class ConnectionPool : public httplib::TaskQueue {
 public:
  ConnectionPool(int threads, int max_connections, std::atomic<int>& open_connections);
  ~ConnectionPool() override;
  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

 private:
  void work(std::deque<std::function<void()>>& jobs, bool overflow);

  int m_max;
  std::atomic<int>& m_open;
  std::mutex m_mutex;
  std::condition_variable m_cond;
  std::deque<std::function<void()>> m_jobs, m_overflow;
  std::vector<std::thread> m_threads;
  bool m_shutdown = false;
};

}  // namespace headroom::server
