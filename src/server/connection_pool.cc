#include "server/connection_pool.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <tuple>

#include "server/api_error.h"
#include "util/strings.h"

namespace headroom::server {

namespace {

using Clock = std::chrono::steady_clock;

const char* reason(int status) {
  switch (status) {
    case 408: return "Request Timeout";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    default: return "Service Unavailable";
  }
}

std::string peer_address(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  char text[INET6_ADDRSTRLEN] = "?";
  if (addr.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&addr)->sin_addr, text, sizeof text);
  else if (addr.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&addr)->sin6_addr, text, sizeof text);
  return text;
}

}  // namespace

ConnectionPool::ConnectionPool(PoolOptions options, std::function<void(int)> serve,
                               std::function<void(int, const std::string&)> refused)
    : m_options(options), m_serve(std::move(serve)), m_refused(std::move(refused)) {
  m_epoll = epoll_create1(EPOLL_CLOEXEC);
  m_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = m_wake;
  epoll_ctl(m_epoll, EPOLL_CTL_ADD, m_wake, &ev);
}

ConnectionPool::~ConnectionPool() {
  stop();
  for (auto& t : m_threads)
    if (t.joinable()) t.join();
  if (m_epoll >= 0) close(m_epoll);
  if (m_wake >= 0) close(m_wake);
}

// A body is waited for in the kernel's receive queue, unread: the queue must hold the head and the
// whole body. SO_RCVBUF on the listening socket (inherited by each accepted one) asks for room;
// the kernel grants at most net.core.rmem_max (reported doubled), and a socket holds about what
// it reports. Bodies that do not fit are waited for by their first bytes only.
void ConnectionPool::fit_whole_body_to_receive_buffer(int listen_fd) {
  HeadLimits& l = m_options.head;
  if (l.whole_body_bytes <= l.body_prefix_bytes) return;
  int wanted = static_cast<int>(std::min<std::size_t>(l.whole_body_bytes + peek_bytes(l), 1 << 30));
  setsockopt(listen_fd, SOL_SOCKET, SO_RCVBUF, &wanted, sizeof wanted);
  int granted = 0;
  socklen_t len = sizeof granted;
  if (getsockopt(listen_fd, SOL_SOCKET, SO_RCVBUF, &granted, &len) != 0) granted = 0;
  // Three quarters of the report: what a socket held in measurements (Linux 6.x: 4,157,575 of 4,194,304).
  const std::size_t room = static_cast<std::size_t>(std::max(granted, 0)) / 4 * 3;
  const std::size_t head = peek_bytes(l) - l.body_prefix_bytes;
  l.whole_body_bytes = std::max(l.body_prefix_bytes, std::min(l.whole_body_bytes, room > head ? room - head : 0));
}

void ConnectionPool::run(int listen_fd) {
  m_listen_fd = listen_fd;
  fit_whole_body_to_receive_buffer(listen_fd);
  for (int i = 0; i < m_options.threads; ++i) m_threads.emplace_back([this] { work(); });
  std::thread reception([this] { watch(); });
  while (!m_stopping) {
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
      // Out of file descriptors: the connections already open go on; try again shortly.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      break;  // shut down by stop()
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    admit(fd, peer_address(fd));
  }
  m_stopping = true;
  close(listen_fd);
  std::uint64_t one = 1;
  [[maybe_unused]] auto w = write(m_wake, &one, sizeof one);
  reception.join();
  {
    std::lock_guard lock(m_mutex);
    m_done = true;
  }
  m_ready_cond.notify_all();
  for (auto& t : m_threads) t.join();
  m_threads.clear();
}

void ConnectionPool::stop() {
  m_stopping = true;
  // shutdown() wakes a thread blocked in accept(); run() closes the socket itself.
  int fd = m_listen_fd.load();
  if (fd >= 0) shutdown(fd, SHUT_RDWR);
}

void ConnectionPool::admit(int fd, std::string client) {
  std::unique_lock lock(m_mutex);
  if (m_open.load() >= m_options.max_connections) {
    lock.unlock();
    return refuse(fd, 503, "overloaded",
                  "the server has " + std::to_string(m_options.max_connections) + " connections open; try again");
  }
  int& mine = m_per_client[client];
  if (mine >= m_options.max_client_connections) {
    lock.unlock();
    return refuse(fd, 503, "overloaded",
                  "this client has " + std::to_string(m_options.max_client_connections) + " connections open; try again");
  }
  ++mine;
  ++m_open;
  m_client_of[fd] = client;
  m_pending[fd] = {Clock::now(), false};
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
  ev.data.fd = fd;
  epoll_ctl(m_epoll, EPOLL_CTL_ADD, fd, &ev);
}

// The reception thread: waits for heads, hands complete ones to the workers, answers the rest.
void ConnectionPool::watch() {
  std::vector<char> buffer(peek_bytes(m_options.head));
  epoll_event events[64];
  while (!m_stopping) {
    int n = epoll_wait(m_epoll, events, 64, 100);
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == m_wake) continue;
      bool lingering;
      {
        std::lock_guard lock(m_mutex);
        lingering = m_lingering.contains(events[i].data.fd);
      }
      if (lingering)
        drain(events[i].data.fd);
      else
        on_readable(events[i].data.fd, events[i].events, buffer);
    }
    expire(Clock::now());
  }
  std::vector<int> left;
  {
    std::lock_guard lock(m_mutex);
    for (auto& [fd, p] : m_pending) left.push_back(fd);
    for (auto& [fd, t] : m_lingering) left.push_back(fd);
    m_lingering.clear();
  }
  for (int fd : left) {
    epoll_ctl(m_epoll, EPOLL_CTL_DEL, fd, nullptr);
    release(fd);
  }
}

void ConnectionPool::on_readable(int fd, unsigned events, std::vector<char>& buffer) {
  std::size_t wanted = 0;
  bool streams = false;
  {
    std::lock_guard lock(m_mutex);
    auto it = m_pending.find(fd);
    if (it == m_pending.end()) return;
    wanted = it->second.wanted;
    streams = it->second.streams;
  }
  // The head was read before: only the count of bytes queued is compared, in constant time
  // however the body trickles in.
  if (wanted > 0) return await_body(fd, events, wanted, streams);
  ssize_t n = recv(fd, buffer.data(), buffer.size(), MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) {  // closed before a request, or reset
    epoll_ctl(m_epoll, EPOLL_CTL_DEL, fd, nullptr);
    return release(fd);
  }
  HeadCheck head = inspect_head(std::string_view(buffer.data(), static_cast<std::size_t>(n)), m_options.head);
  switch (head.verdict) {
    case HeadVerdict::ready: return hand_over(fd, head.streams);
    case HeadVerdict::line_too_long:
      return refuse(fd, 414, "uri_too_long",
                    "expected a request line of at most " + std::to_string(m_options.head.max_request_line_bytes) + " bytes");
    case HeadVerdict::headers_too_large:
      return refuse(fd, 431, "headers_too_large",
                    "expected headers of at most " + std::to_string(m_options.head.max_header_bytes) + " bytes in all");
    case HeadVerdict::too_many_headers:
      return refuse(fd, 431, "headers_too_large",
                    "expected at most " + std::to_string(m_options.head.max_header_count) + " header lines");
    case HeadVerdict::incomplete: break;
  }
  if (head.head_bytes > 0) {
    {
      std::lock_guard lock(m_mutex);
      if (auto it = m_pending.find(fd); it != m_pending.end()) {
        it->second.head_done = true;
        it->second.wanted = head.wanted_bytes;
        it->second.streams = head.streams;
      }
    }
    return await_body(fd, events, head.wanted_bytes, head.streams);
  }
  // The client closed its side with half a request: nothing more will come.
  if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
    epoll_ctl(m_epoll, EPOLL_CTL_DEL, fd, nullptr);
    release(fd);
  }
}

// The head is here; the body is once the socket holds `wanted` bytes (head included).
void ConnectionPool::await_body(int fd, unsigned events, std::size_t wanted, bool streams) {
  int queued = 0;
  if (ioctl(fd, FIONREAD, &queued) == 0 && queued >= 0 && static_cast<std::size_t>(queued) >= wanted)
    return hand_over(fd, streams);
  if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
    epoll_ctl(m_epoll, EPOLL_CTL_DEL, fd, nullptr);
    release(fd);
  }
}

void ConnectionPool::expire(Clock::time_point now) {
  const auto head_limit = std::min(m_options.head_timeout, m_options.request_timeout);
  std::vector<std::pair<int, bool>> late;
  std::vector<int> done;
  {
    std::lock_guard lock(m_mutex);
    for (auto& [fd, p] : m_pending)
      if (now - p.accepted >= (p.head_done ? m_options.request_timeout : head_limit)) late.emplace_back(fd, p.head_done);
    for (auto it = m_lingering.begin(); it != m_lingering.end();) {
      if (it->second <= now) {
        done.push_back(it->first);
        it = m_lingering.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (int fd : done) {
    epoll_ctl(m_epoll, EPOLL_CTL_DEL, fd, nullptr);
    release(fd);
  }
  auto seconds = [](std::chrono::milliseconds t) { return util::fixed(static_cast<double>(t.count()) / 1000.0, 0); };
  for (auto [fd, head_done] : late)
    refuse(fd, 408, "timeout",
           head_done ? "the body did not arrive within " + seconds(m_options.request_timeout) + " s (--request-timeout)"
                     : "the request line and headers did not arrive within " + seconds(head_limit) + " s (--read-timeout)");
}

int ConnectionPool::streaming_limit() const {
  return m_options.max_streaming > 0 ? m_options.max_streaming : std::max(1, m_options.threads / 2);
}

// A request whose body is still arriving holds its worker until the body is in or
// request_timeout passes: at most streaming_limit() of them at a time, so a client trickling
// large uploads never holds every worker.
void ConnectionPool::hand_over(int fd, bool streams) {
  epoll_ctl(m_epoll, EPOLL_CTL_DEL, fd, nullptr);
  bool busy = false;
  {
    std::lock_guard lock(m_mutex);
    busy = streams && m_streaming >= streaming_limit();
    if (!busy) {
      m_streaming += streams ? 1 : 0;
      m_pending.erase(fd);
      m_ready.emplace_back(fd, streams);
    }
  }
  if (busy)
    return refuse(fd, 503, "overloaded",
                  std::to_string(streaming_limit()) + " uploads are being received; send this one again shortly");
  m_ready_cond.notify_one();
}

// Answers without reading the request. A connection the reception holds lingers for a second,
// its input read and dropped (drain), before it is closed.
void ConnectionPool::refuse(int fd, int status, const std::string& code, const std::string& message) {
  epoll_ctl(m_epoll, EPOLL_CTL_DEL, fd, nullptr);
  std::string body = error_body({status, code, message, ""});
  std::string text = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) +
                     "\r\nContent-Type: application/json\r\nConnection: close\r\n" +
                     (status == 503 ? "Retry-After: 1\r\n" : "") + "Content-Length: " + std::to_string(body.size()) +
                     "\r\n\r\n" + body;
  [[maybe_unused]] auto sent = send(fd, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  shutdown(fd, SHUT_WR);
  m_refused(status, code);
  {
    std::lock_guard lock(m_mutex);
    if (m_client_of.contains(fd)) {
      m_pending.erase(fd);
      m_lingering[fd] = Clock::now() + std::chrono::seconds(1);
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.fd = fd;
      epoll_ctl(m_epoll, EPOLL_CTL_ADD, fd, &ev);
      return;
    }
  }
  close(fd);  // refused at accept: not counted, nothing read yet
}

// Reads and drops what a refused client still sends; closes at its end.
void ConnectionPool::drain(int fd) {
  char scratch[16384];
  for (int i = 0; i < 16; ++i) {
    ssize_t n = recv(fd, scratch, sizeof scratch, MSG_DONTWAIT);
    if (n > 0) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    {
      std::lock_guard lock(m_mutex);
      m_lingering.erase(fd);
    }
    epoll_ctl(m_epoll, EPOLL_CTL_DEL, fd, nullptr);
    return release(fd);
  }
}

// Forgets a connection and closes it.
void ConnectionPool::release(int fd) {
  {
    std::lock_guard lock(m_mutex);
    m_pending.erase(fd);
    auto it = m_client_of.find(fd);
    if (it != m_client_of.end()) {
      auto c = m_per_client.find(it->second);
      if (c != m_per_client.end() && --c->second <= 0) m_per_client.erase(c);
      m_client_of.erase(it);
      --m_open;
    }
  }
  close(fd);
}

void ConnectionPool::work() {
  for (;;) {
    int fd;
    bool streams;
    {
      std::unique_lock lock(m_mutex);
      m_ready_cond.wait(lock, [&] { return m_done || !m_ready.empty(); });
      if (m_ready.empty()) return;  // shut down and drained
      std::tie(fd, streams) = m_ready.front();
      m_ready.pop_front();
    }
    // serve() closes the socket and its number may be reused at once: the books go by address.
    std::string client;
    {
      std::lock_guard lock(m_mutex);
      auto it = m_client_of.find(fd);
      if (it != m_client_of.end()) {
        client = std::move(it->second);
        m_client_of.erase(it);
      }
    }
    m_serve(fd);
    {
      std::lock_guard lock(m_mutex);
      m_streaming -= streams ? 1 : 0;
      auto c = m_per_client.find(client);
      if (c != m_per_client.end() && --c->second <= 0) m_per_client.erase(c);
    }
    --m_open;
  }
}

}  // namespace headroom::server
