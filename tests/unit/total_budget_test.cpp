// TotalBudget (tuner/core/tune/total_budget.hpp): a whole tune's budget split across its stale
// buckets as they start, with a clock the test turns.
#include <tuner/core/tune/total_budget.hpp>

#include <gtest/gtest.h>

namespace tune {
namespace {

TEST(TotalBudget, EachBucketGetsAnEqualShareOfWhatIsLeft) {
  double now = 100;
  TotalBudget total(600, 3, [&] { return now; });
  EXPECT_DOUBLE_EQ(total.next_bucket(std::nullopt), 200);
  now += 50;  // the first bucket used 50 s of its 200: the rest goes to the others
  EXPECT_DOUBLE_EQ(total.next_bucket(std::nullopt), 275);
  now += 275;
  EXPECT_DOUBLE_EQ(total.next_bucket(std::nullopt), 275);
  EXPECT_EQ(total.buckets_left(), 0u);
}

TEST(TotalBudget, ABucketsOwnBudgetCapsItsShare) {
  double now = 0;
  TotalBudget total(900, 3, [&] { return now; });
  EXPECT_DOUBLE_EQ(total.next_bucket(60.0), 60);
  now += 60;
  EXPECT_DOUBLE_EQ(total.next_bucket(std::nullopt), 420);  // (900 - 60) / 2
}

TEST(TotalBudget, ASpentBudgetGivesNothingAndAnExtraBucketShares) {
  double now = 0;
  TotalBudget total(100, 1, [&] { return now; });
  now += 150;
  EXPECT_DOUBLE_EQ(total.left_s(), 0);
  EXPECT_DOUBLE_EQ(total.next_bucket(30.0), 0);
  EXPECT_DOUBLE_EQ(total.next_bucket(std::nullopt), 0);  // more buckets than counted: no crash
}

}  // namespace
}  // namespace tune
