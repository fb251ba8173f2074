// The response cache of `headroom serve`: least recently used first out, bounded by entries and bytes.
#include <gtest/gtest.h>

#include "headroom/check_document.h"
#include "server/response_cache.h"

namespace headroom::server {
namespace {

TEST(ResponseCache, EvictsTheLeastRecentlyUsed) {
  ResponseCache cache(2, 1 << 20);
  cache.put("a", "1");
  cache.put("b", "2");
  ASSERT_TRUE(cache.get("a"));  // a is now newer than b
  cache.put("c", "3");
  EXPECT_TRUE(cache.get("a"));
  EXPECT_FALSE(cache.get("b"));
  EXPECT_EQ(*cache.get("c"), "3");
  auto s = cache.stats();
  EXPECT_EQ(s.entries, 2u);
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_EQ(s.hits, 3u);
  EXPECT_EQ(s.misses, 1u);
}

TEST(ResponseCache, BoundedByBytes) {
  ResponseCache cache(100, 10);
  cache.put("k1", "aaaa");  // 6 bytes with its key
  cache.put("k2", "bbbb");  // 12 in all: k1 goes
  EXPECT_FALSE(cache.get("k1"));
  EXPECT_TRUE(cache.get("k2"));
  EXPECT_LE(cache.stats().bytes, 10u);
  cache.put("k3", std::string(20, 'x'));  // larger than the whole cache: not kept
  EXPECT_FALSE(cache.get("k3"));
}

TEST(ResponseCache, ZeroEntriesKeepsNothing) {
  ResponseCache cache(0, 1 << 20);
  cache.put("a", "1");
  EXPECT_FALSE(cache.get("a"));
}

TEST(RedactLocation, PasswordsInUrlsAndKeywords) {
  EXPECT_EQ(redact_location("postgresql://user:hunter2@db:5432/h"), "postgresql://user:***@db:5432/h");
  EXPECT_EQ(redact_location("cannot connect: postgres://u:p%40ss@h/db?sslmode=require&password=x2"),
            "cannot connect: postgres://u:***@h/db?sslmode=require&password=***");
  EXPECT_EQ(redact_location("postgresql://user@db/h"), "postgresql://user@db/h");
  EXPECT_EQ(redact_location("/home/me/.local/share/headroom/history.db"), "/home/me/.local/share/headroom/history.db");
}

TEST(RedactLocation, KeywordAnyCaseAndSeveralUrls) {
  EXPECT_EQ(redact_location("host=db PASSWORD=abc user=x"), "host=db PASSWORD=*** user=x");
  EXPECT_EQ(redact_location("a postgres://a:b@h and mysql://c:d@k"), "a postgres://a:***@h and mysql://c:***@k");
  EXPECT_EQ(redact_location("1x://u:p@h"), "1x://u:***@h");
  EXPECT_EQ(redact_location("://u:p@h"), "://u:p@h");
}

// Regression: a 60,000-character unknown model name sent to /v1/check reached this function and
// std::regex_replace recursed once per character until the worker's stack overflowed (SIGSEGV).
TEST(RedactLocation, VeryLongClientTextDoesNotOverflowTheStack) {
  const std::string name(60000, 'A');
  EXPECT_EQ(redact_location("unknown model '" + name + "'"), "unknown model '" + name + "'");
  std::string urls;
  for (int i = 0; i < 20000; ++i) urls += "s://u:p@";
  const std::string redacted = redact_location(urls);
  EXPECT_EQ(redacted.substr(0, 20), "s://u:***@s://u:***@");
}

}  // namespace
}  // namespace headroom::server
