#include "util/plugin_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <map>
#include <mutex>

namespace headroom::plugin {

namespace {

std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::string executable_path() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace

std::vector<std::string> search_dirs() {
  std::vector<std::string> dirs;
  auto add = [&](const std::string& d) {
    if (d.empty()) return;
    for (const auto& have : dirs)
      if (have == d) return;
    dirs.push_back(d);
  };
  if (const char* env = std::getenv("HEADROOM_PLUGIN_DIR"); env != nullptr) add(env);
  // dladdr names the object as it was opened (argv[0] for the executable): made absolute here.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&search_dirs), &info) != 0 && info.dli_fname != nullptr) {
    if (char* real = realpath(info.dli_fname, nullptr); real != nullptr) {
      add(folder_of(real));
      std::free(real);
    }
  }
  add(folder_of(executable_path()));
#ifdef HEADROOM_PLUGIN_BUILD_DIR
  add(HEADROOM_PLUGIN_BUILD_DIR);
#endif
  return dirs;
}

Result<void*> entry_point(const std::string& file, const char* entry) {
  static std::mutex mutex;
  static std::map<std::string, void*> loaded;  // file → handle; plugins are never unloaded
  std::lock_guard<std::mutex> lock(mutex);
  void* handle = nullptr;
  if (auto it = loaded.find(file); it != loaded.end()) {
    handle = it->second;
  } else {
    std::string looked;
    for (const auto& dir : search_dirs()) {
      const std::string path = dir + "/" + file;
      if (access(path.c_str(), F_OK) != 0) {
        looked += (looked.empty() ? "" : ", ") + dir;
        continue;
      }
      handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* why = dlerror();
        return make_error(ErrorCode::unavailable,
                          "cannot load " + file + ": " + std::string(why != nullptr ? why : "unknown error") +
                              " (install the Debian packages with scripts/setup.sh and rebuild)",
                          path);
      }
      break;
    }
    if (handle == nullptr)
      return make_error(ErrorCode::unavailable,
                        file + " not found (looked in " + (looked.empty() ? std::string("no folder") : looked) +
                            "); build it with 'cmake --build build' or point HEADROOM_PLUGIN_DIR at its folder");
    loaded.emplace(file, handle);
  }
  void* address = dlsym(handle, entry);
  if (address == nullptr)
    return make_error(ErrorCode::unavailable, file + " has no entry point " + entry + " (a plugin from another build?)");
  return address;
}

}  // namespace headroom::plugin
