// The harness of axpy.cu: random inputs, one checked launch against the host reference (the
// correctness gate that rejects SKIP=1), then the launch the bench times.
#include <tuner/cuda/harness.hpp>

#include <cstdint>
#include <vector>

namespace {

tune::Launch setup(tune::SetupContext& ctx) {
  const std::int64_t n = ctx.shape().int_("N");
  const std::int64_t block = ctx.params().int_("BLOCK");
  const std::int64_t items = ctx.params().int_("ITEMS");
  tune::DeviceBuffer<float> x(n), y(n), out(n);
  const std::vector<float> hx = x.fill_random(ctx.rng());
  const std::vector<float> hy = y.fill_random(ctx.rng());
  const float a = 1.5f;
  tune::Function axpy = ctx.entry();
  const auto grid = static_cast<unsigned>((n + block * items - 1) / (block * items));
  const auto threads = static_cast<unsigned>(block);
  const int count = static_cast<int>(n);

  out.poison();
  axpy.launch(grid, threads, 0, ctx.stream(), count, a, x, y, out);
  std::vector<double> reference(hx.size());
  for (std::size_t i = 0; i < hx.size(); ++i)
    reference[i] = static_cast<double>(a) * hx[i] + hy[i];
  tune::check_close(out.download(), reference, 1e-6, "out");

  return [=](CUstream stream) { axpy.launch(grid, threads, 0, stream, count, a, x, y, out); };
}

}  // namespace

TUNE_HARNESS(setup)
