// The CUDA backend on a real device (label gpu): timing, batching, the kernel cache, globals
// per module, eviction under a queued launch, dynamic shared memory. The kernels are in
// kernels/test_kernels.cu, compiled to TUNE_GPU_TEST_CUBIN at build time.
#include <tuner/cuda/bench.hpp>
#include <tuner/cuda/driver.hpp>
#include <tuner/cuda/harness.hpp>
#include <tuner/cuda/module.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "test_context.hpp"

#include <tuner/core/base/hash.hpp>
#include <tuner/core/build/kernel_cache.hpp>

namespace tune {
namespace {

namespace fs = std::filesystem;

#define EXPECT_THROW_MSG(statement, type, message) \
  do {                                             \
    try {                                          \
      statement;                                   \
      ADD_FAILURE() << "expected " #type;          \
    } catch (const type& e) {                      \
      EXPECT_EQ(std::string(e.what()), message);   \
    }                                              \
  } while (0)

using test::ctx;

const fs::path cubin = TUNE_GPU_TEST_CUBIN;

std::mt19937_64& rng() {
  static std::mt19937_64 generator(20261129);
  return generator;
}

std::shared_ptr<Module> test_module(const std::string& key) {
  return load_module(ctx(), key, cubin);
}

unsigned blocks_for(long long n, unsigned block) {
  return static_cast<unsigned>(std::min<long long>((n + block - 1) / block, 65535));
}

void expect_sane(const BenchResult& r, const BenchOptions& o) {
  EXPECT_GE(r.reps, o.min_reps);
  EXPECT_LE(r.reps, o.max_reps);
  EXPECT_EQ(r.samples_ms.size(), static_cast<std::size_t>(r.reps));
  for (double s : r.samples_ms)
    EXPECT_TRUE(std::isfinite(s) && s > 0) << s;
  EXPECT_TRUE(std::isfinite(r.median_ms));
  EXPECT_GT(r.min_ms, 0);
  EXPECT_LE(r.min_ms, r.median_ms);
  EXPECT_LE(r.p10_ms, r.median_ms);
  EXPECT_LE(r.median_ms, r.p90_ms);
  for (const auto& w : r.warnings)
    std::printf("bench warning: %s\n", w.c_str());
}

// ---------------------------------------------------------------------------------------------
// The device

TEST(DriverGpuTest, ContextReportsTheDevice) {
  Context& c = ctx();
  EXPECT_FALSE(c.name().empty());
  EXPECT_EQ(c.arch().rfind("sm_", 0), 0u);
  EXPECT_GT(c.l2_bytes(), 0u);
  EXPECT_GT(c.multiprocessors(), 0);
  std::printf("device %d: %s (%s), %d SMs, L2 %zu bytes, driver %d\n", c.index(), c.name().c_str(),
              c.arch().c_str(), c.multiprocessors(), c.l2_bytes(), driver().version);
}

TEST(DriverGpuTest, AMissingDeviceIndexIsAClearError) {
  int count = 0;
  TUNE_CU(driver().cuDeviceGetCount(&count));
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string env = visible ? "CUDA_VISIBLE_DEVICES='" + std::string(visible) + "'"
                                  : "CUDA_VISIBLE_DEVICES unset";
  EXPECT_THROW_MSG(Context missing(count), error,
                   "no CUDA device: --device " + std::to_string(count) + " requested, but " +
                       std::to_string(count) + (count == 1 ? " device is" : " devices are") +
                       " visible (" + env + ")");
}

// ---------------------------------------------------------------------------------------------
// Timing

TEST(BenchGpuTest, TimesARealKernel) {
  auto module = test_module("bench-real");
  Function f = module->function("scale_vector");
  const long long n = 1LL << 25;  // 128 MiB per buffer: well past the L2
  DeviceBuffer<float> x(n), y(n);
  x.fill_random(rng());
  const unsigned grid = blocks_for(n, 256);
  Launch launch = [=](CUstream s) { f.launch(grid, 256, 0, s, y, x, 2.0f, n); };
  BenchOptions options;
  BenchResult r = bench(ctx(), launch, ctx().stream(), options);
  expect_sane(r, options);
  EXPECT_FALSE(r.batched);
  EXPECT_EQ(r.batch_size, 1);
  // 256 MiB moved: tens of microseconds at least on any GPU with that much memory bandwidth.
  EXPECT_GT(r.median_ms, 0.02);
  std::printf("scale_vector n=%lld: median %.4f ms, min %.4f, p10 %.4f, p90 %.4f, %d reps\n", n,
              r.median_ms, r.min_ms, r.p10_ms, r.p90_ms, r.reps);
}

TEST(BenchGpuTest, RepsStayWithinTheLimits) {
  auto module = test_module("bench-real");
  Function f = module->function("scale_vector");
  const long long n = 1LL << 22;
  DeviceBuffer<float> x(n), y(n);
  x.fill_random(rng());
  Launch launch = [=](CUstream s) { f.launch(blocks_for(n, 256), 256, 0, s, y, x, 2.0f, n); };
  BenchOptions few;
  few.min_reps = 7;
  few.max_reps = 9;
  few.rep_ms = 1000;  // would ask for far more than 9
  expect_sane(bench(ctx(), launch, ctx().stream(), few), few);
  BenchOptions many;
  many.min_reps = 40;
  many.max_reps = 50;
  many.rep_ms = 0.001;  // would ask for fewer than 40
  BenchResult r = bench(ctx(), launch, ctx().stream(), many);
  expect_sane(r, many);
  EXPECT_EQ(r.reps, 40);
}

TEST(BenchGpuTest, BatchesAMicrosecondKernel) {
  auto module = test_module("bench-tiny");
  Function f = module->function("tiny");
  DeviceBuffer<int> out(32);
  out.poison();
  Launch launch = [=](CUstream s) { f.launch(1, 32, 0, s, out); };
  BenchOptions options;
  BenchResult r = bench(ctx(), launch, ctx().stream(), options);
  expect_sane(r, options);
  EXPECT_TRUE(r.batched);
  EXPECT_GE(r.batch_size, 2);
  EXPECT_LE(r.batch_size, options.max_batch);
  EXPECT_LT(r.median_ms, options.batch_below_ms);
  std::vector<int> host = out.download();
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(host[i], i + 1);
  std::printf("tiny: batched x%d, median %.5f ms per launch, min %.5f, %d reps\n", r.batch_size,
              r.median_ms, r.min_ms, r.reps);

  BenchOptions single = options;
  single.batching = BenchOptions::Batching::never;
  BenchResult s = bench(ctx(), launch, ctx().stream(), single);
  expect_sane(s, single);
  EXPECT_FALSE(s.batched);
  std::printf("tiny: unbatched median %.5f ms\n", s.median_ms);
}

// ---------------------------------------------------------------------------------------------
// The kernel cache and the in-memory module cache

class CacheGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tune_gpu_cache_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    bytes_ = read_file(cubin);
    key_ = sha256_hex(bytes_ + "gpu-test");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Stores `bytes` as the cubin of `key`, with an entry claiming `claimed`'s digest.
  void store(const std::string& key, const std::string& bytes, const std::string& claimed) {
    std::ofstream(dir_ / (key + ".cubin"), std::ios::binary) << bytes;
    CacheEntry entry;
    entry.key = key;
    entry.arch = ctx().arch();
    entry.config_id = "gpu-test";
    entry.cubin_sha256 = sha256_hex(claimed);
    const nlohmann::json j = entry;
    std::ofstream(dir_ / (key + ".json")) << j.dump();
  }

  fs::path dir_;
  std::string bytes_;
  std::string key_;
};

TEST_F(CacheGpuTest, LoadsFromTheCacheOnce) {
  store(key_, bytes_, bytes_);
  const std::size_t loads = kernel_cache_loads();
  auto a = load_kernel(ctx(), dir_, key_);
  auto b = load_kernel(ctx(), dir_, key_);
  EXPECT_EQ(a, b);
  EXPECT_EQ(kernel_cache_loads(), loads + 1);
  FunctionAttributes attrs = a->function("scale_vector").attributes();
  EXPECT_GT(attrs.registers, 0);
  EXPECT_EQ(attrs.static_shared_bytes, 0);
  EXPECT_EQ(attrs.binary_version, ctx().cc_major() * 10 + ctx().cc_minor());
  EXPECT_TRUE(evict_kernel(key_));
}

TEST_F(CacheGpuTest, RefusesACorruptedEntry) {
  std::string corrupted = bytes_;
  corrupted[corrupted.size() / 2] ^= 0x01;
  store(key_, corrupted, bytes_);
  const std::size_t size = kernel_cache_size();
  EXPECT_THROW_MSG(load_kernel(ctx(), dir_, key_), error,
                   "kernel cache miss for '" + key_ + "' in '" + dir_.string() +
                       "': cubin SHA-256 is " + sha256_hex(corrupted) + ", the entry says '" +
                       sha256_hex(bytes_) + "' (run the warm target to compile it)");
  EXPECT_EQ(kernel_cache_size(), size);  // a miss caches nothing
  // Repaired, the same key loads.
  store(key_, bytes_, bytes_);
  EXPECT_NE(load_kernel(ctx(), dir_, key_), nullptr);
  EXPECT_TRUE(evict_kernel(key_));
}

TEST_F(CacheGpuTest, ConcurrentLoadsLoadOnce) {
  store(key_, bytes_, bytes_);
  const std::size_t loads = kernel_cache_loads();
  std::vector<std::shared_ptr<Module>> got(8);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] { got[i] = load_kernel(ctx(), dir_, key_); });
  }
  for (auto& t : threads)
    t.join();
  for (const auto& m : got)
    EXPECT_EQ(m, got[0]);
  EXPECT_EQ(kernel_cache_loads(), loads + 1);
  EXPECT_TRUE(evict_kernel(key_));
}

TEST(ModuleGpuTest, ConstantsAndGlobalsArePerModule) {
  auto a = test_module("constant-a");
  auto b = test_module("constant-b");  // the same cubin, loaded as another module
  ASSERT_NE(a, b);
  a->global("scale").upload(2.0f);
  b->global("scale").upload(3.0f);
  a->global("launches").upload(0);
  b->global("launches").upload(0);
  const int n = 1000;
  DeviceBuffer<float> out_a(n), out_b(n);
  out_a.poison();
  out_b.poison();
  a->function("constant_scale").launch(blocks_for(n, 128), 128, 0, ctx().stream(), out_a, n);
  b->function("constant_scale").launch(blocks_for(n, 128), 128, 0, ctx().stream(), out_b, n);
  b->function("constant_scale").launch(blocks_for(n, 128), 128, 0, ctx().stream(), out_b, n);
  std::vector<float> ha = out_a.download(), hb = out_b.download();
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(ha[i], 2.0f * static_cast<float>(i)) << i;
    ASSERT_EQ(hb[i], 3.0f * static_cast<float>(i)) << i;
  }
  EXPECT_EQ(a->global("launches").download<int>(), 1);
  EXPECT_EQ(b->global("launches").download<int>(), 2);
  EXPECT_EQ(a->global("scale").bytes, sizeof(float));
  EXPECT_THROW_MSG(a->global("no_such"), error, "module 'constant-a' has no global 'no_such'");
  EXPECT_THROW_MSG(a->function("no_such"), error, "module 'constant-a' has no function 'no_such'");
  EXPECT_THROW_MSG(a->global("scale").upload(1.0), error,
                   "upload of 8 bytes into a global of 4 bytes");
  EXPECT_EQ(retain_kernels([](std::string_view key) { return key.rfind("constant-", 0) != 0; }),
            2u);
}

TEST(ModuleGpuTest, EvictionWaitsForAQueuedLaunch) {
  CUstream stream = ctx().stream();
  DeviceBuffer<int> out(2);
  out.poison();
  Function spin_write;
  {
    auto module = test_module("evict-me");
    spin_write = module->function("spin_then_write");
  }
  // A 200 ms spin kernel in front, then this module's own 50 ms launch queued behind it.
  spin(ctx(), stream, 200);
  spin_write.launch(1, 1, 0, stream, out, 50'000'000ULL, 42);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(evict_kernel("evict-me"));
  const double evict_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // Eviction returned only once the launch had completed.
  EXPECT_GE(evict_ms, 150.0);
  EXPECT_EQ(driver().cuStreamQuery(stream), CUDA_SUCCESS);
  EXPECT_FALSE(evict_kernel("evict-me"));
  EXPECT_EQ(out.download()[0], 42);
  // The handle still holds the module: it stays loaded and usable until the handle goes.
  spin_write.launch(1, 1, 0, stream, out, 1000ULL, 7);
  EXPECT_EQ(out.download()[0], 7);
  // Dropping the last handle while a launch is queued unloads only after it completes.
  spin(ctx(), stream, 100);
  spin_write.launch(1, 1, 0, stream, out, 1000ULL, 9);
  spin_write = Function();
  EXPECT_EQ(driver().cuStreamQuery(stream), CUDA_SUCCESS);
  EXPECT_EQ(out.download()[0], 9);
}

TEST(ModuleGpuTest, ClearAndRetainCountWhatWent) {
  clear_kernel_cache();
  for (const char* key : {"keep-1", "keep-2", "drop-1"})
    test_module(key);
  EXPECT_EQ(kernel_cache_size(), 3u);
  EXPECT_EQ(retain_kernels([](std::string_view key) { return key.rfind("keep-", 0) == 0; }), 1u);
  EXPECT_EQ(kernel_cache_size(), 2u);
  EXPECT_EQ(clear_kernel_cache(), 2u);
  EXPECT_EQ(kernel_cache_size(), 0u);
  // Loaded again after eviction: a fresh load.
  const std::size_t loads = kernel_cache_loads();
  test_module("keep-1");
  EXPECT_EQ(kernel_cache_loads(), loads + 1);
  EXPECT_EQ(clear_kernel_cache(), 1u);
}

TEST(ModuleGpuTest, DynamicSharedMemoryAbove48KiB) {
  auto module = test_module("dynamic-shared");
  Function f = module->function("reverse_in_shared");
  const int n = 24 * 1024;  // 96 KiB of floats
  const std::size_t bytes = n * sizeof(float);
  ASSERT_GT(bytes, 48u * 1024);
  DeviceBuffer<float> in(n), out(n);
  std::vector<float> host = in.fill_random(rng());
  out.poison();
  f.launch(1, 256, bytes, ctx().stream(), out, in, n);
  std::vector<float> got = out.download();
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(got[i], host[n - 1 - i]) << i;
  EXPECT_GE(f.attributes().max_dynamic_shared_bytes, static_cast<int>(bytes));
}

TEST(ModuleGpuTest, ALaunchErrorNamesTheKernel) {
  auto module = test_module("launch-error");
  Function f = module->function("tiny");
  DeviceBuffer<int> out(4096);
  // A block over the device's limit is refused before the launch (Function::launch checks the
  // function's limits), naming the kernel and the limit.
  EXPECT_THROW_MSG(f.launch(1, 4096, 0, ctx().stream(), out), launch_error,
                   "launch of 'tiny' refused: block dimension x of 4096 is more than the "
                   "device's 1024");
}

}  // namespace
}  // namespace tune
