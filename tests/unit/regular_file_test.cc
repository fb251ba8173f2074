#include "util/regular_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "util/json_file.h"

namespace headroom::util {
namespace {

std::filesystem::path scratch(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("headroom-regular-file-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::create_directories(dir);
  return dir;
}

// Regression: a config.json that was a FIFO blocked the reading thread (a server's worker) until
// something wrote to it.
TEST(RegularFile, AFifoIsRefusedWithoutWaitingForAWriter) {
  auto dir = scratch("fifo");
  auto path = (dir / "config.json").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto r = read_json_file(path);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(r.error().to_string(), path + ": expected a regular file, found a FIFO (named pipe); headroom reads only regular files");
}

TEST(RegularFile, ADirectoryAndADeviceAreRefused) {
  auto dir = scratch("dir");
  auto r = read_file(dir.string());
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "expected a regular file, found a directory; headroom reads only regular files");
  auto dev = read_file("/dev/null");
  ASSERT_FALSE(dev);
  EXPECT_EQ(dev.error().message, "expected a regular file, found a device; headroom reads only regular files");
}

TEST(RegularFile, AMissingFileIsNotFound) {
  auto r = RegularFile::open("/nonexistent/headroom/config.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::not_found);
}

TEST(RegularFile, ARegularFileIsReadWhole) {
  auto dir = scratch("ok");
  auto path = (dir / "config.json").string();
  { std::ofstream(path) << "{\"a\": 1}"; }
  auto r = read_json_file(path);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["a"], 1);
}

TEST(RegularFile, CheckRefusesAFifoWithoutOpeningIt) {
  auto dir = scratch("check");
  auto path = (dir / "model.safetensors").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto r = check_regular_file(path);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
}

}  // namespace
}  // namespace headroom::util
