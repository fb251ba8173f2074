#include "util/strings.h"
#include "util/word_match.h"

#include <gtest/gtest.h>

namespace headroom::util {

TEST(Strings, ClosestMatchesSuggestsNearNames) {
  auto m = closest_matches("H10", {"H100", "H200", "A100", "RTX 4090"});
  ASSERT_FALSE(m.empty());
  EXPECT_EQ(m[0], "H100");
}

TEST(Strings, ClosestMatchesDropsFarNames) {
  EXPECT_TRUE(closest_matches("zzzzzz", {"H100", "A100"}).empty());
}

TEST(Strings, EditDistanceIsLevenshteinIgnoringCase) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("H100", "h100"), 0u);
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2u);
}

// The table stops once a row is past the limit (max(2, longer length / 3)): a name at exactly the
// limit is still suggested, one a step past it is not, in order of distance.
TEST(Strings, ClosestMatchesKeepsNamesAtTheLimitAndDropsThoseBeyond) {
  // "abcdefghi" (9): limit 3.
  auto m = closest_matches("abcdefghi", {"abcdefxyz", "abcdewxyz", "abcdefghx"});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0], "abcdefghx");  // 1
  EXPECT_EQ(m[1], "abcdefxyz");  // 3; "abcdewxyz" is 4
}

TEST(Strings, PyRound2MatchesPythonRepr) {
  EXPECT_EQ(py_round2(5.0), "5.0");
  EXPECT_EQ(py_round2(15.7249), "15.72");
  EXPECT_EQ(py_round2(15.7), "15.7");
}

TEST(Strings, WithCommasGroupsThousands) {
  EXPECT_EQ(with_commas(126256), "126,256");
  EXPECT_EQ(with_commas(999), "999");
  EXPECT_EQ(with_commas(1000000), "1,000,000");
}

}  // namespace headroom::util

namespace headroom::util {
namespace {

// Regression: "llama 3.1 8b" got a plain 404 while /v1/models?q= found the model.
TEST(Strings, WordMatchesFindsNamesTypedWithSpaces) {
  std::vector<std::string> ids = {"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-8B",
                                  "Qwen/Qwen2.5-7B-Instruct"};
  EXPECT_EQ(word_matches("llama 3.1 8b", ids), (std::vector<std::string>{"meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct"}));
  EXPECT_TRUE(word_matches("llama", ids).empty());  // one word: closest_matches' job
  EXPECT_TRUE(word_matches("gpt 5", ids).empty());
}

TEST(Strings, LowerWordsCutsAtEachSeparatorAndDropsEmptyWords) {
  EXPECT_EQ(lower_words("Qwen3-30B-A3B__AWQ-", "-_"), (std::vector<std::string>{"qwen3", "30b", "a3b", "awq"}));
  EXPECT_EQ(lower_words("RTX 4060-Ti", " -_"), (std::vector<std::string>{"rtx", "4060", "ti"}));
  EXPECT_EQ(lower_words("RTX 4060-Ti", "-"), (std::vector<std::string>{"rtx 4060", "ti"}));
  EXPECT_TRUE(lower_words("--", "-").empty());
}

TEST(Strings, SuggestionsIgnoreAbsurdlyLongQueries) {
  std::vector<std::string> ids = {"meta-llama/Llama-3.1-8B-Instruct"};
  EXPECT_TRUE(closest_matches(std::string(100000, 'a') + "meta-llama/Llama-3.1-8B-Instruct", ids).empty());
  EXPECT_TRUE(word_matches(std::string(300, 'a') + " llama", ids).empty());
}

// POSIX shell quoting (a single-quoted word cannot hold a quote: close, escape it, reopen).
TEST(Strings, ShellWordQuotesWhatTheShellWouldSplitOrExpand) {
  EXPECT_EQ(shell_word("32768"), "32768");
  EXPECT_EQ(shell_word("Qwen/Qwen3-8B"), "Qwen/Qwen3-8B");
  EXPECT_EQ(shell_word(R"({"video":0})"), R"('{"video":0}')");
  EXPECT_EQ(shell_word("it's"), R"('it'\''s')");
  EXPECT_EQ(shell_word(""), "''");
}

}  // namespace
}  // namespace headroom::util
