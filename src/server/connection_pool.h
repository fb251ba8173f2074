// The server's connections, from accept to close. A connection reaches one of the `threads`
// workers only once its request head and its body (a JSON body whole, up to HeadLimits::
// whole_body_bytes; the first 32 KiB of a larger upload) are in the socket's buffer: until then
// one reception thread watches it (epoll, edge-triggered; MSG_PEEK for the head and FIONREAD for
// the body, so the bytes stay for cpp-httplib to parse), with one deadline for the head and one
// for the request. A slow, silent or trickling client therefore holds no worker. Past `max_connections` in all, or
// `max_client_connections` from one address, a connection is answered 503 with Retry-After at
// once, without reading it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/request_head.h"

namespace headroom::server {

struct PoolOptions {
  int threads = 8;
  int max_connections = 64;
  int max_client_connections = 16;
  std::chrono::milliseconds head_timeout{10000};     // request line and headers, from accept
  std::chrono::milliseconds request_timeout{60000};  // the same and the body (HeadLimits)
  HeadLimits head;
  // Workers that may hold a request whose body is still arriving (an upload past
  // head.whole_body_bytes, or chunked), each until request_timeout; past it such a request is
  // answered 503 with Retry-After. 0: half the threads, at least one, so that trickling uploads
  // never hold every worker.
  int max_streaming = 0;
};

class ConnectionPool {
 public:
  // serve(fd) answers one request on a worker thread and closes fd. refused(status, code) is
  // called for every connection the reception answers itself (metrics).
  ConnectionPool(PoolOptions options, std::function<void(int fd)> serve,
                 std::function<void(int status, const std::string& code)> refused);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // Accepts connections on listen_fd until it is shut down (stop()); then finishes the requests
  // workers hold and returns. Closes listen_fd.
  void run(int listen_fd);
  void stop();
  int open_connections() const { return m_open.load(); }

 private:
  struct Pending {
    std::chrono::steady_clock::time_point accepted;
    bool head_done = false;  // the headers are here; the body is not yet
    std::size_t wanted = 0;  // bytes to wait for once the head is known (HeadCheck::wanted_bytes)
    bool streams = false;    // HeadCheck::streams
  };
  void admit(int fd, std::string client);
  void watch();
  void on_readable(int fd, unsigned events, std::vector<char>& buffer);
  void await_body(int fd, unsigned events, std::size_t wanted, bool streams);
  void expire(std::chrono::steady_clock::time_point now);
  void hand_over(int fd, bool streams);
  int streaming_limit() const;
  void fit_whole_body_to_receive_buffer(int listen_fd);
  void refuse(int fd, int status, const std::string& code, const std::string& message);
  void drain(int fd);
  void release(int fd);
  void work();

  PoolOptions m_options;
  std::function<void(int)> m_serve;
  std::function<void(int, const std::string&)> m_refused;
  std::atomic<int> m_open{0};
  std::atomic<int> m_listen_fd{-1};
  std::atomic<bool> m_stopping{false};
  int m_epoll = -1, m_wake = -1;

  std::mutex m_mutex;  // guards everything below
  std::unordered_map<int, Pending> m_pending;      // fd -> waiting for its head
  // fd -> when to close: refused connections whose client may still be sending; what it sends is
  // read and dropped for a moment, so that closing does not reset the connection before the
  // client has read the answer.
  std::unordered_map<int, std::chrono::steady_clock::time_point> m_lingering;
  std::unordered_map<int, std::string> m_client_of;  // fd -> address, from accept to close
  std::map<std::string, int> m_per_client;
  std::deque<std::pair<int, bool>> m_ready;  // fd, and whether its body is still arriving
  int m_streaming = 0;                       // such requests handed to workers and not yet answered
  std::condition_variable m_ready_cond;
  bool m_done = false;
  std::vector<std::thread> m_threads;
};

}  // namespace headroom::server
