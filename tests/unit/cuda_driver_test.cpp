// The CUDA backend's host side, on a machine with no GPU (and none needed): the missing-driver
// path, the error text of TUNE_CU, the spin kernel's PTX, the kernel cache entry check, and the
// harness helpers that run on the host (values by name, relative error, quantiles).
#include <tuner/cuda/bench.hpp>
#include <tuner/cuda/driver.hpp>
#include <tuner/cuda/harness.hpp>
#include <tuner/cuda/module.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/hash.hpp>
#include <tuner/core/build/kernel_cache.hpp>

namespace tune {
namespace {

namespace fs = std::filesystem;

// Runs `statement` and expects a std::exception of type `type` whose what() is `message`.
#define EXPECT_THROW_MSG(statement, type, message) \
  do {                                             \
    try {                                          \
      statement;                                   \
      ADD_FAILURE() << "expected " #type;          \
    } catch (const type& e) {                      \
      EXPECT_EQ(std::string(e.what()), message);   \
    }                                              \
  } while (0)

// ---------------------------------------------------------------------------------------------
// The driver at run time

TEST(CudaDriverTest, MissingDriverIsOneClearError) {
  // Even where a driver exists, TUNE_LIBCUDA points the loader at a file that does not.
  ::setenv("TUNE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  const std::string expected =
      "no CUDA driver: /nonexistent/libcuda.so.1 not found (is the NVIDIA driver installed?)";
  EXPECT_THROW_MSG(driver(), error, expected);
  // Every later use reports the same error, also through a Context.
  EXPECT_THROW_MSG(driver(), error, expected);
  EXPECT_THROW_MSG(Context ctx(0), error, expected);
  ::unsetenv("TUNE_LIBCUDA");
}

TEST(CudaDriverTest, DefaultLibraryName) {
  // Without the override the loader asks for libcuda.so.1 by name. On a machine without a
  // driver that is the documented message; where a driver exists, it loads.
  try {
    detail::load_driver("libcuda.so.1");
  } catch (const error& e) {
    EXPECT_EQ(std::string(e.what()),
              "no CUDA driver: libcuda.so.1 not found (is the NVIDIA driver installed?)");
  }
}

TEST(CudaDriverTest, LibraryWithoutTheEntryPoints) {
  EXPECT_THROW_MSG(detail::load_driver("libm.so.6"), error,
                   "no CUDA driver: libm.so.6 lacks 'cuInit' (a driver older than the CUDA " +
                       std::to_string(CUDA_VERSION / 1000) + "." +
                       std::to_string(CUDA_VERSION % 1000 / 10) + " headers tune was built with?)");
}

TEST(CudaDriverTest, ToolkitStubIsNotADriver) {
  const std::string stub = TUNE_CUDA_STUB_LIBCUDA;
  if (!fs::exists(stub)) GTEST_SKIP() << "no stub library at " << stub;
  // The stub exports every entry point (so all of them bind, versioned names included) and
  // answers cuInit with CUDA_ERROR_STUB_LIBRARY.
  auto api = detail::load_driver(stub);
  ASSERT_NE(api->cuMemAlloc, nullptr);
  ASSERT_NE(api->cuGraphInstantiate, nullptr);
  EXPECT_THROW_MSG(detail::init_driver(*api), error,
                   "no CUDA driver: " + stub +
                       " is the CUDA toolkit's stub library, not a driver (is the NVIDIA driver "
                       "installed?)");
}

TEST(CudaDriverTest, CheckCuNamesTheCallTheResultAndTheLocation) {
  EXPECT_NO_THROW(TUNE_CU(CUDA_SUCCESS));
  // Without a loaded driver the result is named by number.
  EXPECT_THROW_MSG(detail::check_cu(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc(&p, 0)", "x.cpp", 12),
                   cuda_error, "cuMemAlloc(&p, 0) failed: CUresult 1 at x.cpp:12");
  try {
    TUNE_CU(CUDA_ERROR_OUT_OF_MEMORY);
    ADD_FAILURE() << "expected cuda_error";
  } catch (const cuda_error& e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(std::string(e.what()).rfind("CUDA_ERROR_OUT_OF_MEMORY failed: CUresult 2 at ", 0), 0u)
        << e.what();
  }
}

TEST(CudaDriverTest, SpinKernelPtxAssembles) {
  // The driver JIT-compiles this PTX at run time; ptxas checks it here for the GPU we test on.
  const fs::path dir = fs::temp_directory_path() / ("tune_spin_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  { std::ofstream(dir / "spin.ptx") << spin_kernel_ptx(); }
  const std::string cmd = std::string("'") + TUNE_PTXAS + "' -arch=sm_90 '" +
                          (dir / "spin.ptx").string() + "' -o '" + (dir / "spin.cubin").string() +
                          "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  EXPECT_TRUE(fs::exists(dir / "spin.cubin"));
  fs::remove_all(dir);
}

// ---------------------------------------------------------------------------------------------
// Kernel cache entries, as the module loader re-checks them

class CacheEntryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tune_cache_entry_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write(key_ + ".cubin", cubin_);
    CacheEntry entry;
    entry.key = key_;
    entry.arch = "sm_90";
    entry.config_id = "BLOCK=128";
    entry.cubin_sha256 = sha256_hex(cubin_);
    entry_ = entry;
    write_entry();
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
  }
  void write_entry() { write(key_ + ".json", entry_.dump()); }
  std::string why() {
    std::string cubin;
    return detail::read_cache_entry(dir_, key_, cubin);
  }

  fs::path dir_;
  std::string key_ = "0123abcd";
  std::string cubin_ = std::string(
      "\x7f"
      "ELF fake cubin bytes",
      21);
  nlohmann::json entry_;
};

TEST_F(CacheEntryTest, AValidEntryYieldsItsCubin) {
  std::string cubin;
  EXPECT_EQ(detail::read_cache_entry(dir_, key_, cubin), "");
  EXPECT_EQ(cubin, cubin_);
}

TEST_F(CacheEntryTest, ACorruptedCubinIsAMiss) {
  std::string corrupted = cubin_;
  corrupted[5] ^= 0x20;
  write(key_ + ".cubin", corrupted);
  EXPECT_EQ(why(), "cubin SHA-256 is " + sha256_hex(corrupted) + ", the entry says '" +
                       sha256_hex(cubin_) + "'");
}

TEST_F(CacheEntryTest, AnEntryOfAnotherKeyIsAMiss) {
  entry_["key"] = "ffff";
  write_entry();
  EXPECT_EQ(why(), "entry names key 'ffff'");
}

TEST_F(CacheEntryTest, AnotherSchemaIsAMiss) {
  entry_["schema_version"] = 2;
  write_entry();
  EXPECT_EQ(why(), "entry has schema_version 2, expected 1");
}

TEST_F(CacheEntryTest, AnInvalidCandidateIsAMissWithItsReason) {
  entry_["status"] = "over_limit";
  entry_["reason"] = "function 'k' uses 300 registers";
  write_entry();
  EXPECT_EQ(why(), "the candidate is invalid (over_limit: function 'k' uses 300 registers)");
}

TEST_F(CacheEntryTest, AMalformedEntryIsAMiss) {
  entry_.erase("argv");
  write_entry();
  EXPECT_EQ(why(), "entry '" + (dir_ / (key_ + ".json")).string() +
                       "' is malformed ([json.exception.out_of_range.403] key 'argv' not found)");
}

TEST_F(CacheEntryTest, MissingFilesAndBadJsonAreMisses) {
  write(key_ + ".json", "{not json");
  EXPECT_EQ(why(), "entry '" + (dir_ / (key_ + ".json")).string() + "' is not valid JSON");
  write_entry();
  fs::remove(dir_ / (key_ + ".cubin"));
  EXPECT_EQ(why(), "no cubin '" + (dir_ / (key_ + ".cubin")).string() + "'");
  fs::remove(dir_ / (key_ + ".json"));
  EXPECT_EQ(why(), "no entry '" + (dir_ / (key_ + ".json")).string() + "'");
}

// ---------------------------------------------------------------------------------------------
// Host-side harness helpers

TEST(HarnessValuesTest, ReadsByNameAndNamesWhatIsMissing) {
  Values shape({{"M", 512}, {"LAYOUT", "row"}}, "shape of bucket 'm<=512'");
  EXPECT_EQ(shape.int_("M"), 512);
  EXPECT_EQ(shape.str("LAYOUT"), "row");
  EXPECT_TRUE(shape.has("M"));
  EXPECT_FALSE(shape.has("K"));
  // Each names the harness's line that asked, and is a harness_error: the same for every
  // candidate, so the tune stops the bucket on it.
  const std::string at = "cuda_driver_test.cpp:" + std::to_string(__LINE__ + 1) + ": ";
  EXPECT_THROW_MSG(shape.int_("K"), harness_error,
                   at + "shape of bucket 'm<=512' has no value 'K' (it has: M, LAYOUT)");
  const std::string at2 = "cuda_driver_test.cpp:" + std::to_string(__LINE__ + 1) + ": ";
  EXPECT_THROW_MSG(shape.int_("LAYOUT"), harness_error,
                   at2 + "shape of bucket 'm<=512': 'LAYOUT' is a string, not an int");
  const std::string at3 = "cuda_driver_test.cpp:" + std::to_string(__LINE__ + 1) + ": ";
  EXPECT_THROW_MSG(shape.str("M"), harness_error,
                   at3 + "shape of bucket 'm<=512': 'M' is an int, not a string");
}

TEST(HarnessCheckTest, RelativeError) {
  std::vector<float> ref{3, 4};
  std::vector<float> same{3, 4};
  std::vector<float> off{3, 4.5f};
  EXPECT_EQ(relative_error(std::span<const float>(same), std::span<const float>(ref)), 0.0);
  EXPECT_DOUBLE_EQ(relative_error(std::span<const float>(off), std::span<const float>(ref)), 0.1);
  // A zero reference: the absolute error.
  std::vector<double> zeros{0, 0};
  EXPECT_DOUBLE_EQ(relative_error(std::span<const float>(same), std::span<const double>(zeros)),
                   5.0);
  EXPECT_THROW_MSG(relative_error(std::span<const float>(same), std::span<const double>()), error,
                   "relative_error: output has 2 values, reference 0");
}

TEST(HarnessCheckTest, NanNeverPasses) {
  std::vector<float> ref{1, 2, 3};
  std::vector<float> out{1, std::numeric_limits<float>::quiet_NaN(), 3};
  EXPECT_TRUE(std::isnan(relative_error(std::span<const float>(out), std::span<const float>(ref))));
  EXPECT_THROW_MSG(check_close(out, ref, 1e30, "y"), check_error,
                   "'y' is wrong: relative error nan exceeds 1e+30 (worst at index 1: got nan, "
                   "expected 2; 1 of 3 values off by more than the tolerance, the first at "
                   "index 1)");
  std::vector<float> inf{1, 2, std::numeric_limits<float>::infinity()};
  EXPECT_THROW_MSG(check_close(inf, ref, 1e30, "y"), check_error,
                   "'y' is wrong: relative error nan exceeds 1e+30 (worst at index 2: got inf, "
                   "expected 3; 1 of 3 values off by more than the tolerance, the first at "
                   "index 2)");
}

TEST(HarnessCheckTest, ToleranceAndTheWorstElement) {
  std::vector<double> ref{1, 1, 1, 1};
  std::vector<float> out{1, 1.5f, 1, 1.25f};
  EXPECT_NEAR(check_close(out, ref, 0.5), std::sqrt(0.3125) / 2, 1e-12);
  EXPECT_THROW_MSG(check_close(out, ref, 1e-5), check_error,
                   "'output' is wrong: relative error 2.8e-01 exceeds 1e-05 (worst at index 1: "
                   "got 1.5, expected 1; 2 of 4 values off by more than the tolerance, the first "
                   "at index 1)");
}

TEST(LaunchLimitsTest, AGeometryOverALimitIsRefusedWithTheReason) {
  detail::LaunchLimits l;  // an H200's device limits, a function limited to 640 threads
  l.max_threads_per_block = 640;
  l.registers = 96;
  l.static_shared_bytes = 1024;
  l.max_shared_bytes = 232448;
  EXPECT_EQ(detail::launch_refusal(l, "pip", 1000, 640, 0), "");
  EXPECT_EQ(detail::launch_refusal(l, "pip", Dim3(1000, 65535), Dim3(32, 20), 231424), "");
  EXPECT_EQ(detail::launch_refusal(l, "pip", 1000, Dim3(32, 32), 0),
            "launch of 'pip' refused: a block of 1024 threads (32x32x1) is more than the 640 "
            "that 'pip' allows (it uses 96 registers per thread; they and its __launch_bounds__ "
            "set that limit)");
  EXPECT_EQ(detail::launch_refusal(l, "pip", 1000, 128, 231425),
            "launch of 'pip' refused: 231425 bytes of dynamic shared memory and 1024 of static "
            "make 232449, more than the 232448 bytes a block may have on this device");
  EXPECT_EQ(detail::launch_refusal(l, "pip", Dim3(1, 65536), 128, 0),
            "launch of 'pip' refused: grid dimension y of 65536 is more than the device's 65535");
  EXPECT_EQ(detail::launch_refusal(l, "pip", 1, Dim3(1, 1, 65), 0),
            "launch of 'pip' refused: block dimension z of 65 is more than the device's 64");
  EXPECT_EQ(detail::launch_refusal(l, "pip", 0, 128, 0),
            "launch of 'pip' refused: an empty grid (grid 0x1x1, block 128x1x1): nothing would "
            "run");
  // A refusal is not a CUDA error: the worker answers it as an invalid candidate and goes on.
  static_assert(!std::is_base_of_v<cuda_error, launch_error>);
  static_assert(std::is_base_of_v<error, launch_error>);
}

TEST(HarnessCheckTest, IntegersAreComparedExactlyWithTheFirstDifferences) {
  const std::vector<int> ref{0, 1, 0, 1, 7};
  EXPECT_NO_THROW(check_equal(ref, ref, "inside"));
  std::vector<int> out = ref;
  out[1] = 0;
  out[4] = -1;  // what poison leaves in a signed int
  EXPECT_THROW_MSG(check_equal(out, ref, "inside"), check_error,
                   "'inside' is wrong: 2 of 5 values differ from the reference: at index 1 got "
                   "0, expected 1; at index 4 got -1, expected 7");
  // More differences than listed: the first ones, in index order.
  std::vector<std::uint8_t> bytes(100, 0), wrong(100, 0);
  for (std::size_t i = 10; i < 100; i += 10)
    wrong[i] = static_cast<std::uint8_t>(200 + i / 10);  // numbers, not characters
  EXPECT_THROW_MSG(check_equal(wrong, bytes), check_error,
                   "'output' is wrong: 9 of 100 values differ from the reference, the first 5: "
                   "at index 10 got 201, expected 0; at index 20 got 202, expected 0; at index "
                   "30 got 203, expected 0; at index 40 got 204, expected 0; at index 50 got "
                   "205, expected 0");
  const std::vector<std::uint64_t> big{~0ull}, zero{0};
  EXPECT_THROW_MSG(check_equal(big, zero), check_error,
                   "'output' is wrong: 1 of 1 values differ from the reference: at index 0 got "
                   "18446744073709551615, expected 0");
  EXPECT_THROW_MSG(check_equal(out, std::vector<int>(4)), error,
                   "check_equal: output has 5 values, reference 4");
}

TEST(HarnessCheckTest, MismatchesAreCountedAgainstEachValuesScale) {
  // The scale of a value is max(|ref|, rms(ref)): a zero in the reference is not held to an
  // exact match. rms(ref) here is 50.
  std::vector<double> ref{100, 0, 0, 0};
  std::vector<double> out{100.8, 0.5, 0.5, 0.5};
  // Every value within 1e-2 of its scale, the norm of the differences not.
  EXPECT_THROW_MSG(check_close(out, ref, 1e-2, "y"), check_error,
                   "'y' is wrong: relative error 1.2e-02 exceeds 1e-02 (worst at index 0: got "
                   "100.8, expected 100; none of 4 values off by more than the tolerance on its "
                   "own)");
  out[3] = 90;
  EXPECT_THROW_MSG(check_close(out, ref, 1e-2, "y"), check_error,
                   "'y' is wrong: relative error 9.0e-01 exceeds 1e-02 (worst at index 3: got 90, "
                   "expected 0; 1 of 4 values off by more than the tolerance, the first at "
                   "index 3)");
  // The host report and the formatter, apart: the numbers the device gate fills the same way.
  const std::span<const double> o(out), r(ref);
  const detail::CheckFailure f = detail::host_check_failure(o, r, relative_error(o, r), 1e-2);
  EXPECT_EQ(f.worst, 3u);
  EXPECT_EQ(f.mismatches, 1u);
  EXPECT_EQ(f.first_mismatch, 3u);
  EXPECT_EQ(f.count, 4u);
  detail::CheckFailure poisoned;
  poisoned.rel = std::numeric_limits<double>::quiet_NaN();
  poisoned.tolerance = 1e-6;
  poisoned.got = -std::numeric_limits<double>::quiet_NaN();  // 0xFF bytes: a negative NaN
  poisoned.expected = 0.25;
  poisoned.worst = poisoned.first_mismatch = 7;
  poisoned.mismatches = 9;
  poisoned.count = 64;
  EXPECT_EQ(detail::check_failure_message("out", poisoned),
            "'out' is wrong: relative error nan exceeds 1e-06 (worst at index 7: got nan, "
            "expected 0.25; 9 of 64 values off by more than the tolerance, the first at index 7)");
}

TEST(BenchQuantileTest, InterpolatesLikeNumpy) {
  std::vector<double> v{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(v, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(quantile(v, 0.1), 1.3);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.9), 7.0);
  EXPECT_TRUE(std::isnan(quantile({}, 0.5)));
}

TEST(BenchOptionsTest, FromTheSpacesBenchTable) {
  BenchSettings s;
  s.warmup_ms = 10;
  s.rep_ms = 50;
  s.min_reps = 3;
  s.max_reps = 30;
  s.clear_l2 = false;
  BenchOptions o = BenchOptions::from(s);
  EXPECT_EQ(o.warmup_ms, 10);
  EXPECT_EQ(o.rep_ms, 50);
  EXPECT_EQ(o.min_reps, 3);
  EXPECT_EQ(o.max_reps, 30);
  EXPECT_FALSE(o.clear_l2);
  EXPECT_EQ(o.batching, BenchOptions::Batching::automatic);
}

}  // namespace
}  // namespace tune
