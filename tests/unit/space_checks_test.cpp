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

}  // namespace
}  // namespace tune
