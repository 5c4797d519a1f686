// The harness of kernels/copy.cu, built into `copy.runner` against the installed tune::runner.
#include <tune/kernel/copy.hpp>  // its param and shape names, written by the configure
#include <tuner/cuda/harness.hpp>

#include <cstdint>
#include <vector>

namespace {

using namespace tune::kernel::copy;  // param::X, shape::X

tune::Launch setup(tune::SetupContext& ctx) {
  const std::int64_t n = 1 << 20;
  const std::int64_t block = ctx.params().int_(param::BLOCK);
  tune::DeviceBuffer<float> x(n), y(n);
  const std::vector<float> hx = x.fill_random(ctx.rng());
  tune::Function copy = ctx.entry();
  const auto grid = static_cast<unsigned>((n + block - 1) / block);
  const auto threads = static_cast<unsigned>(block);
  const int count = static_cast<int>(n);
  y.poison();
  copy.launch(grid, threads, 0, ctx.stream(), x, y, count);
  tune::check_close(y.download(), hx, 0.0, "y");
  return [=](CUstream stream) { copy.launch(grid, threads, 0, stream, x, y, count); };
}

}  // namespace

TUNE_HARNESS(setup)
