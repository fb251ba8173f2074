#include "fake_vllm_server.h"

#include <httplib.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace headroom::testing {

FakeVllmServer::FakeVllmServer(std::function<std::string()> page, int port) : m_page(std::move(page)) { start(port); }

FakeVllmServer::FakeVllmServer(std::string page, int port)
    : m_page([p = std::move(page)] { return p; }) {
  start(port);
}

void FakeVllmServer::start(int port) {
  m_server = std::make_unique<httplib::Server>();
  // Answers go out at once (no Nagle delay between headers and body); accepted sockets inherit it.
  m_server->set_socket_options([](socket_t sock) {
    httplib::default_socket_options(sock);
    int yes = 1;
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
  });
  m_server->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    ServerBehaviour behaviour;
    std::function<std::string()> page;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      ++m_requests;
      behaviour = m_behaviour;
      page = m_page;
    }
    switch (behaviour) {
      case ServerBehaviour::serve:
        res.set_content(page(), "text/plain; version=0.0.4; charset=utf-8");
        return;
      case ServerBehaviour::http_error:
        res.status = 500;
        res.set_content("Internal Server Error", "text/plain");
        return;
      case ServerBehaviour::close_connection:
        // Announce a body, then fail the content provider: the socket is closed mid-answer.
        res.set_content_provider(1000, "text/plain", [](std::size_t, std::size_t, httplib::DataSink&) { return false; });
        return;
      case ServerBehaviour::hang: {
        std::unique_lock<std::mutex> lock(m_mutex);
        // Bounded so a forgotten release cannot hang a test run.
        m_release.wait_for(lock, std::chrono::seconds(20), [this] { return m_stopping || m_behaviour != ServerBehaviour::hang; });
        res.status = 503;
        return;
      }
    }
  });
  int bound = port == 0 ? m_server->bind_to_any_port("127.0.0.1") : (m_server->bind_to_port("127.0.0.1", port) ? port : -1);
  if (bound <= 0) throw std::runtime_error("fake vLLM server: cannot bind 127.0.0.1:" + std::to_string(port));
  m_port = bound;
  m_thread = std::thread([this] { m_server->listen_after_bind(); });
  // stop() before the accept loop runs would be lost (and join would wait forever): wait for it.
  while (!m_server->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeVllmServer::~FakeVllmServer() { stop(); }

void FakeVllmServer::stop() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stopping = true;
  }
  m_release.notify_all();
  if (m_thread.joinable()) {
    m_server->stop();
    m_thread.join();
  }
  m_port = 0;
}

std::string FakeVllmServer::url() const { return "http://127.0.0.1:" + std::to_string(m_port) + "/metrics"; }

int FakeVllmServer::requests() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_requests;
}

void FakeVllmServer::set_behaviour(ServerBehaviour behaviour) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_behaviour = behaviour;
  }
  m_release.notify_all();
}

void FakeVllmServer::set_page(std::string page) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_page = [p = std::move(page)] { return p; };
}

std::string read_metrics_fixture(const std::string& data_dir, const std::string& name) {
  std::ifstream in(data_dir + "/metrics/" + name, std::ios::binary);
  if (!in) throw std::runtime_error("missing fixture " + data_dir + "/metrics/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace headroom::testing
