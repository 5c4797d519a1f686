// The harness of sweep.cu with a bucket fixture: the input and the reference once per bucket,
// per candidate the output poisoned (declared), one launch, and the gate. The gate runs on the
// device where tune has one (TUNE_HAS_DEVICE_GATE) and SWEEP_HOST_GATE is not defined; else the
// output is downloaded and compared on the host, as before the device gate. The same file
// builds against this tree and against a baseline tree without the device gate.
#include <tuner/cuda/harness.hpp>

#include <cstdint>
#include <vector>

#if defined(TUNE_HAS_DEVICE_GATE) && !defined(SWEEP_HOST_GATE)
#define SWEEP_DEVICE_GATE 1
#endif

namespace {

struct Sweep {
  std::int64_t n = 0;
  tune::DeviceBuffer<float> x, out;
#ifdef SWEEP_DEVICE_GATE
  tune::DeviceBuffer<float> ref;
#else
  std::vector<float> ref;
#endif
};

Sweep prepare(tune::BucketContext& ctx) {
  Sweep f;
  f.n = ctx.shape().int_("N");
  f.x = tune::DeviceBuffer<float>(f.n);
  f.out = tune::DeviceBuffer<float>(f.n);
  const std::vector<float> hx = f.x.fill_random(ctx.rng());
  std::vector<float> ref(hx.size());
  for (std::size_t i = 0; i < hx.size(); ++i)
    ref[i] = 2.0f * hx[i] + 1.0f;
#ifdef SWEEP_DEVICE_GATE
  f.ref = tune::to_device(ref);
#else
  f.ref = std::move(ref);
#endif
  ctx.output(f.out);
  return f;
}

tune::Launch setup(tune::SetupContext& ctx, Sweep& f) {
  const std::int64_t per_block =
      ctx.params().int_("BLOCK") * ctx.params().int_("ITEMS") * ctx.params().int_("VEC");
  const auto grid = static_cast<unsigned>((f.n + per_block - 1) / per_block);
  const auto threads = static_cast<unsigned>(ctx.params().int_("BLOCK"));
  const auto n = static_cast<long long>(f.n);
  tune::Function sweep = ctx.entry();
  const tune::DeviceBuffer<float> x = f.x, out = f.out;
  sweep.launch(grid, threads, 0, ctx.stream(), n, x, out);
#ifdef SWEEP_DEVICE_GATE
  tune::check_close(out, f.ref, 1e-6, "out");
#else
  tune::check_close(out.download(), f.ref, 1e-6, "out");
#endif
  return [=](CUstream s) { sweep.launch(grid, threads, 0, s, n, x, out); };
}

}  // namespace

TUNE_HARNESS_WITH_FIXTURE(prepare, setup)
