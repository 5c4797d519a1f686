// The harness API: what a kernel's harness (`tune_add_kernel(... HARNESS <file>)`) includes.
//
// A harness is one C++ file with one setup function, declared with TUNE_HARNESS. For each
// candidate the runner loads the candidate's module, builds a SetupContext (the bucket's shape,
// the config's params, the module, a stream) and calls setup. Setup allocates inputs, checks
// one launch against a host reference (the correctness gate: throw, or let a check throw, and
// the candidate is invalid with that message), and returns the launch closure that the bench
// times. docs/harness.md walks through a complete example.
//
// A harness may also build a bucket fixture (TUNE_HARNESS_WITH_FIXTURE): `prepare` runs once
// per bucket in each worker process and returns the inputs on the device, the reference answer
// and any host data; every candidate's setup of that bucket gets it. Inputs a candidate may
// write are declared (BucketContext::writable_input) and restored before each candidate,
// outputs declared (BucketContext::output) are poisoned before each; a fixture that throws
// makes the whole bucket invalid with its message.
//
// Example:
//   #include <tuner/cuda/harness.hpp>
//
//   tune::Launch setup(tune::SetupContext& ctx) {
//     const auto n = ctx.shape().int_("N");
//     const unsigned block = static_cast<unsigned>(ctx.params().int_("BLOCK"));
//     tune::DeviceBuffer<float> x(n), y(n);
//     std::vector<float> hx = x.fill_random(ctx.rng()), hy = y.fill_random(ctx.rng());
//     tune::Function saxpy = ctx.module().function("saxpy");
//     const unsigned grid = static_cast<unsigned>((n + block - 1) / block);
//     saxpy.launch(grid, block, 0, ctx.stream(), n, 2.0f, x, y);
//     ... compute the reference from hx and hy, then (on the host, or with the reference in a
//     device buffer, on the device: docs/harness.md "The gate on the device")
//     tune::check_close(y.download(), reference, 1e-6, "y");
//     return [=](CUstream s) { saxpy.launch(grid, block, 0, s, n, 2.0f, x, y); };
//   }
//   TUNE_HARNESS(setup)
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <tuner/core/base/config.hpp>
#include <tuner/core/space/space.hpp>
#include <tuner/cuda/driver.hpp>
#include <tuner/cuda/module.hpp>

/// Defined where `tune::check_close` takes device buffers (docs/harness.md "The gate on the
/// device"), for a harness that also builds against an older tune.
#define TUNE_HAS_DEVICE_GATE 1

namespace tune {

/// The closure a harness returns: queues one run of the candidate on the given stream. The
/// bench calls it many times (and may capture it into a CUDA graph), so it must only queue
/// device work: no allocation, no synchronization, no host copies.
using Launch = std::function<void(CUstream)>;

/// A correctness check failed: the candidate computes something else. The runner records the
/// candidate as invalid with this message.
class check_error : public error {
 public:
  using error::error;
};

/// A mistake of the harness itself, the same for every candidate of the bucket: it reads a
/// param or shape name the space does not have, or reads an int param as a string (every
/// config of a space has the same params, each of one kind, and a bucket has one shape). The
/// worker answers it as a harness failure, and the tune stops the bucket at the first one
/// instead of measuring every candidate into the same invalid trial.
class harness_error : public error {
 public:
  using error::error;
};

/// Named int or string values (a bucket's shape, a config's params), read by name.
class Values {
 public:
  /// `what` names the values in messages (`shape of bucket 'm<=512'`, `config 'BM=64'`).
  Values(std::vector<std::pair<std::string, ParamValue>> values, std::string what);

  /// The int named `name`. Throws tune::harness_error `<file>:<line>: <what> has no value 'X'
  /// (it has: A, B)` or `<file>:<line>: <what>: 'X' is a string, not an int`, naming the
  /// harness's line that asked. `tune::kernel::<kernel>::param::X` from the kernel's names
  /// header (`#include <tune/kernel/<kernel>.hpp>`) makes a misspelt name a compile error.
  std::int64_t int_(std::string_view name,
                    std::source_location where = std::source_location::current()) const;
  /// The string named `name`; the same errors.
  const std::string& str(std::string_view name,
                         std::source_location where = std::source_location::current()) const;
  /// Whether a value named `name` exists.
  bool has(std::string_view name) const;
  const std::vector<std::pair<std::string, ParamValue>>& values() const noexcept { return values_; }

 private:
  const ParamValue& find(std::string_view name, const std::source_location& where) const;
  std::vector<std::pair<std::string, ParamValue>> values_;
  std::string what_;
};

/// Device memory for `count` values of T in the current context. A handle: copies share one
/// allocation, freed when the last copy goes, so a launch closure can capture buffers by value.
/// Passed to `Function::launch` it becomes its device pointer.
template <class T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "device buffers hold trivially copyable values");

 public:
  DeviceBuffer() = default;
  /// Allocates `count` values (uninitialised). Throws tune::cuda_error when out of memory.
  explicit DeviceBuffer(std::int64_t count)
      : alloc_(std::make_shared<Allocation>(static_cast<std::size_t>(count) * sizeof(T))),
        count_(static_cast<std::size_t>(count)) {}

  CUdeviceptr device_ptr() const noexcept { return alloc_ ? alloc_->ptr : 0; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

  // upload, download and poison wait for the whole context (cuCtxSynchronize): the plain
  // copies and memsets are ordered with the legacy stream only, not with the non-blocking
  // stream the bench uses, and setup is never timed.

  /// Copies `host` (exactly `size()` values) to the device; returns when it is there.
  void upload(std::span<const T> host) const {
    if (host.size() != count_) {
      throw error("upload of " + std::to_string(host.size()) + " values into a buffer of " +
                  std::to_string(count_));
    }
    if (count_) TUNE_CU(driver().cuMemcpyHtoD(device_ptr(), host.data(), bytes()));
    TUNE_CU(driver().cuCtxSynchronize());
  }
  /// Waits for all work queued in the context, then copies the buffer to the host.
  std::vector<T> download() const {
    TUNE_CU(driver().cuCtxSynchronize());
    std::vector<T> host(count_);
    if (count_) TUNE_CU(driver().cuMemcpyDtoH(host.data(), device_ptr(), bytes()));
    return host;
  }
  /// A new allocation holding a copy of this buffer's values (a device-to-device copy).
  DeviceBuffer clone() const {
    DeviceBuffer copy(static_cast<std::int64_t>(count_));
    copy.copy_from(*this);
    return copy;
  }
  /// Copies `other` (of the same size) into this buffer on the device; returns when it is
  /// there.
  void copy_from(const DeviceBuffer& other) const {
    if (other.count_ != count_) {
      throw error("copy of " + std::to_string(other.count_) + " values into a buffer of " +
                  std::to_string(count_));
    }
    if (count_) TUNE_CU(driver().cuMemcpyDtoD(device_ptr(), other.device_ptr(), bytes()));
    TUNE_CU(driver().cuCtxSynchronize());
  }
  /// Fills every byte with 0xFF: NaN for floating point, -1 for signed integers. Do this to an
  /// output before the checked launch, so that an element the kernel never wrote fails the
  /// check instead of passing with a stale value.
  void poison() const {
    if (count_) TUNE_CU(driver().cuMemsetD8(device_ptr(), 0xFF, bytes()));
    TUNE_CU(driver().cuCtxSynchronize());
  }
  /// Fills the buffer with uniform random values in [lo, hi] and returns the host copy (the
  /// reference's input). Never zeros: zeros hide unwritten outputs and wrong indexing.
  std::vector<T> fill_random(std::mt19937_64& rng, T lo = T(-1),
                             T hi = T(1)) const requires std::is_arithmetic_v<T> {
    std::vector<T> host(count_);
    if constexpr (std::is_floating_point_v<T>) {
      std::uniform_real_distribution<double> dist(static_cast<double>(lo), static_cast<double>(hi));
      for (T& v : host)
        v = static_cast<T>(dist(rng));
    } else {
      std::uniform_int_distribution<long long> dist(static_cast<long long>(lo),
                                                    static_cast<long long>(hi));
      for (T& v : host)
        v = static_cast<T>(dist(rng));
    }
    upload(host);
    return host;
  }

 private:
  struct Allocation {
    explicit Allocation(std::size_t bytes) {
      if (bytes) TUNE_CU(driver().cuMemAlloc(&ptr, bytes));
    }
    ~Allocation() {
      if (ptr) driver().cuMemFree(ptr);  // cannot report from a destructor
    }
    Allocation(const Allocation&) = delete;
    Allocation& operator=(const Allocation&) = delete;
    CUdeviceptr ptr = 0;
  };
  std::shared_ptr<Allocation> alloc_;
  std::size_t count_ = 0;
};

/// ‖out − ref‖₂ / ‖ref‖₂, accumulated in double. When ‖ref‖ is 0 it is ‖out‖₂ (the absolute
/// error). NaN when `out` holds a NaN or an infinity, so it never passes a tolerance. Throws
/// tune::error when the sizes differ.
template <class T, class R>
double relative_error(std::span<const T> out, std::span<const R> ref) {
  if (out.size() != ref.size()) {
    throw error("relative_error: output has " + std::to_string(out.size()) + " values, reference " +
                std::to_string(ref.size()));
  }
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double o = static_cast<double>(out[i]);
    const double r = static_cast<double>(ref[i]);
    if (!std::isfinite(o)) return std::numeric_limits<double>::quiet_NaN();
    diff += (o - r) * (o - r);
    norm += r * r;
  }
  return norm > 0 ? std::sqrt(diff) / std::sqrt(norm) : std::sqrt(diff);
}

namespace detail {

/// What a failed check says (the same from the host and the device path): the relative error,
/// where it is worst (the first non-finite output, else the first largest difference) with the
/// values there, and how many values are off: not finite, or further from the reference than
/// `tolerance * max(|ref|, rms(ref))`, where rms(ref) is ‖ref‖₂ / √n over the finite outputs.
struct CheckFailure {
  double rel = 0;
  double tolerance = 0;
  std::size_t worst = 0;
  double got = 0;
  double expected = 0;
  std::size_t mismatches = 0;
  std::size_t first_mismatch = 0;
  std::size_t count = 0;
};

/// `'y' is wrong: relative error 2.8e-01 exceeds 1e-05 (worst at index 1: got 1.5, expected 1;
/// 2 of 4 values off by more than the tolerance, the first at index 1)`.
std::string check_failure_message(std::string_view what, const CheckFailure& failure);
[[noreturn]] void throw_check_failure(std::string_view what, const CheckFailure& failure);

/// The failure report of a host check that did not pass with `rel`.
template <class T, class R>
CheckFailure host_check_failure(std::span<const T> out, std::span<const R> ref, double rel,
                                double tolerance) {
  CheckFailure f;
  f.rel = rel;
  f.tolerance = tolerance;
  f.count = out.size();
  // Point at the first non-finite value, else at the largest difference.
  double worst = -1, ref2 = 0;
  std::size_t finite = 0;
  bool nonfinite = false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double o = static_cast<double>(out[i]);
    const double r = static_cast<double>(ref[i]);
    if (!std::isfinite(o)) {
      if (!nonfinite) f.worst = i;
      nonfinite = true;
      continue;
    }
    ref2 += r * r;
    ++finite;
    if (!nonfinite && std::abs(o - r) > worst) {
      worst = std::abs(o - r);
      f.worst = i;
    }
  }
  const double scale = finite > 0 ? std::sqrt(ref2 / static_cast<double>(finite)) : 0.0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double o = static_cast<double>(out[i]);
    const double r = static_cast<double>(ref[i]);
    if (!std::isfinite(o) || std::abs(o - r) > tolerance * std::max(std::abs(r), scale)) {
      if (f.mismatches++ == 0) f.first_mismatch = i;
    }
  }
  if (!out.empty()) {
    f.got = static_cast<double>(out[f.worst]);
    f.expected = static_cast<double>(ref[f.worst]);
  }
  return f;
}

/// The kinds of values the device gate reads.
enum class GateKind : int { f32 = 0, f64 = 1 };
template <class T>
inline constexpr bool gate_kind_v = std::is_same_v<T, float> || std::is_same_v<T, double>;
template <class T>
constexpr GateKind gate_kind() {
  return std::is_same_v<T, double> ? GateKind::f64 : GateKind::f32;
}

/// The device gate (tuner/cuda/gate.cu): the relative error of `count` values of `out` against
/// `ref`, both in the current context, computed on the device; only the norms come back. When
/// it exceeds `tolerance` (or is NaN) and `failure` is given, two more passes fill it. Waits for
/// the context's queued work first.
double device_relative_error(CUdeviceptr out, GateKind out_kind, CUdeviceptr ref, GateKind ref_kind,
                             std::size_t count, double tolerance, CheckFailure* failure);

/// How many differences an exact check's message lists (the first ones, by index).
inline constexpr std::size_t listed_differences = 5;

/// One difference of an exact check: where, and the two values as text.
struct Difference {
  std::size_t index = 0;
  std::string got;
  std::string expected;
};

/// `'inside' is wrong: 2 of 4 values differ from the reference: at index 1 got 1, expected 0;
/// at index 3 got 0, expected 1`; with more differences than listed, `..., the first 5: ...`.
std::string equal_failure_message(std::string_view what, std::size_t count, std::size_t differences,
                                  const std::vector<Difference>& first);

/// An integer's decimal text (a char type as a number, not a character).
template <class T>
std::string integer_text(T v) {
  if constexpr (std::is_same_v<T, bool>)
    return v ? "1" : "0";
  else if constexpr (std::is_signed_v<T>)
    return std::to_string(static_cast<long long>(v));
  else
    return std::to_string(static_cast<unsigned long long>(v));
}

/// The exact gate on the device (tuner/cuda/gate.cu): how many of `count` values of `width`
/// bytes (1, 2, 4 or 8) differ between `out` and `ref`, both in the current context, compared
/// as words on the device; `first`, when given, gets the indices of the first `listed` of them
/// in order. Waits for the context's queued work first.
std::size_t device_differences(CUdeviceptr out, CUdeviceptr ref, std::size_t width,
                               std::size_t count, std::size_t listed,
                               std::vector<std::size_t>* first);

}  // namespace detail

/// Checks `out` against the host reference `ref`: passes when `relative_error(out, ref) <=
/// tolerance`; NaN never passes. Throws tune::check_error, for example
/// `'y' is wrong: relative error nan exceeds 1e-05 (worst at index 17: got nan, expected 0.25;
/// 3 of 4096 values off by more than the tolerance, the first at index 17)`; the worst index is
/// the first non-finite value, else the largest difference. Returns the relative error.
template <class T, class R>
double check_close(std::span<const T> out, std::span<const R> ref, double tolerance,
                   std::string_view what = "output") {
  const double rel = relative_error(out, ref);
  if (rel <= tolerance) return rel;  // false for NaN
  detail::throw_check_failure(what, detail::host_check_failure(out, ref, rel, tolerance));
}
/// `check_close` for vectors.
template <class T, class R>
double check_close(const std::vector<T>& out, const std::vector<R>& ref, double tolerance,
                   std::string_view what = "output") {
  return check_close(std::span<const T>(out), std::span<const R>(ref), tolerance, what);
}

/// `relative_error` of two device buffers, computed on the device (docs/harness.md "The gate on
/// the device"): nothing but the norms is downloaded. Float or double values.
template <class T, class R>
double relative_error(const DeviceBuffer<T>& out, const DeviceBuffer<R>& ref) {
  static_assert(detail::gate_kind_v<T> && detail::gate_kind_v<R>,
                "the device gate compares float or double buffers with a tolerance; compare "
                "integer buffers exactly with tune::check_equal");
  if (out.size() != ref.size()) {
    throw error("relative_error: output has " + std::to_string(out.size()) + " values, reference " +
                std::to_string(ref.size()));
  }
  return detail::device_relative_error(out.device_ptr(), detail::gate_kind<T>(), ref.device_ptr(),
                                       detail::gate_kind<R>(), out.size(), 0, nullptr);
}

/// `check_close` of an output against a reference kept on the device (a bucket fixture's):
/// compared on the device, with the host check's rule and message; only the norms and, on a
/// failure, the worst and first mismatching values come back. Waits for the context's queued
/// work (the checked launch) first. Float or double values.
template <class T, class R>
double check_close(const DeviceBuffer<T>& out, const DeviceBuffer<R>& ref, double tolerance,
                   std::string_view what = "output") {
  static_assert(detail::gate_kind_v<T> && detail::gate_kind_v<R>,
                "the device gate compares float or double buffers with a tolerance; compare "
                "integer buffers exactly with tune::check_equal");
  if (out.size() != ref.size()) {
    throw error("check_close: output has " + std::to_string(out.size()) + " values, reference " +
                std::to_string(ref.size()));
  }
  detail::CheckFailure failure;
  const double rel =
      detail::device_relative_error(out.device_ptr(), detail::gate_kind<T>(), ref.device_ptr(),
                                    detail::gate_kind<R>(), out.size(), tolerance, &failure);
  if (rel <= tolerance) return rel;
  detail::throw_check_failure(what, failure);
}

/// Checks that the integer values `out` equal `ref` exactly, on the host. Throws
/// tune::check_error naming how many differ and the first few with their index, for example
/// `'inside' is wrong: 2 of 4096 values differ from the reference: at index 17 got 1, expected
/// 0; at index 40 got 0, expected 1`.
template <class T>
void check_equal(std::span<const T> out, std::span<const T> ref,
                 std::string_view what = "output") requires std::is_integral_v<T> {
  if (out.size() != ref.size()) {
    throw error("check_equal: output has " + std::to_string(out.size()) + " values, reference " +
                std::to_string(ref.size()));
  }
  std::size_t differences = 0;
  std::vector<detail::Difference> first;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == ref[i]) continue;
    if (differences++ < detail::listed_differences)
      first.push_back({i, detail::integer_text(out[i]), detail::integer_text(ref[i])});
  }
  if (differences > 0)
    throw check_error(detail::equal_failure_message(what, out.size(), differences, first));
}
/// `check_equal` for vectors.
template <class T>
void check_equal(const std::vector<T>& out, const std::vector<T>& ref,
                 std::string_view what = "output") requires std::is_integral_v<T> {
  check_equal(std::span<const T>(out), std::span<const T>(ref), what);
}

/// `check_equal` of an integer output against a reference kept on the device (docs/harness.md
/// "The gate on the device"): compared exactly on the device, with the host check's message;
/// only the count of differences and, on a failure, the first few values come back. Waits for
/// the context's queued work (the checked launch) first.
template <class T>
void check_equal(const DeviceBuffer<T>& out, const DeviceBuffer<T>& ref,
                 std::string_view what = "output") requires std::is_integral_v<T> {
  if (out.size() != ref.size()) {
    throw error("check_equal: output has " + std::to_string(out.size()) + " values, reference " +
                std::to_string(ref.size()));
  }
  std::vector<std::size_t> indices;
  const std::size_t differences =
      detail::device_differences(out.device_ptr(), ref.device_ptr(), sizeof(T), out.size(),
                                 detail::listed_differences, &indices);
  if (differences == 0) return;
  auto value_at = [](const DeviceBuffer<T>& b, std::size_t i) {
    T v{};
    TUNE_CU(driver().cuMemcpyDtoH(&v, b.device_ptr() + i * sizeof(T), sizeof(T)));
    return detail::integer_text(v);
  };
  std::vector<detail::Difference> first;
  for (std::size_t i : indices)
    first.push_back({i, value_at(out, i), value_at(ref, i)});
  throw check_error(detail::equal_failure_message(what, out.size(), differences, first));
}

/// A device copy of a host reference, for a fixture to keep (`DeviceBuffer<double>` for a
/// double reference): upload it once in `prepare`, then every candidate's gate compares on the
/// device.
template <class T>
DeviceBuffer<T> to_device(std::span<const T> host) {
  DeviceBuffer<T> buffer(static_cast<std::int64_t>(host.size()));
  buffer.upload(host);
  return buffer;
}
template <class T>
DeviceBuffer<T> to_device(const std::vector<T>& host) {
  return to_device(std::span<const T>(host));
}

/// Everything `prepare` needs about the bucket whose fixture it builds (docs/harness.md
/// "Bucket fixtures"): the shape, the device, a stream and a random generator seeded per
/// bucket, the module of the bucket's first candidate, and the declarations of what the worker
/// resets before every candidate.
class BucketContext {
 public:
  /// Built by tests: no module (`has_module()` is false). `bucket` names the shape in
  /// messages, `seed` seeds `rng()`.
  BucketContext(Context& context, std::string bucket, const Shape& shape, CUstream stream,
                std::uint64_t seed = 0x7475'6e65);
  /// Built by the runner: `module` is the module of the first candidate the worker sets up in
  /// this bucket, loaded before `prepare` runs.
  BucketContext(Context& context, std::shared_ptr<Module> module, std::string bucket,
                const Shape& shape, CUstream stream, std::uint64_t seed = 0x7475'6e65);

  /// The bucket's shape, by name: `ctx.shape().int_("M")`.
  const Values& shape() const noexcept { return shape_; }
  const std::string& bucket() const noexcept { return bucket_; }
  /// The device.
  Context& context() const noexcept { return context_; }
  /// The stream the bench will time on.
  CUstream stream() const noexcept { return stream_; }
  /// Waits for the work queued on `stream()`.
  void sync() const;
  /// A random generator seeded per bucket, for inputs.
  std::mt19937_64& rng() noexcept { return rng_; }

  /// The module of the bucket's first candidate in this worker, loaded when `prepare` runs:
  /// a reference kernel compiled into the kernel's source (a naive version beside the tuned
  /// one) computes the reference here, once per bucket, with
  /// `ctx.module().function("naive")`. The reference kernel must not depend on the config's
  /// params (each worker's first candidate may be another config). Throws tune::error when
  /// there is none (a BucketContext built without one).
  Module& module() const;
  bool has_module() const noexcept { return module_ != nullptr; }

  /// Declares `buffer` an input that a candidate may write (in place, or by a bug): its content
  /// when `prepare` returns is kept in a device copy and restored before every candidate's
  /// setup, so that each candidate and its gate see the inputs the reference was computed from.
  template <class T>
  void writable_input(const DeviceBuffer<T>& buffer) {
    snapshots_.push_back([buffer]() -> std::function<void()> {
      const DeviceBuffer<T> pristine = buffer.clone();
      return [buffer, pristine] { buffer.copy_from(pristine); };
    });
  }
  /// Declares `buffer` an output: every byte is set to 0xFF (NaN for floats) before every
  /// candidate's setup, so that an element a candidate never writes fails its gate instead of
  /// passing with the previous candidate's value.
  template <class T>
  void output(const DeviceBuffer<T>& buffer) {
    poisons_.push_back([buffer] { buffer.poison(); });
  }

  /// The runner's: the resets to run before every candidate (restores, then poisons), taking
  /// the inputs' copies now. Called once, after `prepare` returned.
  std::vector<std::function<void()>> take_resets();

 private:
  Context& context_;
  std::shared_ptr<Module> module_;
  std::string bucket_;
  Values shape_;
  CUstream stream_;
  std::mt19937_64 rng_;
  std::vector<std::function<std::function<void()>()>> snapshots_;
  std::vector<std::function<void()>> poisons_;
};

/// Everything setup needs about the candidate it prepares.
class SetupContext {
 public:
  /// Built by the runner (and by tests): `bucket` names the shape in messages, `entry` is the
  /// kernel's declared entry (`tune_add_kernel(... ENTRY)`), `seed` seeds `rng()`.
  SetupContext(Context& context, std::shared_ptr<Module> module, std::string entry,
               std::string bucket, const Shape& shape, const Config& config, CUstream stream,
               std::uint64_t seed = 0x7475'6e65);

  /// The bucket's shape, by name: `ctx.shape().int_("M")`.
  const Values& shape() const noexcept { return shape_; }
  /// The config's params, by name: `ctx.params().int_("BLOCK")`.
  const Values& params() const noexcept { return params_; }
  const Config& config() const noexcept { return config_; }
  const std::string& bucket() const noexcept { return bucket_; }

  /// The candidate's module: `module().function(name)`, `module().global(name)`.
  Module& module() const noexcept { return *module_; }
  /// The kernel's entry function (the name given to tune_add_kernel's ENTRY).
  Function entry() const { return module_->function(entry_); }
  const std::string& entry_name() const noexcept { return entry_; }

  /// The device.
  Context& context() const noexcept { return context_; }
  /// The stream the bench will time on; use it for the checked launch too.
  CUstream stream() const noexcept { return stream_; }
  /// Waits for the work queued on `stream()`.
  void sync() const;
  /// A random generator seeded per candidate, for inputs.
  std::mt19937_64& rng() noexcept { return rng_; }

 private:
  Context& context_;
  std::shared_ptr<Module> module_;
  std::string entry_;
  std::string bucket_;
  Config config_;
  Values shape_;
  Values params_;
  CUstream stream_;
  std::mt19937_64 rng_;
};

/// A harness's setup function.
using SetupFn = Launch (*)(SetupContext&);

/// The harness linked into this executable, as TUNE_HARNESS or TUNE_HARNESS_WITH_FIXTURE
/// declares it.
struct Harness {
  SetupFn setup = nullptr;  ///< the per-candidate setup of a harness without a fixture
  const char* name = "";    ///< the setup function's name
  const char* file = "";    ///< the harness source file
  /// With a fixture: builds the bucket's fixture (type-erased), once per bucket and worker.
  std::shared_ptr<void> (*prepare)(BucketContext&) = nullptr;
  /// With a fixture: the per-candidate setup, given the fixture `prepare` built.
  Launch (*setup_with)(SetupContext&, void* fixture) = nullptr;
  /// With a fixture that has a `void restore()`: calls it before every candidate's setup.
  void (*restore)(void* fixture) = nullptr;
};

namespace detail {
/// The Harness of `TUNE_HARNESS_WITH_FIXTURE(Prepare, Setup)`: `Prepare(BucketContext&)`
/// returns the fixture by value, `Setup(SetupContext&, Fixture&)` takes it.
template <auto Prepare, auto Setup>
Harness fixture_harness(const char* name, const char* file) {
  using Fixture = std::remove_cvref_t<decltype(Prepare(std::declval<BucketContext&>()))>;
  static_assert(std::is_invocable_r_v<Launch, decltype(Setup), SetupContext&, Fixture&>,
                "the setup of a harness with a fixture takes (tune::SetupContext&, Fixture&), "
                "where Fixture is what prepare returns");
  Harness h;
  h.name = name;
  h.file = file;
  h.prepare = [](BucketContext& ctx) -> std::shared_ptr<void> {
    return std::make_shared<Fixture>(Prepare(ctx));
  };
  h.setup_with = [](SetupContext& ctx, void* fixture) {
    return Launch(Setup(ctx, *static_cast<Fixture*>(fixture)));
  };
  if constexpr (requires(Fixture & f) { f.restore(); })
    h.restore = [](void* fixture) { static_cast<Fixture*>(fixture)->restore(); };
  return h;
}
}  // namespace detail

/// The harness of this executable. Defined by TUNE_HARNESS in the harness file: a runner
/// links exactly one harness (none is an undefined reference, two a duplicate definition,
/// both at link time).
const Harness& harness();

}  // namespace tune

/// Declares `fn`, a `tune::Launch fn(tune::SetupContext&)` defined above it in this file (in an
/// anonymous namespace or not), as this executable's harness. Use once, at global scope, in
/// the harness source file.
#define TUNE_HARNESS(fn)                                \
  const ::tune::Harness& ::tune::harness() {            \
    static const ::tune::Harness h{&fn, #fn, __FILE__}; \
    return h;                                           \
  }

/// Declares a harness with a bucket fixture (docs/harness.md "Bucket fixtures"): `prepare`, a
/// `Fixture prepare(tune::BucketContext&)` run once per bucket in each worker process, and
/// `setup`, a `tune::Launch setup(tune::SetupContext&, Fixture&)` run for every candidate with
/// the fixture `prepare` returned. Use once, at global scope, instead of TUNE_HARNESS.
#define TUNE_HARNESS_WITH_FIXTURE(prepare, setup)                            \
  const ::tune::Harness& ::tune::harness() {                                 \
    static const ::tune::Harness h =                                         \
        ::tune::detail::fixture_harness<&prepare, &setup>(#setup, __FILE__); \
    return h;                                                                \
  }
