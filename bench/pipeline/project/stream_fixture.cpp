// The stream kernel's harness with a bucket fixture: the 256 MB input and the reference (on
// the device) once per bucket; per candidate the output is poisoned (declared), one launch,
// and the device gate (tune::check_close on device buffers: the norms come back).
#include <tuner/cuda/harness.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace {

struct Stream {
  std::int64_t n = 0;
  tune::DeviceBuffer<float> x, out, ref;
};

Stream prepare(tune::BucketContext& ctx) {
  Stream f;
  f.n = ctx.shape().int_("N");
  f.x = tune::DeviceBuffer<float>(f.n);
  f.out = tune::DeviceBuffer<float>(f.n);
  f.ref = tune::DeviceBuffer<float>(f.n);
  const std::vector<float> hx = f.x.fill_random(ctx.rng());
  std::vector<float> ref(hx.size());
  for (std::size_t i = 0; i < hx.size(); ++i)
    ref[i] = static_cast<float>(2.0 * hx[i] + 1.0);
  f.ref.upload(ref);
  ctx.output(f.out);
  return f;
}

tune::Launch setup(tune::SetupContext& ctx, Stream& f) {
  const std::int64_t block = ctx.params().int_("BLOCK");
  const std::int64_t per_block = block * ctx.params().int_("ITEMS") * ctx.params().int_("VEC");
  const auto grid = static_cast<unsigned>((f.n + per_block - 1) / per_block);
  const auto threads = static_cast<unsigned>(block);
  const auto n = static_cast<long long>(f.n);
  tune::Function stream = ctx.entry();
  const tune::DeviceBuffer<float> x = f.x, out = f.out;
  stream.launch(grid, threads, 0, ctx.stream(), n, x, out);
  tune::check_close(out, f.ref, 1e-6, "out");
  return [=](CUstream s) { stream.launch(grid, threads, 0, s, n, x, out); };
}

}  // namespace

TUNE_HARNESS_WITH_FIXTURE(prepare, setup)
