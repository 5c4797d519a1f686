// Spaces that parse but can never give a record (tuner/core/space/space_checks.hpp).
#include <tuner/core/space/space_checks.hpp>

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tune {
namespace {

std::vector<std::string> problems(const std::string& buckets, const std::string& kernel = "k",
                                  const std::string& prune = "B <= n") {
  const std::string text = "schema = 1\nkernel = \"k\"\nprune = [\"" + prune +
                           "\"]\n\n[params]\nB = [1, 2, 4]\n\n" + buckets;
  result<Space> space = Space::parse(text, "s.toml");
  EXPECT_TRUE(space) << space.error().str();
  std::vector<std::string> out;
  const std::vector<diagnostic> found = space_declaration_problems(*space, kernel).value();
  for (const diagnostic& d : found)
    out.push_back(d.str());
  return out;
}

TEST(SpaceChecksTest, AGoodSpaceHasNone) {
  EXPECT_TRUE(problems("[[buckets]]\nname = \"s\"\nwhen = \"n <= 2\"\nshape = { n = 2 }\n\n"
                       "[[buckets]]\nname = \"l\"\nshape = { n = 8 }\n")
                  .empty());
  EXPECT_TRUE(problems("", "", "B > 0").empty());  // no kernel asked for: not checked
}

TEST(SpaceChecksTest, AnotherKernelsSpace) {
  EXPECT_EQ(problems("", "k2", "B > 0"),
            std::vector<std::string>{
                "s.toml: error: the space is of kernel 'k', but it is declared as kernel 'k2' "
                "(tune_add_kernel(k2)): set kernel = \"k2\" in the space, or declare the kernel "
                "as 'k'"});
}

TEST(SpaceChecksTest, BucketsWithoutConfigsOrNeverSelected) {
  EXPECT_EQ(problems("[[buckets]]\nname = \"all\"\nshape = { n = 4 }\n\n"
                     "[[buckets]]\nname = \"tiny\"\nwhen = \"n < 1\"\nshape = { n = 0 }\n"),
            (std::vector<std::string>{
                "s.toml:12:1: error: bucket 'tiny' keeps no config after pruning, so it can "
                "never have a winner: loosen the 'prune' expressions for its shape (n=0) or add "
                "a [[configs]] entry that passes them",
                "s.toml:12:1: error: bucket 'tiny' is never selected: bucket 'all' (line 8) "
                "before it has no 'when' and takes every shape: move 'tiny' before 'all', or "
                "give 'all' a 'when'"}));
}

TEST(SpaceChecksTest, AShadowedBucketAndAnEmptySpace) {
  EXPECT_EQ(problems("[[buckets]]\nname = \"big\"\nwhen = \"n >= 2\"\nshape = { n = 8 }\n\n"
                     "[[buckets]]\nname = \"mid\"\nwhen = \"n <= 4\"\nshape = { n = 4 }\n"),
            std::vector<std::string>{
                "s.toml:13:1: error: bucket 'mid' is shadowed: its own shape (n=4) selects "
                "bucket 'big' (line 8, when 'n >= 2'), which comes first, so its winner would "
                "never run for the shape it is tuned on: move 'mid' before 'big', or narrow the "
                "'when' of 'big'"});
  EXPECT_EQ(problems("", "k", "B > 4"),
            std::vector<std::string>{
                "s.toml: error: bucket 'default' keeps no config after pruning, so it can never "
                "have a winner: loosen the 'prune' expressions for its shape (empty) or add a "
                "[[configs]] entry that passes them"});
}

// The suggested fix works: the space with it applied has no problem left.
TEST(SpaceChecksTest, TheFixOfABucketAfterACatchAllWorks) {
  // Neither has a 'when': moving 'n=1M' first would only shadow 'n=20M', so that is not the
  // advice; a 'when' for the first one that tells the two shapes apart is.
  const std::string one = "[[buckets]]\nname = \"n=1M\"\nshape = { n = 1000000 }\n";
  EXPECT_EQ(problems("[[buckets]]\nname = \"n=20M\"\nshape = { n = 20000000 }\n\n" + one),
            std::vector<std::string>{
                "s.toml:12:1: error: bucket 'n=1M' is never selected: bucket 'n=20M' (line 8) "
                "before it has no 'when' and takes every shape: give 'n=20M' a 'when' that holds "
                "for its own shape (n=20000000) but not for that of 'n=1M' (n=1000000), for "
                "example when = \"n > 1000000\" (only the last bucket may go without a "
                "'when')"});
  EXPECT_TRUE(problems("[[buckets]]\nname = \"n=20M\"\nwhen = \"n > 1000000\"\n"
                       "shape = { n = 20000000 }\n\n" +
                       one)
                  .empty());
  // Moving the second one first (neither has a 'when') only shadows the other one.
  EXPECT_EQ(problems(one + "\n[[buckets]]\nname = \"n=20M\"\nshape = { n = 20000000 }\n").size(),
            1u);
  // A smaller shape first: the example reads '<'.
  EXPECT_NE(problems("[[buckets]]\nname = \"a\"\nshape = { n = 4 }\n\n"
                     "[[buckets]]\nname = \"b\"\nshape = { n = 64 }\n")[0]
                .find("for example when = \"n < 64\""),
            std::string::npos);
}

TEST(SpaceChecksTest, TheFixOfAShadowedBucketWhoseWhenTakesTheOtherShapeWorks) {
  // 'mid' takes n=8 too: moved first it would shadow 'big'; narrowing 'big' is the fix.
  const std::string mid = "[[buckets]]\nname = \"mid\"\nwhen = \"n >= 1\"\nshape = { n = 4 }\n";
  EXPECT_EQ(problems("[[buckets]]\nname = \"big\"\nwhen = \"n >= 2\"\nshape = { n = 8 }\n\n" + mid),
            std::vector<std::string>{
                "s.toml:13:1: error: bucket 'mid' is shadowed: its own shape (n=4) selects "
                "bucket 'big' (line 8, when 'n >= 2'), which comes first, so its winner would "
                "never run for the shape it is tuned on: narrow the 'when' of 'big' so that it "
                "no longer takes the shape of 'mid' (n=4), for example when = \"(n >= 2) && n > "
                "4\""});
  EXPECT_TRUE(problems("[[buckets]]\nname = \"big\"\nwhen = \"(n >= 2) && n > 4\"\n"
                       "shape = { n = 8 }\n\n" +
                       mid)
                  .empty());
}

TEST(SpaceChecksTest, TwoBucketsOfOneShape) {
  EXPECT_EQ(problems("[[buckets]]\nname = \"a\"\nshape = { n = 4 }\n\n"
                     "[[buckets]]\nname = \"b\"\nshape = { n = 4 }\n"),
            std::vector<std::string>{
                "s.toml:12:1: error: bucket 'b' is never selected: bucket 'a' (line 8) before it "
                "has no 'when' and takes every shape: the two shapes agree on every name they "
                "share (n=4 and n=4): give 'b' a shape of its own or remove one of them"});
}

}  // namespace
}  // namespace tune
