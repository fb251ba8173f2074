// Loading the optional parts (plugins) at first use: where they are looked for, and the errors
// when one is missing or broken.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "hub/curl_plugin.h"
#include "util/plugin_loader.h"

namespace headroom::plugin {
namespace {

// Sets HEADROOM_PLUGIN_DIR for one test.
class PluginDir {
 public:
  explicit PluginDir(const std::string& dir) { setenv("HEADROOM_PLUGIN_DIR", dir.c_str(), 1); }
  ~PluginDir() { unsetenv("HEADROOM_PLUGIN_DIR"); }
};

TEST(PluginLoader, LooksInHeadroomPluginDirFirstThenBesideTheBinary) {
  PluginDir env("/somewhere/plugins");
  auto dirs = search_dirs();
  ASSERT_GE(dirs.size(), 2u);
  EXPECT_EQ(dirs[0], "/somewhere/plugins");
  // The test binary holds the library itself: its folder comes next.
  EXPECT_EQ(dirs[1], HEADROOM_BINARY_DIR);
}

TEST(PluginLoader, LoadsTheCurlPluginBuiltBesideTheBinary) {
  auto entry = entry_point(k_curl_file, k_curl_entry);
  ASSERT_TRUE(entry) << entry.error().to_string();
  auto* plugin = reinterpret_cast<const CurlPlugin* (*)()>(*entry)();
  EXPECT_STREQ(plugin->version, HEADROOM_VERSION);
  EXPECT_NE(plugin->make_transport, nullptr);
}

TEST(PluginLoader, AMissingPluginSaysWhereItLooked) {
  PluginDir env("/nonexistent/plugins");
  auto entry = entry_point("headroom_nothing.so", "entry");
  ASSERT_FALSE(entry);
  EXPECT_EQ(entry.error().code, ErrorCode::unavailable);
  const std::string& m = entry.error().message;
  EXPECT_EQ(m.rfind("headroom_nothing.so not found (looked in /nonexistent/plugins, ", 0), 0u) << m;
  EXPECT_NE(m.find("point HEADROOM_PLUGIN_DIR at its folder"), std::string::npos) << m;
}

TEST(PluginLoader, AFileThatIsNotASharedObjectIsReportedWithTheLoadersReason) {
  auto dir = std::filesystem::temp_directory_path() / ("headroom_plugin_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "headroom_broken.so") << "not an ELF file\n";
  PluginDir env(dir.string());
  auto entry = entry_point("headroom_broken.so", "entry");
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(entry);
  EXPECT_EQ(entry.error().message.rfind("cannot load headroom_broken.so: ", 0), 0u) << entry.error().message;
  EXPECT_EQ(entry.error().where, (dir / "headroom_broken.so").string());
}

TEST(PluginLoader, AnEntryPointThePluginLacksIsAnError) {
  auto entry = entry_point(k_curl_file, "headroom_no_such_entry");
  ASSERT_FALSE(entry);
  EXPECT_EQ(entry.error().message, "headroom_curl.so has no entry point headroom_no_such_entry (a plugin from another build?)");
}

}  // namespace
}  // namespace headroom::plugin
