// The harness of faulty.cu: random inputs, one checked launch against the host reference (the
// correctness gate; the faulting variants never get past it), then the launch the bench times.
#include <tuner/cuda/harness.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

int passes(std::int64_t variant) {
  return variant == 0 ? 4 : variant == 5 ? 2 : 1;
}

tune::Launch setup(tune::SetupContext& ctx) {
  const std::int64_t n = ctx.shape().int_("N");
  const int chain = 256 * passes(ctx.params().int_("VARIANT"));
  tune::DeviceBuffer<float> x(n), out(n);
  tune::DeviceBuffer<int> flag(1);
  flag.upload(std::vector<int>{0});
  const std::vector<float> hx = x.fill_random(ctx.rng());
  tune::Function f = ctx.entry();
  const unsigned threads = 256;
  const auto grid = static_cast<unsigned>((n + threads - 1) / threads);
  const int count = static_cast<int>(n);

  out.poison();
  f.launch(grid, threads, 0, ctx.stream(), count, x, out, flag);
  // The same chain on the host, element-wise in step (so that it vectorizes).
  std::vector<float> acc(hx.size(), 0.0f);
  for (int k = 0; k < chain; ++k)
    for (std::size_t i = 0; i < acc.size(); ++i)
      acc[i] = std::fma(acc[i], 0.999f, hx[i]);
  tune::check_close(out.download(), acc, 1e-5, "out");

  return [=](CUstream stream) { f.launch(grid, threads, 0, stream, count, x, out, flag); };
}

}  // namespace

TUNE_HARNESS(setup)
