// The harness of kernels/gemm/gemm.cu (contract and gate: docs/kernels.md). Fresh random bf16
// inputs in [-1, 1) for every candidate, C poisoned with NaN, one checked launch, then the
// closure the bench times.
//
// The gate: every element of C must be written (no NaN left from the poison, nothing
// infinite), and a sample of C must match the double-precision product of the same bf16
// inputs within gemm_tolerance. The sample holds the four corners of every block tile (a wrong
// tile or fragment mapping shows at an edge) plus 2048 random elements (a wrong mapping
// corrupts a large share of C; 2048 draws cannot all miss it); a full host product of the
// square bucket would cost 137 GFLOP per candidate.
#include <tuner/cuda/harness.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../common/random.hpp"
#include "reference.hpp"

namespace {

/// The elements of C the gate compares, as parallel row and column lists.
struct Sample {
  std::vector<int> rows;
  std::vector<int> cols;
  void add(std::int64_t r, std::int64_t c) {
    rows.push_back(static_cast<int>(r));
    cols.push_back(static_cast<int>(c));
  }
};

Sample choose_sample(std::mt19937_64& rng, std::int64_t m, std::int64_t n, std::int64_t bm,
                     std::int64_t bn) {
  Sample s;
  for (std::int64_t r = 0; r < m; r += bm) {
    for (std::int64_t c = 0; c < n; c += bn) {
      s.add(r, c);
      s.add(r, c + bn - 1);
      s.add(r + bm - 1, c);
      s.add(r + bm - 1, c + bn - 1);
    }
  }
  std::uniform_int_distribution<std::int64_t> row(0, m - 1), col(0, n - 1);
  for (int i = 0; i < 2048; ++i)
    s.add(row(rng), col(rng));
  return s;
}

tune::Launch setup(tune::SetupContext& ctx) {
  const std::int64_t m = ctx.shape().int_("M");
  const std::int64_t n = ctx.shape().int_("N");
  const std::int64_t k = ctx.shape().int_("K");
  const std::int64_t bm = ctx.params().int_("BM");
  const std::int64_t bn = ctx.params().int_("BN");
  const std::int64_t bk = ctx.params().int_("BK");
  if (m % bm != 0 || n % bn != 0 || k % bk != 0) {
    throw tune::error("shape " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                      std::to_string(k) + " is not a multiple of the tile " + std::to_string(bm) +
                      "x" + std::to_string(bn) + "x" + std::to_string(bk) +
                      " (the kernel has no edge handling; the space must prune this config)");
  }

  // The launch geometry, as the candidate's module states it (docs/kernels.md).
  tune::Function gemm = ctx.entry();
  const auto threads = static_cast<unsigned>(ctx.module().global("gemm_threads").download<int>());
  const auto smem =
      static_cast<std::size_t>(ctx.module().global("gemm_smem_bytes").download<int>());
  const tune::Dim3 grid(static_cast<unsigned>(n / bn), static_cast<unsigned>(m / bm));
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);

  tune::DeviceBuffer<std::uint16_t> a(m * k), b(k * n);
  tune::DeviceBuffer<float> c(m * n);
  const std::vector<std::uint16_t> ha = kernels::random_bf16(ctx.rng()(), a.size());
  const std::vector<std::uint16_t> hb = kernels::random_bf16(ctx.rng()(), b.size());
  a.upload(ha);
  b.upload(hb);

  c.poison();
  gemm.launch(grid, threads, smem, ctx.stream(), a, b, c, mi, ni, ki);
  const std::vector<float> hc = c.download();
  const auto row_pitch = static_cast<std::size_t>(n);
  for (std::size_t i = 0; i < hc.size(); ++i) {
    if (!std::isfinite(hc[i])) {
      throw tune::check_error("'C' is wrong: element (" + std::to_string(i / row_pitch) + ", " +
                              std::to_string(i % row_pitch) + ") is " + std::to_string(hc[i]) +
                              " (never written, or not finite)");
    }
  }
  const Sample s = choose_sample(ctx.rng(), m, n, bm, bn);
  const std::vector<double> ref = kernels::gemm_reference_samples(
      ha.data(), hb.data(), ni, ki, s.rows.data(), s.cols.data(), s.rows.size());
  std::vector<float> got(s.rows.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    got[i] =
        hc[static_cast<std::size_t>(s.rows[i]) * row_pitch + static_cast<std::size_t>(s.cols[i])];
  }
  tune::check_close(got, ref, kernels::gemm_tolerance, "C (sampled)");

  // What the bench times: the buffers are shared handles, captured by value.
  return [=](CUstream stream) { gemm.launch(grid, threads, smem, stream, a, b, c, mi, ni, ki); };
}

}  // namespace

TUNE_HARNESS(setup)
