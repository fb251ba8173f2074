#include "util/json_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace headroom::util {

TEST(JsonFile, MalformedJsonNamesLineAndColumn) {
  auto r = parse_json("{\n  \"a\": 1,\n  \"b\": }\n", "config.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "config.json:3:8");
  EXPECT_EQ(r.error().code, ErrorCode::parse_error);
}

TEST(JsonFile, JsonlErrorNamesTheLine) {
  auto r = parse_jsonl("{\"a\":1}\n\n{\"b\":\n", "x.jsonl");
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().where.rfind("x.jsonl:3:", 0) == 0) << r.error().where;
}

TEST(JsonFile, MissingFileIsNotFound) {
  auto r = read_file("/nonexistent/headroom/file.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::not_found);
}

}  // namespace headroom::util

namespace headroom::util {

// Regression (found by fuzz/model_config_fuzz.cc): a number too large for a double made the JSON
// library throw out_of_range, which escaped and aborted the program.
TEST(JsonFile, NumberTooLargeIsAParseErrorNotACrash) {
  auto r = parse_json("{\"hidden_size\": 77773e77773}", "config.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::parse_error);
  EXPECT_EQ(r.error().where, "config.json");
  EXPECT_NE(r.error().message.find("number overflow"), std::string::npos) << r.error().message;
}

}  // namespace headroom::util

namespace headroom::util {

// Regression (tests/cli/bad_input.sh): 100,000 nested objects in a config.json took minutes and
// gigabytes before an answer; nesting deeper than the limit is refused at the bracket.
TEST(JsonFile, NestingDeeperThanTheLimitIsAParseError) {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "{\"a\":";
  auto r = parse_json(deep, "config.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::parse_error);
  EXPECT_EQ(r.error().to_string(), "config.json:1:1281: malformed JSON: nested deeper than 256 levels");
}

TEST(JsonFile, NestingUpToTheLimitAndBracketsInStringsAreAccepted) {
  std::string ok = std::string(256, '[') + "\"[[[{{\\\"\"" + std::string(256, ']');
  EXPECT_TRUE(parse_json(ok, "x.json"));
}

// Regression (tests/cli/bad_input.sh): a 1 GB file given as config.json was read whole into memory.
TEST(JsonFile, FileLargerThanTheLimitIsNotRead) {
  auto dir = std::filesystem::temp_directory_path() / ("headroom-json-file-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = (dir / "config.json").string();
  { std::ofstream(path) << "{}"; }
  std::filesystem::resize_file(path, 1ull << 30);  // sparse: no disk space used
  auto r = read_file(path);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(r.error().to_string(), path + ": expected a file of at most 32 MiB, found 1024 MiB; it was not read");
}

TEST(JsonFile, LimitAppliesToFilesWithoutASize) {
  auto r = read_file("/dev/zero", 1 << 20);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
}

}  // namespace headroom::util
