#include "engine/installed_vllm.h"

#include <cstdlib>
#include <string_view>
#include <system_error>

#include "engine/empirical.h"

namespace headroom::engine {

namespace fs = std::filesystem;

namespace {

bool exists_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// prefix/lib/python3.X/{site,dist}-packages for each python3.X under prefix/lib (at most 64 read).
void add_prefix(const fs::path& prefix, std::vector<fs::path>& out) {
  std::error_code ec;
  fs::directory_iterator it(prefix / "lib", ec), end;
  for (int seen = 0; !ec && it != end && seen < 64; it.increment(ec), ++seen) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with("python3")) continue;
    for (const char* leaf : {"site-packages", "dist-packages"})
      if (exists_dir(it->path() / leaf)) out.push_back(it->path() / leaf);
  }
}

// "vllm-0.10.1.1.dist-info" → "0.10.1.1"; empty when `name` is not `package`'s metadata.
std::string dist_info_version(const std::string& name, const std::string& package) {
  const std::string prefix = package + "-", suffix = ".dist-info";
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix)) return {};
  return name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
}

}  // namespace

std::vector<fs::path> python_site_dirs() {
  std::vector<fs::path> out;
  // HEADROOM_PYTHON_SITE names the directories instead (':'-separated; empty: look nowhere).
  if (const char* only = std::getenv("HEADROOM_PYTHON_SITE")) {
    std::string_view rest = only;
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) out.emplace_back(std::string(dir));
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
    return out;
  }
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char* v = std::getenv(var); v && *v) add_prefix(v, out);
  if (const char* home = std::getenv("HOME"); home && *home) add_prefix(fs::path(home) / ".local", out);
  add_prefix("/usr/local", out);
  add_prefix("/usr", out);
  if (exists_dir("/usr/lib/python3/dist-packages")) out.emplace_back("/usr/lib/python3/dist-packages");
  return out;
}

std::optional<InstalledVllm> find_installed_vllm(const std::vector<fs::path>& sites, std::size_t max_entries) {
  for (const auto& site : sites) {
    std::optional<InstalledVllm> found;
    bool flashinfer = false;
    std::error_code ec;
    fs::directory_iterator it(site, ec), end;
    for (std::size_t seen = 0; !ec && it != end && seen < max_entries; it.increment(ec), ++seen) {
      const std::string name = it->path().filename().string();
      if (!dist_info_version(name, "flashinfer_python").empty() || !dist_info_version(name, "flashinfer").empty())
        flashinfer = true;
      const std::string text = dist_info_version(name, "vllm");
      if (text.empty() || found) continue;
      auto version = VllmVersion::parse(text);
      if (!version) continue;
      found = InstalledVllm{*version, text, site, false};
    }
    if (found) {
      found->flashinfer_installed = flashinfer;
      return found;
    }
  }
  return std::nullopt;
}

std::optional<bool> sampler_path_from_install(const InstalledVllm& installed) {
  if (!sampler_path_depends_on_flashinfer(installed.version, std::nullopt)) return std::nullopt;
  return installed.flashinfer_installed;
}

}  // namespace headroom::engine
