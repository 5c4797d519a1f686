// The stream kernel's harness without a fixture, as docs/harness.md's first example writes one:
// fresh inputs, a host reference and a host comparison for every candidate.
#include <tuner/cuda/harness.hpp>

#include <cstdint>
#include <vector>

namespace {

tune::Launch setup(tune::SetupContext& ctx) {
  const std::int64_t n = ctx.shape().int_("N");
  const std::int64_t block = ctx.params().int_("BLOCK");
  const std::int64_t per_block = block * ctx.params().int_("ITEMS") * ctx.params().int_("VEC");
  tune::DeviceBuffer<float> x(n), out(n);
  const std::vector<float> hx = x.fill_random(ctx.rng());
  const auto grid = static_cast<unsigned>((n + per_block - 1) / per_block);
  const auto threads = static_cast<unsigned>(block);
  const auto count = static_cast<long long>(n);
  tune::Function stream = ctx.entry();
  out.poison();
  stream.launch(grid, threads, 0, ctx.stream(), count, x, out);
  std::vector<double> ref(hx.size());
  for (std::size_t i = 0; i < hx.size(); ++i)
    ref[i] = 2.0 * hx[i] + 1.0;
  tune::check_close(out.download(), ref, 1e-6, "out");
  return [=](CUstream s) { stream.launch(grid, threads, 0, s, count, x, out); };
}

}  // namespace

TUNE_HARNESS(setup)
