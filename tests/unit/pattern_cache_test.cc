// The compiled-pattern cache (src/diagnose/pattern_cache.h): a second scanner of the same patterns
// loads the database the first one stored and finds the same lines; a file that is cut short,
// altered or turned off is not used, and the patterns are compiled again.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

#include "diagnose/pattern_cache.h"
#include "headroom/diagnose.h"

namespace headroom {
namespace {

const std::vector<std::string> k_patterns = {"CUDA out of memory", "No available memory for the cache blocks",
                                             "max_model_len [(][0-9]+[)] is larger"};
const std::string k_log =
    "INFO starting\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    "ValueError: No available memory for the cache blocks.\nValueError: the max_model_len (131072) is larger\n";

class PatternCache : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = std::filesystem::temp_directory_path() / ("headroom_patterns_" + std::to_string(::getpid()));
    std::filesystem::remove_all(m_dir);
    ::setenv("HEADROOM_PATTERN_CACHE", m_dir.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("HEADROOM_PATTERN_CACHE");
    std::filesystem::remove_all(m_dir);
  }
  // The numbers of the lines the scanner hands on.
  static std::vector<std::int64_t> matched_lines() {
    auto scanner = LogScanner::create(k_patterns);
    EXPECT_TRUE(scanner) << scanner.error().to_string();
    if (!scanner) return {};
    std::vector<std::int64_t> lines;
    auto source = memory_source(k_log, "test.log");
    auto scanned = (*scanner)->scan(*source, [&](std::int64_t n, std::string_view, const std::vector<int>&) { lines.push_back(n); });
    EXPECT_TRUE(scanned);
    return lines;
  }
  std::filesystem::path m_dir;
};

TEST_F(PatternCache, ASecondScannerLoadsWhatTheFirstStored) {
  const std::string path = pattern_cache::path_for(k_patterns, HS_FLAG_MULTILINE);
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(std::filesystem::path(path).parent_path(), m_dir);
  EXPECT_EQ(pattern_cache::load(k_patterns, HS_FLAG_MULTILINE), nullptr);  // nothing stored yet
  const auto first = matched_lines();
  EXPECT_EQ(first, (std::vector<std::int64_t>{2, 3, 4}));
  ASSERT_TRUE(std::filesystem::exists(path));
  hs_database_t* db = pattern_cache::load(k_patterns, HS_FLAG_MULTILINE);
  ASSERT_NE(db, nullptr);
  hs_free_database(db);
  EXPECT_EQ(matched_lines(), first);
  // Other patterns are another file.
  EXPECT_NE(pattern_cache::path_for({"CUDA out of memory"}, HS_FLAG_MULTILINE), path);
}

TEST_F(PatternCache, AnAlteredOrShortFileIsNotUsedAndIsWrittenAgain) {
  const auto first = matched_lines();
  const std::string path = pattern_cache::path_for(k_patterns, HS_FLAG_MULTILINE);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 100u);
  for (const std::string& bad : {bytes.substr(0, bytes.size() / 2), std::string(bytes).replace(bytes.size() - 10, 1, "\x7f"),
                                 std::string("not a database")}) {
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << bad;
    }
    EXPECT_EQ(pattern_cache::load(k_patterns, HS_FLAG_MULTILINE), nullptr);
    EXPECT_EQ(matched_lines(), first);  // compiled again
    hs_database_t* db = pattern_cache::load(k_patterns, HS_FLAG_MULTILINE);
    EXPECT_NE(db, nullptr);  // and stored again
    if (db) hs_free_database(db);
  }
}

TEST_F(PatternCache, ZeroTurnsItOff) {
  ::setenv("HEADROOM_PATTERN_CACHE", "0", 1);
  EXPECT_EQ(pattern_cache::path_for(k_patterns, HS_FLAG_MULTILINE), "");
  EXPECT_EQ(matched_lines(), (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_FALSE(std::filesystem::exists(m_dir));
}

}  // namespace
}  // namespace headroom
