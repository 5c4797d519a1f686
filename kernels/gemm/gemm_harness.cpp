// The harness of kernels/gemm/gemm.cu (contract and gate: docs/kernels.md), with a bucket
// fixture: random bf16 inputs in [-1, 1) and the host reference are made once per bucket
// (prepare); each candidate gets C poisoned with NaN (declared as the fixture's output), one
// checked launch, then the closure the bench times.
//
// The gate: every element of C must be written (no NaN left from the poison, nothing
// infinite), and the reference rows of C must match the double-precision product of the same
// bf16 inputs within gemm_tolerance. The reference is every row when the bucket's product is
// at most 2^31 multiply-adds (a full check); beyond that (the square 4096^3 bucket is 69 G
// multiply-adds) it is whole rows: the first and last row of every 32-row band in the first
// 256 rows (every tile edge of every BM in the space, as tiles repeat), the last row and 32
// random rows. Whole rows cover every column, so every column tile edge is checked too. The
// rows are computed once per bucket on the host's cores.
#include <tuner/cuda/harness.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../common/random.hpp"
#include "reference.hpp"

namespace {

// What every candidate of a bucket shares.
struct Gemm {
  std::int64_t m = 0, n = 0, k = 0;
  tune::DeviceBuffer<std::uint16_t> a, b;
  tune::DeviceBuffer<float> c;
  std::vector<int> rows;    // the rows of C the gate compares, ascending
  std::vector<double> ref;  // their reference values, row after row
};

// The rows the gate compares (see the top of this file).
std::vector<int> reference_rows(std::mt19937_64& rng, std::int64_t m, std::int64_t n,
                                std::int64_t k) {
  std::set<int> rows;
  if (m * n * k <= (std::int64_t{1} << 31)) {
    for (std::int64_t r = 0; r < m; ++r)
      rows.insert(static_cast<int>(r));
  } else {
    for (std::int64_t r = 0; r < std::min<std::int64_t>(m, 256); r += 32) {
      rows.insert(static_cast<int>(r));
      rows.insert(static_cast<int>(std::min(r + 31, m - 1)));
    }
    rows.insert(static_cast<int>(m - 1));
    std::uniform_int_distribution<std::int64_t> row(0, m - 1);
    for (int i = 0; i < 32; ++i)
      rows.insert(static_cast<int>(row(rng)));
  }
  return {rows.begin(), rows.end()};
}

Gemm prepare(tune::BucketContext& ctx) {
  Gemm g;
  g.m = ctx.shape().int_("M");
  g.n = ctx.shape().int_("N");
  g.k = ctx.shape().int_("K");
  g.a = tune::DeviceBuffer<std::uint16_t>(g.m * g.k);
  g.b = tune::DeviceBuffer<std::uint16_t>(g.k * g.n);
  g.c = tune::DeviceBuffer<float>(g.m * g.n);
  const std::vector<std::uint16_t> ha = kernels::random_bf16(ctx.rng()(), g.a.size());
  const std::vector<std::uint16_t> hb = kernels::random_bf16(ctx.rng()(), g.b.size());
  g.a.upload(ha);
  g.b.upload(hb);
  ctx.output(g.c);

  // The reference rows, split over the host's cores.
  g.rows = reference_rows(ctx.rng(), g.m, g.n, g.k);
  const auto n = static_cast<std::size_t>(g.n);
  g.ref.resize(g.rows.size() * n);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (std::size_t i = t; i < g.rows.size(); i += threads) {
        kernels::gemm_reference(ha.data() + static_cast<std::size_t>(g.rows[i]) * g.k, hb.data(),
                                g.ref.data() + i * n, 1, static_cast<int>(g.n),
                                static_cast<int>(g.k));
      }
    });
  }
  for (std::thread& t : pool)
    t.join();
  return g;
}

tune::Launch setup(tune::SetupContext& ctx, Gemm& g) {
  const std::int64_t m = g.m, n = g.n, k = g.k;
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
  const tune::DeviceBuffer<std::uint16_t> a = g.a, b = g.b;
  const tune::DeviceBuffer<float> c = g.c;

  // C was poisoned by the worker before this setup (ctx.output in prepare).
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
  std::vector<float> got(g.ref.size());
  for (std::size_t i = 0; i < g.rows.size(); ++i) {
    const float* row = hc.data() + static_cast<std::size_t>(g.rows[i]) * row_pitch;
    std::copy(row, row + row_pitch, got.begin() + static_cast<std::ptrdiff_t>(i * row_pitch));
  }
  tune::check_close(got, g.ref, kernels::gemm_tolerance,
                    g.rows.size() == static_cast<std::size_t>(m) ? "C" : "C (reference rows)");

  // What the bench times: the buffers are shared handles, captured by value.
  return [=](CUstream stream) { gemm.launch(grid, threads, smem, stream, a, b, c, mi, ni, ki); };
}

}  // namespace

TUNE_HARNESS_WITH_FIXTURE(prepare, setup)
