// The error documents of `headroom serve`: JSON member names in `where`, bounded text.
#include "server/api_error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace headroom::server {
namespace {

// Regression: API errors named CLI flags ("--gpu", "--context") in `where`.
TEST(ApiError, WhereNamesTheJsonMemberNotTheCliFlag) {
  EXPECT_EQ(from_library(Error{ErrorCode::not_found, "unknown GPU", "--gpu"}).where, "gpu");
  EXPECT_EQ(from_library(Error{ErrorCode::invalid_argument, "too long", "--context"}).where, "context");
  EXPECT_EQ(from_library(Error{ErrorCode::invalid_argument, "x", "--max-gpus"}).where, "max_gpus");
  EXPECT_EQ(from_library(Error{ErrorCode::invalid_argument, "x", "--vllm-version"}).where, "vllm_version");
  EXPECT_EQ(from_library(Error{ErrorCode::invalid_argument, "x", "--max-model-len"}).where, "flags.max_model_len");
  EXPECT_EQ(from_library(Error{ErrorCode::parse_error, "x", "config.json:3:4"}).where, "config.json:3:4");
}

TEST(ApiError, LongMessagesAreCutBeforeTheyAreRendered) {
  auto doc = nlohmann::json::parse(error_body({404, "not_found", "unknown model '" + std::string(50000, 'A') + "'", std::string(5000, 'w')}));
  const std::string message = doc["error"]["message"];
  EXPECT_EQ(message.size(), k_max_message_bytes + std::string("…").size());
  EXPECT_TRUE(message.ends_with("…"));
  EXPECT_EQ(doc["error"]["where"].get<std::string>().size(), k_max_where_bytes + std::string("…").size());
}

}  // namespace
}  // namespace headroom::server
