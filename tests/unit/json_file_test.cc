#include "util/json_file.h"

#include <gtest/gtest.h>

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
