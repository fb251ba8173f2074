// util::object_members: the top-level members of an object's text, without parsing the values.
#include <gtest/gtest.h>

#include "util/json_members.h"

namespace headroom::util {
namespace {

TEST(JsonMembers, ListsTopLevelMembersWithTheirValueText) {
  auto m = object_members(R"( {"a": 1, "b" :"x,}y", "c": {"d": [1, {"e": "]"}]}, "f": [], "g": null} )");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->size(), 5u);
  EXPECT_EQ((*m)[0].name, "a");
  EXPECT_EQ((*m)[0].value, "1");
  EXPECT_EQ((*m)[1].value, R"("x,}y")");
  EXPECT_EQ((*m)[2].name, "c");
  EXPECT_EQ((*m)[2].value, R"({"d": [1, {"e": "]"}]})");
  EXPECT_EQ((*m)[3].value, "[]");
  EXPECT_EQ((*m)[4].value, "null");
}

TEST(JsonMembers, NestedNamesAreNotTopLevel) {
  auto m = object_members(R"({"x": {"hf_id": "nested"}, "hf_id": "top"})");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[1].name, "hf_id");
  EXPECT_EQ((*m)[1].value, R"("top")");
}

TEST(JsonMembers, EscapedQuotesStayInsideTheString) {
  auto m = object_members(R"({"a": "say \"}\" and \\", "b": 2})");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].value, R"("say \"}\" and \\")");
  EXPECT_EQ((*m)[1].value, "2");
}

TEST(JsonMembers, EmptyObjectHasNoMembers) {
  auto m = object_members(" {} ");
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->empty());
}

TEST(JsonMembers, RejectsWhatIsNotAnObjectOfMembers) {
  for (const char* bad : {"", "[1]", "{", R"({"a": 1)", R"({"a" 1})", R"({"a": "x)", R"({"a": [1, 2})", R"({"a": 1 "b": 2})",
                          R"({"a": })", R"({"a": 1} x)", R"({1: 2})"})
    EXPECT_FALSE(object_members(bad)) << bad;
}

}  // namespace
}  // namespace headroom::util
