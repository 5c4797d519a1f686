// Host reference of kernels/gemm/gemm.cu, in double precision: C[M,N] = A[M,K] x B[K,N] with
// A and B row-major bf16 (held on the host as their 16-bit patterns) and C fp32. Host-only
// C++17; no CUDA header. The gate of docs/kernels.md: relative error at most gemm_tolerance.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../common/bf16.hpp"

namespace kernels {

/// Largest accepted ||C - ref|| / ||ref|| (bf16 operands, fp32 accumulation; docs/measurement.md
/// "The correctness gate").
inline constexpr double gemm_tolerance = 1e-2;

/// One element of the reference product: sum over k of A[i,k] * B[k,j], in double.
inline double gemm_reference_element(const std::uint16_t* a, const std::uint16_t* b, int n, int k,
                                     int i, int j) {
  double sum = 0.0;
  for (int p = 0; p < k; ++p) {
    sum += static_cast<double>(bf16_bits_to_float(a[static_cast<std::size_t>(i) * k + p])) *
           static_cast<double>(bf16_bits_to_float(b[static_cast<std::size_t>(p) * n + j]));
  }
  return sum;
}

/// The whole reference product into c[m*n] (row-major). O(m*n*k): fine for the skinny bucket
/// (2 GFLOP), too slow on one core for 4096^3 (137 GFLOP); use gemm_reference_samples there.
inline void gemm_reference(const std::uint16_t* a, const std::uint16_t* b, double* c, int m, int n,
                           int k) {
  std::vector<double> row(static_cast<std::size_t>(n));
  for (int i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int p = 0; p < k; ++p) {
      const double aip = bf16_bits_to_float(a[static_cast<std::size_t>(i) * k + p]);
      const std::uint16_t* const brow = b + static_cast<std::size_t>(p) * n;
      for (int j = 0; j < n; ++j)
        row[static_cast<std::size_t>(j)] += aip * bf16_bits_to_float(brow[j]);
    }
    std::copy(row.begin(), row.end(), c + static_cast<std::size_t>(i) * n);
  }
}

/// The reference at `samples` elements of C: sample s is row rows[s], column cols[s]. For
/// 4096^3 a gate compares such a sample (say a few thousand elements, among them the corners
/// of every block tile) and checks the whole of C for the poison separately.
inline std::vector<double> gemm_reference_samples(const std::uint16_t* a, const std::uint16_t* b,
                                                  int n, int k, const int* rows, const int* cols,
                                                  std::size_t samples) {
  std::vector<double> ref(samples);
  for (std::size_t s = 0; s < samples; ++s) {
    ref[s] = gemm_reference_element(a, b, n, k, rows[s], cols[s]);
  }
  return ref;
}

}  // namespace kernels
