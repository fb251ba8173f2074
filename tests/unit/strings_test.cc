#include "util/strings.h"

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
