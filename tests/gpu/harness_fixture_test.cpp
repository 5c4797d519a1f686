// The fixture example harness (example/saxpy_fixture_harness.cpp) driven as the runner drives
// it: prepare once per bucket, then for every candidate the declared resets and the setup with
// the fixture. Also: a writable input restored between candidates.
#include <tuner/cuda/bench.hpp>
#include <tuner/cuda/harness.hpp>
#include <tuner/cuda/module.hpp>

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "test_context.hpp"

namespace tune {
namespace {

using test::ctx;

struct Bucket {
  std::shared_ptr<void> fixture;
  std::vector<std::function<void()>> resets;
};

Bucket prepare(std::int64_t n) {
  BucketContext bucket(ctx(), "n", Shape{{"N", n}}, ctx().stream());
  Bucket b;
  b.fixture = harness().prepare(bucket);
  b.resets = bucket.take_resets();
  return b;
}

Launch setup_candidate(const Bucket& b, const Config& config) {
  auto module = load_module(ctx(), "saxpy-example", TUNE_GPU_SAXPY_CUBIN);
  SetupContext setup(ctx(), module, "saxpy", "n", Shape{{"N", 1}}, config, ctx().stream());
  for (const auto& reset : b.resets)
    reset();
  return harness().setup_with(setup, b.fixture.get());
}

TEST(HarnessFixtureTest, OneFixtureServesEveryCandidate) {
  ASSERT_NE(harness().prepare, nullptr);
  EXPECT_EQ(harness().setup, nullptr);
  const Bucket b = prepare(std::int64_t{1} << 24);
  const Config good{{"BLOCK", 128}, {"ITEMS", 2}};
  for (int candidate = 0; candidate < 3; ++candidate) {
    Launch launch = setup_candidate(b, good);
    ASSERT_TRUE(launch);
    BenchResult r = bench(ctx(), launch, ctx().stream());
    EXPECT_GT(r.timed_ms, 0);
    EXPECT_GT(r.warmup_ms, 0);
  }
  // A wrong candidate after good ones still fails: the output was poisoned for it.
  EXPECT_THROW(setup_candidate(b, Config{{"BLOCK", 128}, {"ITEMS", 4}}), check_error);
}

TEST(HarnessFixtureTest, AWritableInputIsRestoredBeforeEachCandidate) {
  BucketContext bucket(ctx(), "n", Shape{{"N", 4}}, ctx().stream());
  DeviceBuffer<float> x(4);
  x.upload(std::vector<float>{1, 2, 3, 4});
  DeviceBuffer<float> out(4);
  bucket.writable_input(x);
  bucket.output(out);
  std::vector<std::function<void()>> resets = bucket.take_resets();
  x.upload(std::vector<float>{9, 9, 9, 9});  // a candidate wrote its input
  out.upload(std::vector<float>{5, 5, 5, 5});
  for (const auto& reset : resets)
    reset();
  EXPECT_EQ(x.download(), (std::vector<float>{1, 2, 3, 4}));
  for (float v : out.download())
    EXPECT_TRUE(std::isnan(v));
}

}  // namespace
}  // namespace tune
