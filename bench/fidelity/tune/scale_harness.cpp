// The harness of scale.cu, as docs/harness.md writes one: random input, the output poisoned,
// one launch checked against the host reference, then the launch the bench times.
#include <tune/kernel/scale.hpp>  // its param and shape names, written by the configure
#include <tuner/cuda/harness.hpp>

#include <cstdint>
#include <vector>

namespace {

using namespace tune::kernel::scale;  // param::X, shape::X

tune::Launch setup(tune::SetupContext& ctx) {
  const std::int64_t n = ctx.shape().int_(shape::N);
  const auto block = static_cast<unsigned>(ctx.params().int_(param::BLOCK));
  const auto items = static_cast<unsigned>(ctx.params().int_(param::ITEMS));
  tune::DeviceBuffer<float> x(n), y(n);
  const std::vector<float> hx = x.fill_random(ctx.rng());
  y.poison();
  tune::Function scale = ctx.entry();
  const auto grid = static_cast<unsigned>((n + block * items - 1) / (block * items));
  const int count = static_cast<int>(n);
  scale.launch(grid, block, 0, ctx.stream(), y, x, count);
  std::vector<double> reference(hx.size());
  for (std::size_t i = 0; i < hx.size(); ++i)
    reference[i] = 2.0 * hx[i];
  tune::check_close(y.download(), reference, 0, "y");
  return [=](CUstream stream) { scale.launch(grid, block, 0, stream, y, x, count); };
}

}  // namespace

TUNE_HARNESS(setup)
