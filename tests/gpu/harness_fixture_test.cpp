// The fixture example harness (example/saxpy_fixture_harness.cpp) driven as the runner drives
// it: prepare once per bucket, then for every candidate the declared resets and the setup with
// the fixture. Also: a writable input restored between candidates, the first candidate's module
// in prepare, and a block over the function's own limit refused before launching.
#include <tuner/cuda/bench.hpp>
#include <tuner/cuda/harness.hpp>
#include <tuner/cuda/module.hpp>

#include <memory>
#include <random>
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

TEST(HarnessFixtureTest, ABlockTheFunctionDoesNotAllowIsRefusedBeforeLaunching) {
  // saxpy.cu is built with BLOCK=128 and __launch_bounds__(BLOCK): a block of 256 threads is
  // over the function's own limit. The launch is refused as a launch_error (the candidate is
  // invalid, the worker goes on), not a CUDA error (which ends the worker).
  auto module = load_module(ctx(), "saxpy-example", TUNE_GPU_SAXPY_CUBIN);
  Function saxpy = module->function("saxpy");
  const FunctionAttributes a = saxpy.attributes();
  ASSERT_EQ(a.max_threads_per_block, 128);
  const int n = 1 << 16;
  DeviceBuffer<float> x(n), y(n), out(n);
  std::mt19937_64 rng(1);
  x.fill_random(rng);
  y.fill_random(rng);
  try {
    saxpy.launch(n / 512, 256, 0, ctx().stream(), n, 2.0f, x, y, out);
    ADD_FAILURE() << "a block over the function's limit was launched";
  } catch (const cuda_error& e) {
    ADD_FAILURE() << "a CUDA error instead of a refusal: " << e.what();
  } catch (const launch_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "launch of 'saxpy' refused: a block of 256 threads (256x1x1) is more than the 128 "
              "that 'saxpy' allows (it uses " +
                  std::to_string(a.registers) +
                  " registers per thread; they and its __launch_bounds__ set that limit)");
  }
  // More shared memory than a block may have on the device, and a grid too tall.
  EXPECT_THROW(saxpy.launch(1, 128, std::size_t{1} << 30, ctx().stream(), n, 2.0f, x, y, out),
               launch_error);
  EXPECT_THROW(saxpy.launch(Dim3(1, 1u << 20), 128, 0, ctx().stream(), n, 2.0f, x, y, out),
               launch_error);
  // Nothing was queued and the context is fine: the allowed block runs and is right.
  saxpy.launch(n / 256, 128, 0, ctx().stream(), n, 2.0f, x, y, out);
  const std::vector<float> hx = x.download(), hy = y.download(), got = out.download();
  for (int i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(got[i], 2.0f * hx[i] + hy[i]) << i;
}

}  // namespace
}  // namespace tune
