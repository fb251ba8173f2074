// The real ProcessHost: fork and exec without a shell, a process group for the child, pseudo-
// terminals or pipes for its output, a self-pipe for signals, and PR_SET_CHILD_SUBREAPER so that
// workers whose parent died come back to headroom instead of init.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <optional>
#include <string>
#include <vector>
#include <thread>

#include "run/process_host.h"

extern char** environ;

namespace headroom::run {

namespace {

int g_signal_pipe[2] = {-1, -1};

void on_signal(int signo) {
  const int saved = errno;
  const auto byte = static_cast<unsigned char>(signo);
  [[maybe_unused]] auto n = write(g_signal_pipe[1], &byte, 1);
  errno = saved;
}

constexpr int k_forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int k_handled_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGWINCH};

int exit_status_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, -1);
      continue;
    }
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// The pids whose parent is headroom, read from /proc: the child and any orphan reparented to us.
std::vector<pid_t> own_children() {
  std::vector<pid_t> out;
  const pid_t self = getpid();
  DIR* dir = opendir("/proc");
  if (!dir) return out;
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
    auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    long ppid = 0;
    if (std::sscanf(line.c_str() + close + 1, " %c %ld", &state, &ppid) == 2 && ppid == self)
      out.push_back(static_cast<pid_t>(pid));
  }
  closedir(dir);
  return out;
}

struct Stream {
  int fd = -1;       // our end: a pty master or a pipe's read end
  int target = -1;   // headroom's own fd the bytes go to (1 or 2)
  bool pty = false;
  bool target_open = true;
};

class PosixProcessHost final : public ProcessHost {
 public:
  PosixProcessHost() : m_buffer(1 << 16) {
    // vLLM's workers are grandchildren: when the API server dies first they come back to us.
    prctl(PR_SET_CHILD_SUBREAPER, 1);
  }

  ~PosixProcessHost() override {
    cleanup(std::chrono::milliseconds(2000));
    close_streams();
    if (m_handlers_installed)
      for (int s : k_handled_signals) sigaction(s, &m_saved[s], nullptr);
  }

  Result<void> start(const LaunchSpec& spec) override {
    if (spec.argv.empty()) return make_error(ErrorCode::invalid_argument, "no command to run");
    // Until the first launch, Ctrl-C stops headroom as usual; from then on signals are events.
    if (!install_handlers()) return make_error(ErrorCode::io_error, std::strerror(errno), "signal pipe");
    // A signal that came while nothing ran (between a failure and its relaunch) stops the relaunch.
    read_signals();
    if (!m_pending_signals.empty()) {
      m_pending_signals.clear();
      return make_error(ErrorCode::unavailable, "interrupted before the launch");
    }
    close_streams();
    m_exited = m_pass_through = m_drain_quiet = false;
    int slaves[2] = {-1, -1};
    for (int i = 0; i < 2; ++i) {
      auto r = open_stream(i, slaves[i]);
      if (!r) return r;
    }
    int error_pipe[2];
    if (pipe2(error_pipe, O_CLOEXEC) != 0) return make_error(ErrorCode::io_error, std::strerror(errno), "pipe");
    std::vector<std::string> env_strings = environment(spec.env);
    std::vector<char*> argv, envp;
    for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return make_error(ErrorCode::io_error, std::strerror(errno), "fork");
    if (pid == 0) exec_child(argv.data(), envp.data(), slaves, error_pipe[1], parent);
    setpgid(pid, pid);  // also done by the child: whichever runs first, the group exists before signals
    m_pid = pid;
    for (int s : slaves) close(s);
    close(error_pipe[1]);
    int child_errno = 0;
    ssize_t n;
    do n = read(error_pipe[0], &child_errno, sizeof child_errno);
    while (n < 0 && errno == EINTR);
    close(error_pipe[0]);
    if (n == static_cast<ssize_t>(sizeof child_errno)) {
      int status = 0;
      waitpid(pid, &status, 0);
      m_pid = -1;
      const std::string& program = spec.argv[0];
      if (child_errno == ENOENT)
        return make_error(ErrorCode::not_found,
                          "no such executable" + std::string(program.find('/') == std::string::npos ? " on PATH" : ""), program);
      if (child_errno == EACCES) return make_error(ErrorCode::invalid_argument, "not an executable file (permission denied)", program);
      return make_error(ErrorCode::io_error, std::string("cannot execute: ") + std::strerror(child_errno), program);
    }
    return {};
  }

  ProcessEvent next() override {
    for (;;) {
      if (!m_pending_signals.empty()) {
        ProcessEvent e;
        e.kind = ProcessEvent::Kind::signal;
        e.signal = m_pending_signals.front();
        m_pending_signals.erase(m_pending_signals.begin());
        return e;
      }
      if (m_exited && (streams_closed() || drain_expired())) {
        ProcessEvent e;
        e.kind = ProcessEvent::Kind::exited;
        e.exit_status = m_exit_status;
        return e;
      }
      pollfd fds[3];
      int count = 0;
      fds[count++] = {g_signal_pipe[0], POLLIN, 0};
      int index[2] = {-1, -1};
      for (int i = 0; i < 2; ++i)
        if (m_streams[i].fd >= 0) {
          index[i] = count;
          fds[count++] = {m_streams[i].fd, POLLIN, 0};
        }
      // After the child exited, its workers may still hold the pipes: read what comes for a moment.
      int timeout = m_exited ? 100 : -1;
      int ready = poll(fds, static_cast<nfds_t>(count), timeout);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) {
        if (m_exited) m_drain_quiet = true;
        continue;
      }
      if (fds[0].revents & POLLIN) read_signals();
      for (int i = 0; i < 2; ++i) {
        if (index[i] < 0 || !(fds[index[i]].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        if (auto e = read_stream(i)) return *e;
      }
    }
  }

  void pass_through() override { m_pass_through = true; }

  void signal_group(int signal) override {
    if (m_pid > 0) kill(-m_pid, signal);
  }

  void cleanup(std::chrono::milliseconds grace) override {
    if (m_pid <= 0 && own_children().empty()) return;
    terminate_all(SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (reap_all() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (reap_all()) {
      terminate_all(SIGKILL);
      const auto last = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (reap_all() && std::chrono::steady_clock::now() < last)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    m_pid = -1;
  }

 private:
  bool install_handlers() {
    if (m_handlers_installed) return true;
    if (g_signal_pipe[0] < 0 && pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return false;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int s : k_handled_signals) sigaction(s, &sa, &m_saved[s]);
    signal(SIGPIPE, SIG_IGN);  // a closed stdout (| head) must not kill headroom before vLLM is stopped
    m_handlers_installed = true;
    return true;
  }

  void close_streams() {
    for (auto& s : m_streams) {
      if (s.fd >= 0) close(s.fd);
      s = Stream{};
    }
  }

  // Opens the pair for stream i (0 stdout, 1 stderr): a pty where headroom's own fd is a terminal.
  Result<void> open_stream(int i, int& slave) {
    Stream& s = m_streams[i];
    s.target = i == 0 ? STDOUT_FILENO : STDERR_FILENO;
    if (isatty(s.target)) {
      int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
      char name[128];
      if (master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0 && ptsname_r(master, name, sizeof name) == 0) {
        slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (slave >= 0) {
          // Raw: the bytes reach headroom's terminal as vLLM wrote them (no \n -> \r\n twice).
          termios t{};
          if (tcgetattr(slave, &t) == 0) {
            cfmakeraw(&t);
            tcsetattr(slave, TCSANOW, &t);
          }
          winsize ws{};
          if (ioctl(s.target, TIOCGWINSZ, &ws) == 0) ioctl(master, TIOCSWINSZ, &ws);
          s.fd = master;
          s.pty = true;
          return {};
        }
      }
      if (master >= 0) close(master);
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return make_error(ErrorCode::io_error, std::strerror(errno), "pipe");
    s.fd = p[0];
    slave = p[1];
    return {};
  }

  static std::vector<std::string> environment(const std::vector<std::string>& added) {
    std::vector<std::string> out;
    for (char** e = environ; e && *e; ++e) {
      std::string_view entry(*e);
      auto name = entry.substr(0, entry.find('='));
      bool replaced = false;
      for (const auto& a : added)
        if (a.substr(0, a.find('=')) == name) replaced = true;
      if (!replaced) out.emplace_back(entry);
    }
    out.insert(out.end(), added.begin(), added.end());
    return out;
  }

  // In the child, between fork and exec: async-signal-safe calls only.
  [[noreturn]] static void exec_child(char** argv, char** envp, const int slaves[2], int error_fd, pid_t parent) {
    setpgid(0, 0);
    // If headroom dies without cleaning up (SIGKILL), vLLM is told to stop rather than left running.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int s : k_handled_signals) sigaction(s, &dfl, nullptr);
    sigaction(SIGPIPE, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(slaves[0], STDOUT_FILENO);
    dup2(slaves[1], STDERR_FILENO);
    execvpe(argv[0], argv, envp);
    int e = errno;
    [[maybe_unused]] auto n = write(error_fd, &e, sizeof e);
    _exit(127);
  }

  void read_signals() {
    unsigned char bytes[64];
    ssize_t n;
    while ((n = read(g_signal_pipe[0], bytes, sizeof bytes)) > 0) {
      for (ssize_t i = 0; i < n; ++i) {
        int s = bytes[i];
        if (s == SIGCHLD) reap_all();
        else if (s == SIGWINCH) resize();
        else
          for (int f : k_forwarded_signals)
            if (s == f) m_pending_signals.push_back(s);
      }
    }
  }

  // Reaps every exited child (the launched one keeps its status); true while children remain.
  bool reap_all() {
    for (;;) {
      int status = 0;
      pid_t p = waitpid(-1, &status, WNOHANG);
      if (p > 0) {
        if (p == m_pid && !m_exited) {
          m_exited = true;
          m_exit_status = exit_status_of(status);
          m_exited_at = std::chrono::steady_clock::now();
        }
        continue;
      }
      return p == 0;  // 0: children remain; -1 (ECHILD): none left
    }
  }

  void terminate_all(int signal) {
    if (m_pid > 0) kill(-m_pid, signal);
    for (pid_t p : own_children()) kill(p, signal);
  }

  void resize() {
    for (auto& s : m_streams) {
      winsize ws{};
      if (s.pty && s.fd >= 0 && ioctl(s.target, TIOCGWINSZ, &ws) == 0) ioctl(s.fd, TIOCSWINSZ, &ws);
    }
  }

  std::optional<ProcessEvent> read_stream(int i) {
    Stream& s = m_streams[i];
    ssize_t n = read(s.fd, m_buffer.data(), m_buffer.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return std::nullopt;
    if (n <= 0) {  // EOF; a pty whose last writer closed reads EIO
      close(s.fd);
      s.fd = -1;
      return std::nullopt;
    }
    if (s.target_open && !write_all(s.target, m_buffer.data(), static_cast<std::size_t>(n))) s.target_open = false;
    m_drain_quiet = false;
    if (m_pass_through) return std::nullopt;
    ProcessEvent e;
    e.kind = ProcessEvent::Kind::output;
    e.stream = i == 0 ? StreamId::out : StreamId::err;
    e.bytes = std::string_view(m_buffer.data(), static_cast<std::size_t>(n));
    return e;
  }

  bool streams_closed() const { return m_streams[0].fd < 0 && m_streams[1].fd < 0; }

  // Draining ends after 100 ms without output, or 2 s after the exit whatever the workers still write.
  bool drain_expired() const {
    return m_drain_quiet || std::chrono::steady_clock::now() - m_exited_at > std::chrono::seconds(2);
  }

  Stream m_streams[2];
  std::vector<char> m_buffer;
  std::vector<int> m_pending_signals;
  struct sigaction m_saved[65] {};
  pid_t m_pid = -1;
  bool m_exited = false;
  bool m_handlers_installed = false;
  bool m_pass_through = false;
  bool m_drain_quiet = false;
  int m_exit_status = 0;
  std::chrono::steady_clock::time_point m_exited_at;
};

}  // namespace

std::unique_ptr<ProcessHost> make_posix_process_host() { return std::make_unique<PosixProcessHost>(); }

}  // namespace headroom::run
