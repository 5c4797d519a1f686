// Host reference of kernels/softmax/softmax.cu, in double precision: out[r,c] =
// exp(in[r,c] - max_r) / sum_c exp(in[r,c] - max_r) over a row-major fp32 matrix. Host-only
// C++17; no CUDA header. The gate of docs/kernels.md: relative error at most softmax_tolerance.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace kernels {

/// Largest accepted ||out - ref|| / ||ref|| (fp32 arithmetic; docs/measurement.md "The
/// correctness gate").
inline constexpr double softmax_tolerance = 1e-5;

/// Row-wise softmax of in[rows*cols] into out[rows*cols], in double.
inline void softmax_reference(const float* in, double* out, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const float* const x = in + static_cast<std::size_t>(r) * cols;
    double* const y = out + static_cast<std::size_t>(r) * cols;
    double row_max = x[0];
    for (int c = 1; c < cols; ++c)
      row_max = std::max(row_max, static_cast<double>(x[c]));
    double sum = 0.0;
    for (int c = 0; c < cols; ++c) {
      y[c] = std::exp(static_cast<double>(x[c]) - row_max);
      sum += y[c];
    }
    for (int c = 0; c < cols; ++c)
      y[c] /= sum;
  }
}

}  // namespace kernels
