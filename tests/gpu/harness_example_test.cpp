// The example harness (example/saxpy_harness.cpp) linked into a program, as a runner links
// one: the runner's side of the harness API. The saxpy cubin is compiled at build time with
// BLOCK=128 ITEMS=2 (TUNE_GPU_SAXPY_CUBIN).
#include <tuner/cuda/bench.hpp>
#include <tuner/cuda/harness.hpp>
#include <tuner/cuda/module.hpp>

#include <string>

#include <gtest/gtest.h>

#include "test_context.hpp"

namespace tune {
namespace {

using test::ctx;

// What a runner does per candidate: load its module, build the setup context, call setup.
Launch setup_candidate(const Config& config, std::int64_t n) {
  auto module = load_module(ctx(), "saxpy-example", TUNE_GPU_SAXPY_CUBIN);
  SetupContext setup(ctx(), module, "saxpy", "n=2^24", Shape{{"N", n}}, config, ctx().stream());
  return harness().setup(setup);
}

TEST(HarnessExampleTest, TheHarnessIsLinkedIn) {
  EXPECT_EQ(std::string(harness().name), "setup");
  EXPECT_NE(std::string(harness().file).find("saxpy_harness.cpp"), std::string::npos);
}

TEST(HarnessExampleTest, SetupChecksAndReturnsATimeableLaunch) {
  // The config the cubin was compiled for: the gate passes and the closure can be timed.
  Launch launch = setup_candidate(Config{{"BLOCK", 128}, {"ITEMS", 2}}, std::int64_t{1} << 24);
  ASSERT_TRUE(launch);
  BenchOptions options;
  BenchResult r = bench(ctx(), launch, ctx().stream(), options);
  EXPECT_GE(r.reps, options.min_reps);
  EXPECT_LE(r.min_ms, r.median_ms);
  std::printf("saxpy n=2^24: median %.4f ms, min %.4f ms, %d reps%s\n", r.median_ms, r.min_ms,
              r.reps, r.batched ? " (batched)" : "");
}

TEST(HarnessExampleTest, TheGateCatchesAWrongLaunch) {
  // Params that disagree with the compiled ones (ITEMS=4 launches half the blocks needed): the
  // poisoned output keeps NaNs and the check refuses the candidate with the first of them.
  try {
    setup_candidate(Config{{"BLOCK", 128}, {"ITEMS", 4}}, 1000);
    ADD_FAILURE() << "expected check_error";
  } catch (const check_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("'out' is wrong: relative error nan exceeds 1e-06 "
                                          "(worst at index 512: got nan, expected ",
                                          0),
              0u)
        << e.what();
  }
  // A missing shape value names what the bucket has.
  try {
    auto module = load_module(ctx(), "saxpy-example", TUNE_GPU_SAXPY_CUBIN);
    SetupContext setup(ctx(), module, "saxpy", "small", Shape{{"M", 10}},
                       Config{{"BLOCK", 128}, {"ITEMS", 2}}, ctx().stream());
    harness().setup(setup);
    ADD_FAILURE() << "expected error";
  } catch (const harness_error& e) {
    // The harness's line that asked (line 11 reads ctx.shape().int_("N")), then what the
    // bucket has.
    EXPECT_EQ(std::string(e.what()),
              "saxpy_harness.cpp:11: shape of bucket 'small' has no value 'N' (it has: M)");
  }
}

}  // namespace
}  // namespace tune
