// The harness of examples/tile/tile.cu: ctx.entry() is the candidate's instance of tile_gemm.
#include <tune/kernel/tile.hpp>  // its param and shape names, written by the configure
#include <tuner/cuda/harness.hpp>

#include <cstdint>
#include <vector>

namespace {

using namespace tune::kernel::tile;  // param::X, shape::X

tune::Launch setup(tune::SetupContext& ctx) {
  const int m = static_cast<int>(ctx.shape().int_(shape::M));
  const int n = static_cast<int>(ctx.shape().int_(shape::N));
  const int k = static_cast<int>(ctx.shape().int_(shape::K));
  const auto bm = static_cast<unsigned>(ctx.params().int_(param::BM));
  const auto bn = static_cast<unsigned>(ctx.params().int_(param::BN));

  tune::DeviceBuffer<float> a(static_cast<std::size_t>(m) * k);
  tune::DeviceBuffer<float> b(static_cast<std::size_t>(k) * n);
  tune::DeviceBuffer<float> c(static_cast<std::size_t>(m) * n);
  const std::vector<float> ha = a.fill_random(ctx.rng());
  const std::vector<float> hb = b.fill_random(ctx.rng());

  tune::Function f = ctx.entry();
  const unsigned gx = (static_cast<unsigned>(n) + bn - 1) / bn;
  const unsigned gy = (static_cast<unsigned>(m) + bm - 1) / bm;

  // The gate on a sample of rows: the full reference of the large bucket is 8.6 GFLOP.
  c.poison();
  f.launch(tune::Dim3{gx, gy, 1}, tune::Dim3{bn, bm, 1}, 0, ctx.stream(), a, b, c, m, n, k);
  const std::vector<float> out = c.download();
  std::vector<double> got;
  std::vector<double> want;
  for (int i = 0; i < m; i += 61) {
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p)
        s += static_cast<double>(ha[static_cast<std::size_t>(i) * k + p]) *
             hb[static_cast<std::size_t>(p) * n + j];
      want.push_back(s);
      got.push_back(out[static_cast<std::size_t>(i) * n + j]);
    }
  }
  tune::check_close(got, want, 1e-5, "C");
  return [=](CUstream stream) {
    f.launch(tune::Dim3{gx, gy, 1}, tune::Dim3{bn, bm, 1}, 0, stream, a, b, c, m, n, k);
  };
}

}  // namespace

TUNE_HARNESS(setup)
