// The fixture example harness (example/saxpy_fixture_harness.cpp) driven as the runner drives
// it: prepare once per bucket, then for every candidate the declared resets and the setup with
// the fixture. Also: a writable input restored between candidates, and the first candidate's
// module in prepare.
#include <tuner/cuda/bench.hpp>
#include <tuner/cuda/harness.hpp>
#include <tuner/cuda/module.hpp>

#include <memory>
#include <string>
#include <vector>

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

TEST(HarnessFixtureTest, PrepareGetsTheFirstCandidatesModule) {
  // The runner's BucketContext carries the module of the bucket's first candidate: prepare can
  // launch a kernel of it (here saxpy itself, as a reference kernel would be) once per bucket.
  auto module = load_module(ctx(), "saxpy-example", TUNE_GPU_SAXPY_CUBIN);
  BucketContext bucket(ctx(), module, "n", Shape{{"N", 4096}}, ctx().stream());
  ASSERT_TRUE(bucket.has_module());
  EXPECT_EQ(&bucket.module(), module.get());
  const std::int64_t n = 4096;
  DeviceBuffer<float> x(n), y(n), out(n);
  const std::vector<float> hx = x.fill_random(bucket.rng()), hy = y.fill_random(bucket.rng());
  // saxpy.cu with BLOCK=128, ITEMS=2: 256 values per block.
  bucket.module().function("saxpy").launch(static_cast<unsigned>(n / 256), 128, 0, bucket.stream(),
                                           static_cast<int>(n), 2.0f, x, y, out);
  bucket.sync();
  std::vector<double> expected(hx.size());
  for (std::size_t i = 0; i < hx.size(); ++i)
    expected[i] = 2.0 * hx[i] + hy[i];
  EXPECT_NO_THROW(check_close(out.download(), expected, 1e-6, "out"));
  // A context built without one (as tests do) says so.
  BucketContext bare(ctx(), "n", Shape{{"N", 1}}, ctx().stream());
  EXPECT_FALSE(bare.has_module());
  try {
    bare.module();
    ADD_FAILURE() << "module() of a context without one";
  } catch (const error& e) {
    EXPECT_STREQ(e.what(), "the context of bucket 'n' has no module (it was built without one)");
  }
}

}  // namespace
}  // namespace tune
