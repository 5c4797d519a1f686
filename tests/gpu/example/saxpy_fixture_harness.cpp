// The example harness of docs/harness.md "Bucket fixtures": the saxpy harness with its inputs
// and its reference built once per bucket (prepare) instead of once per candidate, and kept
// on the device, where the gate compares.
#include <tuner/cuda/harness.hpp>

#include <cstdint>
#include <vector>

namespace {

// What every candidate of the bucket shares: inputs on the device, the output, the reference.
struct Saxpy {
  std::int64_t n = 0;
  float a = 1.5f;
  tune::DeviceBuffer<float> x, y, out;
  tune::DeviceBuffer<double> reference;
};

Saxpy prepare(tune::BucketContext& ctx) {
  Saxpy f;
  f.n = ctx.shape().int_("N");
  f.x = tune::DeviceBuffer<float>(f.n);
  f.y = tune::DeviceBuffer<float>(f.n);
  f.out = tune::DeviceBuffer<float>(f.n);
  const std::vector<float> hx = f.x.fill_random(ctx.rng());
  const std::vector<float> hy = f.y.fill_random(ctx.rng());
  std::vector<double> reference(hx.size());
  for (std::size_t i = 0; i < hx.size(); ++i)
    reference[i] = static_cast<double>(f.a) * hx[i] + hy[i];
  f.reference = tune::to_device(reference);  // once: every gate compares on the device
  ctx.output(f.out);                         // poisoned before every candidate
  return f;
}

tune::Launch setup(tune::SetupContext& ctx, Saxpy& f) {
  const std::int64_t block = ctx.params().int_("BLOCK");
  const std::int64_t items = ctx.params().int_("ITEMS");
  tune::Function saxpy = ctx.entry();
  const auto grid = static_cast<unsigned>((f.n + block * items - 1) / (block * items));
  const auto threads = static_cast<unsigned>(block);
  const int count = static_cast<int>(f.n);
  const float a = f.a;
  // The gate: the output was poisoned by the worker; launch once and compare.
  saxpy.launch(grid, threads, 0, ctx.stream(), count, a, f.x, f.y, f.out);
  tune::check_close(f.out, f.reference, 1e-6, "out");
  return [=, x = f.x, y = f.y, out = f.out](CUstream stream) {
    saxpy.launch(grid, threads, 0, stream, count, a, x, y, out);
  };
}

}  // namespace

TUNE_HARNESS_WITH_FIXTURE(prepare, setup)
