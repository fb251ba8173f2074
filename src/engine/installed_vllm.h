// The vLLM installed in this machine's Python environment, read from the package metadata pip
// leaves in site-packages (`vllm-<version>.dist-info`), without running Python. `check` and `plan`
// model that version when --vllm-version is not given, and whether FlashInfer is installed beside
// it settles the sampler's path on the versions where that decides it (v0.8 to v0.11.0).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "headroom/vllm_version.h"

namespace headroom::engine {

struct InstalledVllm {
  VllmVersion version;
  std::string version_text;           // as the dist-info directory names it ("0.10.1.1", "0.11.0+cu128")
  std::filesystem::path site;         // the site-packages directory that holds it
  bool flashinfer_installed = false;  // flashinfer_python (or flashinfer) in the same directory
};

// The directories to look in, most specific first: the active virtualenv ($VIRTUAL_ENV), conda
// ($CONDA_PREFIX), the user's site (~/.local), then /usr/local and /usr. Only those that exist.
// HEADROOM_PYTHON_SITE (':'-separated directories; empty: none) replaces the search.
std::vector<std::filesystem::path> python_site_dirs();

// The first vLLM found in `sites`, in their order; nullopt when none holds one (or its version is
// not one headroom reads). At most `max_entries` directory entries are read per site.
std::optional<InstalledVllm> find_installed_vllm(const std::vector<std::filesystem::path>& sites,
                                                 std::size_t max_entries = 100000);

// What the sampler's top-k/top-p path depends on there: on v0.8-v0.11.0 without
// VLLM_USE_FLASHINFER_SAMPLER, FlashInfer's kernels run exactly when FlashInfer is installed
// (v1/sample/ops/topk_topp_sampler.py). The value VLLM_USE_FLASHINFER_SAMPLER would need to give
// the same path, or nullopt where the installation does not decide it.
std::optional<bool> sampler_path_from_install(const InstalledVllm& installed);

}  // namespace headroom::engine
