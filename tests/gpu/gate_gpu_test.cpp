// The device gate (tuner/cuda/gate.cu): check_close on device buffers agrees with the host
// check on matching, mismatching and non-finite data, with the same message; check_equal on
// integer device buffers agrees with the host's exact check, for every width; the early
// rejection of the bench stops a slow launch and keeps a fast one.
#include <tuner/cuda/bench.hpp>
#include <tuner/cuda/harness.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_context.hpp"

namespace tune {
namespace {

using test::ctx;

// The host check's message, or "" when it passes.
template <class T, class R>
std::string host_message(const std::vector<T>& out, const std::vector<R>& ref, double tol) {
  try {
    check_close(out, ref, tol, "y");
  } catch (const check_error& e) {
    return e.what();
  }
  return "";
}

template <class T, class R>
std::string device_message(const std::vector<T>& out, const std::vector<R>& ref, double tol) {
  ctx();
  const DeviceBuffer<T> d_out = to_device(out);
  const DeviceBuffer<R> d_ref = to_device(ref);
  try {
    check_close(d_out, d_ref, tol, "y");
  } catch (const check_error& e) {
    return e.what();
  }
  return "";
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<float> v(n);
  for (float& x : v)
    x = static_cast<float>(dist(rng));
  return v;
}

TEST(GateGpuTest, MatchingDataPassesWithTheHostsError) {
  const std::vector<float> ref = random_floats(1 << 20, 1);
  std::vector<float> out = ref;
  for (std::size_t i = 0; i < out.size(); i += 7)
    out[i] *= 1.0f + 1e-7f;
  ctx();
  const DeviceBuffer<float> d_out = to_device(out), d_ref = to_device(ref);
  const double host = relative_error(std::span<const float>(out), std::span<const float>(ref));
  const double device = check_close(d_out, d_ref, 1e-6, "y");
  EXPECT_NEAR(device, host, 1e-12 + host * 1e-9);
  EXPECT_NEAR(relative_error(d_out, d_ref), host, 1e-12 + host * 1e-9);
  EXPECT_EQ(device_message(out, ref, 1e-6), "");
}

TEST(GateGpuTest, MismatchesGiveTheHostsMessage) {
  const std::vector<float> ref = random_floats(3'000'001, 2);
  std::vector<float> out = ref;
  out[12345] += 0.5f;
  out[2'999'999] += 0.75f;  // the worst
  out[77] += 0.01f;
  const std::string host = host_message(out, ref, 1e-6);
  ASSERT_NE(host, "");
  EXPECT_EQ(device_message(out, ref, 1e-6), host);
  // A double reference, as fixtures keep them.
  const std::vector<double> ref64(ref.begin(), ref.end());
  EXPECT_EQ(device_message(out, ref64, 1e-6), host_message(out, ref64, 1e-6));
}

TEST(GateGpuTest, NonFiniteOutputsFailAtTheFirstOne) {
  const std::vector<float> ref = random_floats(100'000, 3);
  std::vector<float> out = ref;
  out[4000] = std::numeric_limits<float>::infinity();
  out[900] = -std::numeric_limits<float>::quiet_NaN();  // what poison leaves
  out[90'000] = std::numeric_limits<float>::quiet_NaN();
  const std::string host = host_message(out, ref, 1e30);
  ASSERT_NE(host.find("worst at index 900: got nan"), std::string::npos) << host;
  EXPECT_EQ(device_message(out, ref, 1e30), host);
  ctx();
  EXPECT_TRUE(std::isnan(relative_error(to_device(out), to_device(ref))));
  // A poisoned output (every byte 0xFF) fails at index 0.
  DeviceBuffer<float> poisoned(1000);
  poisoned.poison();
  const DeviceBuffer<float> r = to_device(random_floats(1000, 4));
  try {
    check_close(poisoned, r, 1e-6, "out");
    ADD_FAILURE() << "a poisoned output passed";
  } catch (const check_error& e) {
    EXPECT_NE(std::string(e.what()).find("(worst at index 0: got nan, expected "),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("1000 of 1000 values off"), std::string::npos) << e.what();
  }
}

TEST(GateGpuTest, AZeroReferenceAndSizes) {
  const std::vector<double> zeros(1000, 0.0);
  std::vector<double> out(1000, 0.0);
  out[10] = 3;
  out[20] = 4;
  EXPECT_EQ(device_message(out, zeros, 1e-6), host_message(out, zeros, 1e-6));
  ctx();
  EXPECT_DOUBLE_EQ(relative_error(to_device(out), to_device(zeros)), 5.0);
  EXPECT_THROW(check_close(DeviceBuffer<float>(3), DeviceBuffer<float>(4), 1e-6), error);
}

TEST(GateGpuTest, TheDeviceGateDownloadsLittle) {
  // 64 MB of output: the device gate against download and host check (printed, not asserted
  // beyond "faster": the figures are bench/pipeline's).
  const std::size_t n = 16u << 20;
  const std::vector<float> ref = random_floats(n, 5);
  ctx();
  const DeviceBuffer<float> d_out = to_device(ref), d_ref = to_device(ref);
  const std::vector<double> href(ref.begin(), ref.end());
  check_close(d_out, d_ref, 1e-6);  // the module's load, once
  auto t0 = std::chrono::steady_clock::now();
  check_close(d_out, d_ref, 1e-6);
  const double device_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  t0 = std::chrono::steady_clock::now();
  check_close(d_out.download(), href, 1e-6);
  const double host_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("gate of 64 MB: device %.2f ms, download and host %.2f ms\n", device_ms, host_ms);
  EXPECT_LT(device_ms, host_ms);
}

// The exact check's message, or "" when it passes: on the host and on the device.
template <class T>
std::string host_equal_message(const std::vector<T>& out, const std::vector<T>& ref) {
  try {
    check_equal(out, ref, "inside");
  } catch (const check_error& e) {
    return e.what();
  }
  return "";
}

template <class T>
std::string device_equal_message(const std::vector<T>& out, const std::vector<T>& ref) {
  ctx();
  const DeviceBuffer<T> d_out = to_device(out), d_ref = to_device(ref);
  try {
    check_equal(d_out, d_ref, "inside");
  } catch (const check_error& e) {
    return e.what();
  }
  return "";
}

template <class T>
void expect_equal_gate_agrees(std::size_t n) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<long long> dist(0, 100);
  std::vector<T> ref(n);
  for (T& v : ref)
    v = static_cast<T>(dist(rng));
  EXPECT_EQ(device_equal_message(ref, ref), "");
  // A few differences, the last one at the very end, and one that only the high byte has.
  std::vector<T> out = ref;
  out[3] = static_cast<T>(out[3] + 1);
  out[n - 1] = static_cast<T>(out[n - 1] + 2);
  const std::string few = host_equal_message(out, ref);
  ASSERT_NE(few, "");
  EXPECT_EQ(device_equal_message(out, ref), few);
  if constexpr (sizeof(T) > 1) {
    out[n / 2] = static_cast<T>(out[n / 2] ^ (T(1) << (8 * sizeof(T) - 2)));
    EXPECT_EQ(device_equal_message(out, ref), host_equal_message(out, ref));
  }
  // Many: the count and the first five, in order.
  for (std::size_t i = 1000; i < n; i += 977)
    out[i] = static_cast<T>(out[i] + 1);
  const std::string many = host_equal_message(out, ref);
  ASSERT_NE(many.find("the first 5"), std::string::npos) << many;
  EXPECT_EQ(device_equal_message(out, ref), many);
}

TEST(GateGpuTest, IntegerBuffersAreComparedExactlyOnTheDevice) {
  expect_equal_gate_agrees<std::int32_t>(3'000'001);
  expect_equal_gate_agrees<std::uint32_t>(100'003);
  expect_equal_gate_agrees<std::int64_t>(100'003);
  expect_equal_gate_agrees<std::uint64_t>(70'001);
  expect_equal_gate_agrees<std::int16_t>(65'537);
  expect_equal_gate_agrees<std::uint8_t>(4'099);
  expect_equal_gate_agrees<std::int8_t>(4'099);
  // A poisoned int output (every byte 0xFF) fails at index 0 with -1.
  ctx();
  DeviceBuffer<int> poisoned(1000);
  poisoned.poison();
  const DeviceBuffer<int> zeros = to_device(std::vector<int>(1000, 0));
  try {
    check_equal(poisoned, zeros, "inside");
    ADD_FAILURE() << "a poisoned output passed";
  } catch (const check_error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "'inside' is wrong: 1000 of 1000 values differ from the reference, the first "
                  "5: at index 0 got -1, expected 0; at index 1 got -1, expected 0;"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(check_equal(DeviceBuffer<int>(3), DeviceBuffer<int>(4)), error);
  EXPECT_NO_THROW(check_equal(DeviceBuffer<int>(0), DeviceBuffer<int>(0)));
}

TEST(GateGpuTest, TheIntegerGateDownloadsLittle) {
  // 20M ints (80 MB), as a point-in-polygon output: the device gate against download and host
  // compare (printed; asserted only to be faster).
  const std::size_t n = 20'000'000;
  std::vector<int> ref(n);
  for (std::size_t i = 0; i < n; ++i)
    ref[i] = static_cast<int>((i * 2654435761u) >> 31);
  ctx();
  const DeviceBuffer<int> d_out = to_device(ref), d_ref = to_device(ref);
  check_equal(d_out, d_ref);  // the module's load, once
  auto t0 = std::chrono::steady_clock::now();
  check_equal(d_out, d_ref);
  const double device_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  t0 = std::chrono::steady_clock::now();
  check_equal(d_out.download(), ref);
  const double host_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("exact gate of 80 MB: device %.2f ms, download and host %.2f ms\n", device_ms,
              host_ms);
  EXPECT_LT(device_ms, host_ms);
}

TEST(BenchEarlyRejectGpuTest, ASlowLaunchStopsAndAFastOneDoesNot) {
  Context& c = ctx();
  const Launch slow = [&c](CUstream s) { spin(c, s, 0.2); };
  BenchOptions options;
  options.warmup_ms = 2;
  options.rep_ms = 40;  // about 200 planned reps
  options.reject = EarlyReject{0.1, 0.01};
  const BenchResult stopped = bench(c, slow, nullptr, options);
  EXPECT_TRUE(stopped.rejected_early);
  EXPECT_EQ(stopped.reps, 10);
  EXPECT_EQ(stopped.samples_ms.size(), 10u);
  EXPECT_GT(stopped.saved_ms, 100 * 0.2);
  options.reject = EarlyReject{0.3, 0.01};
  const BenchResult full = bench(c, slow, nullptr, options);
  EXPECT_FALSE(full.rejected_early);
  // About 200: the reps planned from the warm-up's estimate of one launch (197 on the H200).
  EXPECT_GT(full.reps, 150);
  EXPECT_EQ(full.saved_ms, 0);
}

}  // namespace
}  // namespace tune
