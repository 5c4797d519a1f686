// The paired bench of the runoff (bench_paired) on a real device (label gpu), with the kernels of
// kernels/test_kernels.cu (TUNE_GPU_TEST_CUBIN): both arms timed pair by pair, the pair count
// from the rep budget, batching of short kernels, and a decision on a built-in 2x gap.
#include <tuner/core/search/runoff.hpp>
#include <tuner/cuda/bench.hpp>
#include <tuner/cuda/harness.hpp>
#include <tuner/cuda/module.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_context.hpp"

namespace tune {
namespace {

using test::ctx;

std::shared_ptr<Module> test_module() {
  return load_module(ctx(), "runoff-gpu-test", TUNE_GPU_TEST_CUBIN);
}

// scale_vector over `n` floats: memory bound, so twice the elements is about twice the time.
Launch scale_launch(long long n) {
  Function f = test_module()->function("scale_vector");
  DeviceBuffer<float> x(n), y(n);
  std::mt19937_64 rng(7);
  x.fill_random(rng);
  const auto grid = static_cast<unsigned>((n + 255) / 256);
  return [=](CUstream s) { f.launch(grid, 256, 0, s, y, x, 2.0f, n); };
}

void expect_paired(const PairedBenchResult& r) {
  ASSERT_EQ(r.a_ms.size(), static_cast<std::size_t>(r.pairs));
  ASSERT_EQ(r.b_ms.size(), static_cast<std::size_t>(r.pairs));
  for (std::size_t i = 0; i < r.a_ms.size(); ++i) {
    EXPECT_TRUE(std::isfinite(r.a_ms[i]) && r.a_ms[i] > 0) << r.a_ms[i];
    EXPECT_TRUE(std::isfinite(r.b_ms[i]) && r.b_ms[i] > 0) << r.b_ms[i];
  }
}

TEST(RunoffGpuTest, TimesBothArmsPairByPairAndSeesAGap) {
  const Launch small = scale_launch(1LL << 22);
  const Launch large = scale_launch(1LL << 23);
  BenchOptions options;
  PairedBenchResult r = bench_paired(ctx(), small, large, ctx().stream(), options);
  expect_paired(r);
  EXPECT_GE(r.pairs, 20);
  EXPECT_LE(r.pairs, options.max_reps);
  EXPECT_FALSE(r.batched);
  RunoffStats s = decide_runoff(r.a_ms, r.b_ms, RunoffPolicy{}, "small", "large");
  EXPECT_EQ(s.outcome, RunoffOutcome::incumbent_wins);
  EXPECT_EQ(s.winner, "small");
  EXPECT_GT(s.median_diff_pct, 50);
  std::printf("runoff small vs large: %d pairs, %+.1f%%, p=%.3g\n", s.pairs, s.median_diff_pct,
              s.p_value);
  for (const auto& w : r.warnings)
    std::printf("bench warning: %s\n", w.c_str());
}

TEST(RunoffGpuTest, PairCountComesFromTheRepBudgetWithAtLeastTwenty) {
  const Launch a = scale_launch(1LL << 20);
  BenchOptions few;
  few.min_reps = 5;
  few.max_reps = 1000;
  few.rep_ms = 0.001;  // would ask for one pair: at least 20
  EXPECT_EQ(bench_paired(ctx(), a, a, ctx().stream(), few).pairs, 20);
  BenchOptions capped;
  capped.min_reps = 5;
  capped.max_reps = 30;
  capped.rep_ms = 1000;  // would ask for thousands
  EXPECT_EQ(bench_paired(ctx(), a, a, ctx().stream(), capped).pairs, 30);
  PairedBenchResult r = bench_paired(ctx(), a, a, ctx().stream(), capped, 7);
  EXPECT_EQ(r.pairs, 7);
  expect_paired(r);
}

TEST(RunoffGpuTest, BatchesBothArmsWhenOneIsShort) {
  Function tiny = test_module()->function("tiny");
  DeviceBuffer<int> out(32);
  const Launch short_arm = [=](CUstream s) { tiny.launch(1, 32, 0, s, out); };
  const Launch long_arm = scale_launch(1LL << 16);
  PairedBenchResult r = bench_paired(ctx(), short_arm, long_arm, ctx().stream(), BenchOptions{});
  expect_paired(r);
  EXPECT_TRUE(r.batched);
  EXPECT_GE(r.batch_size, 2);
  std::printf("runoff tiny vs scale_vector 64K: batched x%d, %d pairs\n", r.batch_size, r.pairs);
}

TEST(RunoffGpuTest, AFailingClosureThrows) {
  const Launch good = scale_launch(1LL << 16);
  const Launch bad = [](CUstream) { throw std::runtime_error("launch refused"); };
  try {
    bench_paired(ctx(), good, bad, ctx().stream(), BenchOptions{});
    ADD_FAILURE() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "launch refused");
  }
}

}  // namespace
}  // namespace tune
