#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>

#include "headroom/diagnose.h"

using namespace headroom;

namespace {

struct Seen {
  std::vector<std::pair<std::int64_t, std::string>> lines;
};

Result<LogScanner::Totals> scan(const std::string& text, const std::vector<std::string>& patterns, Seen& seen,
                                ScanOptions options = {}) {
  auto scanner = LogScanner::create(patterns);
  if (!scanner) return tl::unexpected(scanner.error());
  auto source = memory_source(text, "test.log");
  return (*scanner)->scan(
      *source, [&](std::int64_t n, std::string_view line, const std::vector<int>&) { seen.lines.emplace_back(n, std::string(line)); },
      options);
}

std::string gzip(const std::string& text, std::size_t keep = std::string::npos) {
  auto path = std::filesystem::temp_directory_path() / ("headroom_scan_" + std::to_string(::getpid()) + ".gz");
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  FILE* in = std::fopen(path.c_str(), "rb");
  std::string bytes;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, in)) > 0) bytes.append(buf, n);
  std::fclose(in);
  std::filesystem::remove(path);
  return keep == std::string::npos ? bytes : bytes.substr(0, keep);
}

std::string write_temp(const std::string& bytes, const std::string& name) {
  auto path = std::filesystem::temp_directory_path() / ("headroom_scan_" + std::to_string(::getpid()) + name);
  FILE* out = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), out);
  std::fclose(out);
  return path.string();
}

}  // namespace

TEST(LogScanner, ReportsMatchingLinesWithTheirNumbers) {
  Seen seen;
  auto t = scan("a\nfoo 1\nb\nc foo\n", {"foo"}, seen);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->lines, 4);
  ASSERT_EQ(seen.lines.size(), 2u);
  EXPECT_EQ(seen.lines[0], (std::pair<std::int64_t, std::string>{2, "foo 1"}));
  EXPECT_EQ(seen.lines[1], (std::pair<std::int64_t, std::string>{4, "c foo"}));
}

TEST(LogScanner, LineNumbersSurviveChunkBoundaries) {
  std::string text;
  for (int i = 1; i <= 5000; ++i) text += (i % 1000 == 0 ? "hit " : "line ") + std::to_string(i) + "\n";
  Seen seen;
  ScanOptions options;
  options.chunk_bytes = 4096;
  options.max_line_bytes = 256;
  ASSERT_TRUE(scan(text, {"hit"}, seen, options));
  ASSERT_EQ(seen.lines.size(), 5u);
  for (std::size_t k = 0; k < 5; ++k) EXPECT_EQ(seen.lines[k].first, static_cast<std::int64_t>((k + 1) * 1000));
}

TEST(LogScanner, LastLineWithoutNewlineIsScanned) {
  Seen seen;
  auto t = scan("a\nfoo", {"foo"}, seen);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->lines, 2);
  ASSERT_EQ(seen.lines.size(), 1u);
  EXPECT_EQ(seen.lines[0].first, 2);
}

TEST(LogScanner, OverlongLineIsCutWithAWarning) {
  std::string text = "first\nfoo" + std::string(10000, 'x') + "\nfoo after\n";
  Seen seen;
  ScanOptions options;
  options.chunk_bytes = 4096;
  options.max_line_bytes = 1024;
  auto t = scan(text, {"foo"}, seen, options);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_EQ(t->warnings[0], "line 2 is longer than 1,024 bytes; only its first bytes were scanned");
  ASSERT_EQ(seen.lines.size(), 2u);
  EXPECT_EQ(seen.lines[0].first, 2);
  EXPECT_EQ(seen.lines[0].second.size(), 1024u);
  EXPECT_EQ(seen.lines[1], (std::pair<std::int64_t, std::string>{3, "foo after"}));
  EXPECT_EQ(t->lines, 3);
}

TEST(LogScanner, BinaryInputIsRejected) {
  Seen seen;
  auto t = scan(std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10), {"foo"}, seen);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().to_string(), "test.log: expected a text log (plain or gzip), found binary data at byte 7");
}

TEST(LogScanner, EmptyInputHasNoLines) {
  Seen seen;
  auto t = scan("", {"foo"}, seen);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->lines, 0);
  EXPECT_EQ(t->bytes, 0);
}

TEST(LogScanner, PatternHyperscanRejectsFallsBackToRe2) {
  auto scanner = LogScanner::create({"foo", R"(\bbar\B)"});
  ASSERT_TRUE(scanner);
  // Whichever engine takes a pattern, every valid pattern still matches.
  Seen seen;
  auto source = memory_source("a barx\nfoo\n", "t");
  ASSERT_TRUE((*scanner)->scan(*source, [&](std::int64_t n, std::string_view l, const std::vector<int>&) {
    seen.lines.emplace_back(n, std::string(l));
  }));
  EXPECT_EQ(seen.lines.size(), 2u);
}

TEST(LogScanner, InvalidPatternIsAnError) {
  auto scanner = LogScanner::create({"a(b"});
  ASSERT_FALSE(scanner);
  EXPECT_EQ(scanner.error().code, ErrorCode::invalid_argument);
}

TEST(OpenLog, ReadsGzip) {
  std::string path = write_temp(gzip("x\nfoo here\n"), ".log.gz");
  auto source = open_log(path);
  ASSERT_TRUE(source);
  auto scanner = LogScanner::create({"foo"});
  std::vector<std::int64_t> lines;
  auto t = (*scanner)->scan(**source, [&](std::int64_t n, std::string_view, const std::vector<int>&) { lines.push_back(n); });
  ASSERT_TRUE(t);
  EXPECT_EQ(lines, std::vector<std::int64_t>{2});
  std::filesystem::remove(path);
}

TEST(OpenLog, TruncatedGzipIsAWarningAndWhatWasReadIsScanned) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "foo line " + std::to_string(i * 7919 % 10007) + "\n";
  std::string full = gzip(text);
  std::string path = write_temp(full.substr(0, full.size() / 2), ".cut.gz");
  auto source = open_log(path);
  ASSERT_TRUE(source);
  auto scanner = LogScanner::create({"foo"});
  int seen = 0;
  auto t = (*scanner)->scan(**source, [&](std::int64_t, std::string_view, const std::vector<int>&) { ++seen; });
  ASSERT_TRUE(t);
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_NE(t->warnings[0].find("truncated gzip data"), std::string::npos) << t->warnings[0];
  EXPECT_GT(seen, 0);
  std::filesystem::remove(path);
}

TEST(OpenLog, MissingFileIsNotFound) {
  auto source = open_log("/nonexistent/vllm.log");
  ASSERT_FALSE(source);
  EXPECT_EQ(source.error().to_string(), "/nonexistent/vllm.log: expected a log file, found nothing at this path");
}
