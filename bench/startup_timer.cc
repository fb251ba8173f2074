// Whole-process timer for bench/startup.sh: runs one command many times (stdout and stderr to
// /dev/null) and prints the median wall time, the median CPU time (user + system, from wait4's
// rusage, so other load on the machine does not count) with its 10th and 90th percentiles, and
// the largest resident set. A shared machine inflates wall time; the CPU time is the figure that
// start-up work shows in.
//   bench_startup_timer [--runs N] [--warmup N] [--label TEXT] -- CMD [ARGS...]
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Sample {
  double wall_ms = 0;
  double cpu_ms = 0;
  long max_rss_kib = 0;
  int status = 0;
};

double ms(const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; }

// One run of argv with stdout and stderr sent to /dev/null; status -1 when it could not start.
Sample run_once(char** argv) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  Sample s;
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv, environ) != 0) {
    posix_spawn_file_actions_destroy(&actions);
    s.status = -1;
    return s;
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  const auto t1 = std::chrono::steady_clock::now();
  posix_spawn_file_actions_destroy(&actions);
  s.wall_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  s.cpu_ms = ms(usage.ru_utime) + ms(usage.ru_stime);
  s.max_rss_kib = usage.ru_maxrss;
  s.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return s;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 200, warmup = 10;
  std::string label;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--warmup" && i + 1 < argc) warmup = std::max(0, std::atoi(argv[++i]));
    else if (a == "--label" && i + 1 < argc) label = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--runs N] [--warmup N] [--label TEXT] -- CMD [ARGS...]\n", argv[0]);
      return 2;
    }
  }
  if (i >= argc) {
    std::fprintf(stderr, "%s: no command after --\n", argv[0]);
    return 2;
  }
  char** cmd = argv + i;
  if (label.empty()) label = cmd[0];
  for (int w = 0; w < warmup; ++w) run_once(cmd);
  std::vector<double> wall, cpu;
  long rss = 0;
  for (int r = 0; r < runs; ++r) {
    Sample s = run_once(cmd);
    // 0 and 3 (predicted not to start) are answers; anything else means the case is broken.
    if (s.status != 0 && s.status != 3) {
      std::fprintf(stderr, "%s: '%s' exited with status %d\n", argv[0], label.c_str(), s.status);
      return 1;
    }
    wall.push_back(s.wall_ms);
    cpu.push_back(s.cpu_ms);
    rss = std::max(rss, s.max_rss_kib);
  }
  std::printf("%-44s cpu median %6.2f ms (p10 %6.2f, p90 %6.2f)  wall median %7.2f ms  max RSS %6.1f MiB\n",
              label.c_str(), percentile(cpu, 0.5), percentile(cpu, 0.1), percentile(cpu, 0.9), percentile(wall, 0.5),
              static_cast<double>(rss) / 1024.0);
  return 0;
}
