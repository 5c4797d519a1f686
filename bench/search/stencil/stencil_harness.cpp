// The harness of bench/search/stencil/stencil.cu, with a bucket fixture: the input, a cheap
// deterministic pattern over the 64 MB grid, is made and uploaded once per bucket, and the
// output is poisoned before every candidate. Each candidate gets one launch checked against the
// host's five-point sum on every 7th row and every interior column of the last interior row,
// then the closure the bench times.
#include <tune/kernel/stencil.hpp>  // its param and shape names, written by the configure
#include <tuner/cuda/harness.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace tune::kernel::stencil;  // param::X, shape::X

// What every candidate of a bucket shares: the grid on the host (for the check) and on the
// device, and the output.
struct Stencil {
  int n = 0;
  std::vector<float> hin;
  tune::DeviceBuffer<float> in, out;
};

Stencil prepare(tune::BucketContext& ctx) {
  Stencil f;
  f.n = static_cast<int>(ctx.shape().int_(shape::N));
  const std::size_t count = static_cast<std::size_t>(f.n) * static_cast<std::size_t>(f.n);
  f.hin.resize(count);
  for (std::size_t i = 0; i < count; ++i)
    f.hin[i] = static_cast<float>((i * 2654435761u >> 13) & 1023u) / 1024.0f - 0.5f;
  f.in = tune::DeviceBuffer<float>(static_cast<std::int64_t>(count));
  f.out = tune::DeviceBuffer<float>(static_cast<std::int64_t>(count));
  f.in.upload(f.hin);
  ctx.output(f.out);  // poisoned before every candidate
  return f;
}

tune::Launch setup(tune::SetupContext& ctx, Stencil& f) {
  const int n = f.n;
  const auto bx = static_cast<unsigned>(ctx.params().int_(param::BX));
  const auto by = static_cast<unsigned>(ctx.params().int_(param::BY));
  const int tile_x = static_cast<int>(bx * ctx.params().int_(param::TX));
  const int tile_y = static_cast<int>(by * ctx.params().int_(param::TY));
  const int tiles_x = (n - 2 + tile_x - 1) / tile_x;
  const int tiles = tiles_x * ((n - 2 + tile_y - 1) / tile_y);
  // A strided grid: eight blocks per multiprocessor of an H200 (132), at most one per tile.
  const auto grid =
      static_cast<unsigned>(ctx.params().int_(param::STRIDE) ? std::min(tiles, 8 * 132) : tiles);

  const tune::DeviceBuffer<float> in = f.in, out = f.out;
  tune::Function stencil = ctx.entry();
  stencil.launch(grid, tune::Dim3(bx, by), 0, ctx.stream(), in, out, n, tiles_x, tiles);

  const std::vector<float> got = out.download();
  const std::vector<float>& hin = f.hin;
  const auto row = static_cast<std::size_t>(n);
  auto check_row = [&](int y) {
    for (int x = 1; x < n - 1; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * row + static_cast<std::size_t>(x);
      const float want =
          0.5f * hin[i] + 0.125f * (hin[i - 1] + hin[i + 1] + hin[i - row] + hin[i + row]);
      if (!(std::fabs(got[i] - want) <= 1e-6f))
        throw tune::check_error("out[" + std::to_string(y) + "][" + std::to_string(x) + "] is " +
                                std::to_string(got[i]) + ", expected " + std::to_string(want));
    }
  };
  for (int y = 1; y < n - 1; y += 7)
    check_row(y);
  check_row(n - 2);

  return [=](CUstream stream) {
    stencil.launch(grid, tune::Dim3(bx, by), 0, stream, in, out, n, tiles_x, tiles);
  };
}

}  // namespace

TUNE_HARNESS_WITH_FIXTURE(prepare, setup)
