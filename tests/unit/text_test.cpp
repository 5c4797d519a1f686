#include <tuner/core/base/text.hpp>

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tune {
namespace {

TEST(TextTest, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("verify", "verfy"), 1u);
  EXPECT_EQ(edit_distance("tune", "tunr"), 1u);
  EXPECT_EQ(edit_distance("m<=512", "m<=521"), 2u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
}

TEST(TextTest, DidYouMeanOffersOnlyANearMiss) {
  const std::vector<std::string> names = {"verify", "space", "status", "show"};
  EXPECT_EQ(did_you_mean("verfy", names), ", did you mean 'verify'?");
  EXPECT_EQ(did_you_mean("shw", names), ", did you mean 'show'?");
  EXPECT_EQ(did_you_mean("record", names), "");
  EXPECT_EQ(did_you_mean("verify", names), "");  // the same name is no near miss
  // Short names are too easily near anything: none under 2 characters.
  EXPECT_EQ(did_you_mean("s", std::vector<std::string>{"t"}), "");
  // The nearest wins; on a tie the first.
  EXPECT_EQ(nearest("statu", std::vector<std::string_view>{"state", "status"}), "state");
  EXPECT_EQ(nearest("status_", std::vector<std::string_view>{"state", "status"}), "status");
}

TEST(TextTest, ListsAndLines) {
  EXPECT_EQ(quoted_list({"a", "b c"}), "'a', 'b c'");
  EXPECT_EQ(quoted_list({}), "");
  EXPECT_EQ(join(std::vector<std::string>{"x", "y"}, " | "), "x | y");
  EXPECT_EQ(trim("  \t a b \n"), "a b");
  EXPECT_EQ(trim(" \n "), "");
  EXPECT_EQ(last_line("first\nsecond  \n\n  \n"), "second");
  EXPECT_EQ(last_line(""), "");
  EXPECT_EQ(shorten("abcdef", 3), "abc...");
  EXPECT_EQ(shorten("abc", 3), "abc");
  EXPECT_EQ(one_line("BM *\n  BN <= 4"), "BM * BN <= 4");
  EXPECT_EQ(one_line("a  b"), "a  b");
}

}  // namespace
}  // namespace tune
