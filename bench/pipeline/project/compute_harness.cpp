// The compute kernel's harness with a bucket fixture: its host reference (268 M sines in
// double) costs seconds, so it is computed once per bucket, on the host's cores, and kept on the
// device, where every candidate's gate compares.
#include <tuner/cuda/harness.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

constexpr float c = 0.25f;
constexpr int iterations = 1024;  // ITER in compute.cu

struct Compute {
  std::int64_t n = 0;
  tune::DeviceBuffer<float> in, out;
  tune::DeviceBuffer<double> ref;
};

Compute prepare(tune::BucketContext& ctx) {
  Compute f;
  f.n = ctx.shape().int_("N");
  f.in = tune::DeviceBuffer<float>(f.n);
  f.out = tune::DeviceBuffer<float>(f.n);
  const std::vector<float> hin = f.in.fill_random(ctx.rng());
  std::vector<double> ref(hin.size());
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t i = t; i < hin.size(); i += threads) {
        double x = hin[i];
        for (int k = 0; k < iterations; ++k)
          x = 0.9 * std::sin(x) + c;
        ref[i] = x;
      }
    });
  for (std::thread& t : pool)
    t.join();
  f.ref = tune::to_device(ref);
  ctx.output(f.out);
  return f;
}

tune::Launch setup(tune::SetupContext& ctx, Compute& f) {
  const std::int64_t block = ctx.params().int_("BLOCK");
  const std::int64_t per_block = block * ctx.params().int_("ITEMS");
  const auto grid = static_cast<unsigned>((f.n + per_block - 1) / per_block);
  const auto threads = static_cast<unsigned>(block);
  const int n = static_cast<int>(f.n);
  tune::Function compute = ctx.entry();
  const tune::DeviceBuffer<float> in = f.in, out = f.out;
  compute.launch(grid, threads, 0, ctx.stream(), n, in, out, c);
  tune::check_close(out, f.ref, 1e-4, "out");  // on the device
  return [=](CUstream s) { compute.launch(grid, threads, 0, s, n, in, out, c); };
}

}  // namespace

TUNE_HARNESS_WITH_FIXTURE(prepare, setup)
