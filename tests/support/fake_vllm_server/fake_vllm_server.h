// FakeVllmServer: an HTTP server on 127.0.0.1 (ephemeral port) that serves /metrics pages the way a
// vLLM server does, and can misbehave on demand: close the connection mid-answer, hang past the
// client's timeout, or answer HTTP 500. Used by the watch tests and the watch soak benchmark.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace headroom::testing {

enum class ServerBehaviour {
  serve,             // 200 with the page
  close_connection,  // send headers announcing the page, then close the socket
  hang,              // hold the request without answering until released or stopped
  http_error,        // 500 Internal Server Error
};

class FakeVllmServer {
 public:
  // `port` 0 picks a free port. The page is produced per request by `page` (may be called from
  // the server's threads).
  explicit FakeVllmServer(std::function<std::string()> page, int port = 0);
  // Serves a fixed page.
  explicit FakeVllmServer(std::string page, int port = 0);
  ~FakeVllmServer();
  FakeVllmServer(const FakeVllmServer&) = delete;
  FakeVllmServer& operator=(const FakeVllmServer&) = delete;

  bool running() const { return m_port > 0; }
  int port() const { return m_port; }
  std::string url() const;  // http://127.0.0.1:PORT/metrics
  int requests() const;

  void set_behaviour(ServerBehaviour behaviour);
  void set_page(std::string page);
  void stop();  // closes the listening socket: later requests are refused

 private:
  void start(int port);

  std::unique_ptr<httplib::Server> m_server;
  std::thread m_thread;
  mutable std::mutex m_mutex;
  std::condition_variable m_release;
  std::function<std::string()> m_page;
  ServerBehaviour m_behaviour = ServerBehaviour::serve;
  bool m_stopping = false;
  int m_requests = 0;
  int m_port = 0;
};

// Reads tests/data/metrics/<name> (HEADROOM_TEST_DATA_DIR must point at tests/data).
std::string read_metrics_fixture(const std::string& data_dir, const std::string& name);

}  // namespace headroom::testing
