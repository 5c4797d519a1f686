// The adaptive compile cap (compile_cap.hpp): none before `after` valid compiles, then max(the
// floor, the factor times the 90th percentile of the valid compiles so far); a factor of 0 is
// no cap; invalid seconds are ignored; the reason of a stopped compile is recognized.
#include <tuner/core/search/compile_cap.hpp>

#include <cmath>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tune {
namespace {

TEST(CompileCapTest, NoneBeforeEnoughCompilesThenTheFactorTimesThePercentile) {
  CompileCap cap({2.0, 3.0, 0.9, 10});
  for (int i = 1; i <= 9; ++i)
    cap.add(0.1 * i);
  EXPECT_EQ(cap.cap(), std::nullopt);
  EXPECT_EQ(cap.explain(), "no cap yet");
  cap.add(1.0);  // ten compiles: 0.1 .. 1.0 s, the 90th percentile 0.9 s
  EXPECT_DOUBLE_EQ(*cap.cap(), 2.7);
  EXPECT_EQ(cap.explain(), "max(2 s, 3 x 0.90 s, the 90th percentile of 10 compiles)");
}

TEST(CompileCapTest, TheFloorHoldsForFastCompiles) {
  CompileCap cap({10.0, 3.0, 0.9, 4});
  for (double s : {0.3, 0.4, 0.5, 0.6})
    cap.add(s);
  EXPECT_DOUBLE_EQ(*cap.cap(), 10.0);
}

TEST(CompileCapTest, AFactorOfZeroIsNoCap) {
  CompileCap cap({1.0, 0.0, 0.9, 1});
  for (int i = 0; i < 50; ++i)
    cap.add(1.0);
  EXPECT_EQ(cap.cap(), std::nullopt);
}

TEST(CompileCapTest, SecondsThatAreNoTimeAreIgnored) {
  CompileCap cap({1.0, 2.0, 0.9, 3});
  cap.add(0);
  cap.add(-1);
  cap.add(std::nan(""));
  cap.add(INFINITY);
  EXPECT_EQ(cap.cap(), std::nullopt);
  cap.add(1);
  cap.add(1);
  cap.add(4);
  EXPECT_DOUBLE_EQ(*cap.cap(), 8.0);
}

TEST(CompileCapTest, CompileThreadsAddAtOnce) {
  CompileCap cap({0.0, 1.0, 0.9, 1});
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        cap.add(1.0);
        (void)cap.cap();
      }
    });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(cap.explain(), "max(0 s, 1 x 1.00 s, the 90th percentile of 8000 compiles)");
}

TEST(CompileCapTest, TheReasonOfAStoppedCompileIsCompileSlow) {
  const std::string reason = compile_slow_reason(12.34, "max(10 s, 3 x 2.00 s, ...)");
  EXPECT_TRUE(is_compile_slow(reason));
  EXPECT_EQ(reason,
            "compile_slow: the compile was stopped after 12.3 s by the adaptive compile cap, "
            "max(10 s, 3 x 2.00 s, ...); a tune that measures every candidate ([search] without "
            "budget_s, max_evals or patience) or compile_cap_factor = 0 compiles it in full");
  EXPECT_FALSE(is_compile_slow("the compile ran longer than the compile timeout of 600 s"));
}

}  // namespace
}  // namespace tune
