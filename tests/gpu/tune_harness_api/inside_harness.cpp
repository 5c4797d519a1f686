// The harness of inside.cu: the points and the reference are made once per bucket (prepare),
// the reference by the module's own naive kernel; every candidate's output is compared with it
// exactly, on the device (tune::check_equal).
#include <tuner/cuda/harness.hpp>

#include <cstdint>

namespace {

struct Points {
  std::int64_t n = 0;
  tune::DeviceBuffer<float> x, y;
  tune::DeviceBuffer<int> out, reference;
};

unsigned blocks(std::int64_t n, std::int64_t block) {
  return static_cast<unsigned>((n + block - 1) / block);
}

Points prepare(tune::BucketContext& ctx) {
  Points p;
  p.n = ctx.shape().int_("N");
  p.x = tune::DeviceBuffer<float>(p.n);
  p.y = tune::DeviceBuffer<float>(p.n);
  p.out = tune::DeviceBuffer<int>(p.n);
  p.reference = tune::DeviceBuffer<int>(p.n);
  p.x.fill_random(ctx.rng(), -1.5f, 1.5f);
  p.y.fill_random(ctx.rng(), -1.5f, 1.5f);
  tune::Function naive = ctx.module().function("inside_naive");
  naive.launch(blocks(p.n, 256), 256, 0, ctx.stream(), static_cast<int>(p.n), p.x, p.y,
               p.reference);
  ctx.sync();
  ctx.output(p.out);  // poisoned (-1) before every candidate
  return p;
}

tune::Launch setup(tune::SetupContext& ctx, Points& p) {
  const std::int64_t block = ctx.params().int_("BLOCK");
  const unsigned grid = blocks(p.n, block);
  const auto threads = static_cast<unsigned>(block);
  const int count = static_cast<int>(p.n);
  tune::Function f = ctx.entry();
  f.launch(grid, threads, 0, ctx.stream(), count, p.x, p.y, p.out);
  tune::check_equal(p.out, p.reference, "inside");
  return [=, x = p.x, y = p.y, out = p.out](CUstream s) {
    f.launch(grid, threads, 0, s, count, x, y, out);
  };
}

}  // namespace

TUNE_HARNESS_WITH_FIXTURE(prepare, setup)
