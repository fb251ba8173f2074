// The installed vLLM read from site-packages metadata (src/engine/installed_vllm.cc).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "engine/installed_vllm.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;

struct Sites {
  fs::path root;
  Sites() {
    root = fs::temp_directory_path() / ("headroom-sites-" + std::to_string(std::random_device{}()));
    fs::create_directories(root);
  }
  ~Sites() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  fs::path site(const std::string& name, std::initializer_list<const char*> entries) const {
    const fs::path dir = root / name;
    fs::create_directories(dir);
    for (const char* e : entries) fs::create_directories(dir / e);
    return dir;
  }
};

// pip names a package's metadata directory <name>-<version>.dist-info; the first site that holds
// vllm's wins, and FlashInfer counts only beside it (flashinfer_python is the wheel vLLM pins).
TEST(InstalledVllm, ReadsTheVersionAndFlashInferFromTheFirstSiteThatHasVllm) {
  Sites s;
  const auto empty = s.site("empty", {"numpy-2.1.0.dist-info", "vllm_extra-1.0.dist-info"});
  const auto venv = s.site("venv", {"torch-2.8.0.dist-info", "vllm-0.10.1.1.dist-info", "flashinfer_python-0.2.8.dist-info"});
  const auto system = s.site("system", {"vllm-0.19.0.dist-info"});
  auto found = engine::find_installed_vllm({empty, venv, system});
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->version_text, "0.10.1.1");
  EXPECT_EQ(found->version, (VllmVersion{0, 10, 1, 1}));
  EXPECT_EQ(found->site, venv);
  EXPECT_TRUE(found->flashinfer_installed);
  // v0.10 samples with FlashInfer's kernels exactly when FlashInfer is installed.
  EXPECT_EQ(engine::sampler_path_from_install(*found), std::optional<bool>(true));

  auto later = engine::find_installed_vllm({empty, system});
  ASSERT_TRUE(later.has_value());
  EXPECT_FALSE(later->flashinfer_installed);
  // From v0.11.1 the kernels are opt-in: the installation does not decide the path.
  EXPECT_EQ(engine::sampler_path_from_install(*later), std::nullopt);
  EXPECT_FALSE(engine::find_installed_vllm({empty}).has_value());
}

// A local build's version (+cu128, .dev) reads as its release; a name that is no version is
// passed over, and a missing directory is no error.
TEST(InstalledVllm, LocalSuffixesReadAndJunkIsSkipped) {
  Sites s;
  const auto junk = s.site("junk", {"vllm-not.a.version.dist-info"});
  const auto built = s.site("built", {"vllm-0.11.0+cu128.dist-info"});
  auto found = engine::find_installed_vllm({s.root / "missing", junk, built});
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->version, (VllmVersion{0, 11, 0}));
  EXPECT_EQ(found->site, built);
  // v0.11.0 without FlashInfer: the sort path.
  EXPECT_EQ(engine::sampler_path_from_install(*found), std::optional<bool>(false));
}

// HEADROOM_PYTHON_SITE replaces the search; empty looks nowhere.
TEST(InstalledVllm, TheEnvironmentNamesTheSites) {
  ::setenv("HEADROOM_PYTHON_SITE", "/a:/b", 1);
  EXPECT_EQ(engine::python_site_dirs(), (std::vector<fs::path>{"/a", "/b"}));
  ::setenv("HEADROOM_PYTHON_SITE", "", 1);
  EXPECT_TRUE(engine::python_site_dirs().empty());
}

}  // namespace
}  // namespace headroom
