// Host reference of kernels/reduce/reduce.cu: the sum of n fp32 values in double precision
// (Neumaier-compensated, so the reference itself is exact to about 1e-16 relative). Host-only
// C++17; no CUDA header. The gate of docs/kernels.md: relative error at most reduce_tolerance.
#pragma once

#include <cmath>
#include <cstddef>

namespace kernels {

/// Largest accepted |out - ref| / |ref| (fp64 accumulation, one rounding to fp32 at the end,
/// so about 6e-8 plus the fp64 rounding; 1e-6 leaves room for cancellation in mixed-sign
/// data of modest condition number).
inline constexpr double reduce_tolerance = 1e-6;

/// The sum of in[0, n), in double.
inline double reduce_reference(const float* in, std::size_t n) {
  double sum = 0.0;
  double compensation = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = in[i];
    const double t = sum + x;
    compensation += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  return sum + compensation;
}

}  // namespace kernels
