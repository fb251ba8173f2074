// `headroom serve` in the headroom binary. The server (cpp-httplib with OpenSSL and brotli) is
// linked into the headroom-serve executable beside it, with the same command table, so that the
// other commands do not load those libraries at every start; this entry replaces the process
// with headroom-serve (same process id, arguments and environment).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "cli/commands.h"

namespace headroom::cli {

int run_serve(const Args& args) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  std::string dir = n > 0 ? std::string(self, static_cast<std::size_t>(n)) : std::string();
  dir = dir.substr(0, dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/'));
  const std::string server = (dir.empty() ? std::string(".") : dir) + "/headroom-serve";
  std::vector<std::string> words = {"headroom", "serve"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  execv(server.c_str(), argv.data());
  print_error("cannot start " + server + ": " + std::strerror(errno) +
              " (it is built with headroom: cmake --build build --target headroom)");
  return k_exit_failure;
}

}  // namespace headroom::cli
