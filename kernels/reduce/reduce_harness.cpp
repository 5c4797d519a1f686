// The harness of kernels/reduce/reduce.cu (contract and gate: docs/kernels.md), with a bucket
// fixture: random inputs in [-1, 1] (mixed signs: the fp64 accumulation must hold up under
// cancellation) and their double-precision sum are made once per bucket; each candidate gets
// the result (the fixture's output) and its own partials poisoned with NaN, one checked run of both
// entries against the double-precision sum, then the closure the bench times: `reduce`, then
// `reduce_final`, as one candidate.
#include <tune/kernel/reduce.hpp>  // its param and shape names, written by the configure
#include <tuner/cuda/harness.hpp>

#include <cstdint>
#include <vector>

#include "../common/random.hpp"
#include "reference.hpp"

namespace {

using namespace tune::kernel::reduce;  // param::X, shape::X

// What every candidate of a bucket shares: the input, the sum and its host reference. The
// partial sums depend on the candidate's tile, so they stay per candidate.
struct Reduce {
  std::int64_t n = 0;
  tune::DeviceBuffer<float> in, out;
  std::vector<double> ref;
};

Reduce prepare(tune::BucketContext& ctx) {
  Reduce f;
  f.n = ctx.shape().int_(shape::N);
  f.in = tune::DeviceBuffer<float>(f.n);
  f.out = tune::DeviceBuffer<float>(1);
  const std::vector<float> hin = kernels::random_floats(ctx.rng()(), f.in.size(), -1.0f, 1.0f);
  f.in.upload(hin);
  f.ref = {kernels::reduce_reference(hin.data(), hin.size())};
  ctx.output(f.out);  // poisoned before every candidate
  return f;
}

tune::Launch setup(tune::SetupContext& ctx, Reduce& f) {
  const std::int64_t n = f.n;

  // Both entries of the candidate's module, and the tile it was compiled for.
  tune::Function reduce = ctx.entry();
  tune::Function reduce_final = ctx.module().function("reduce_final");
  const std::int64_t tile = ctx.module().global("reduce_tile").download<int>();
  const auto threads = static_cast<unsigned>(ctx.module().global("reduce_threads").download<int>());
  const std::int64_t blocks = (n + tile - 1) / tile;
  const auto grid = static_cast<unsigned>(blocks);
  const auto count = static_cast<int>(blocks);
  const auto n_arg = static_cast<long long>(n);  // the kernel takes a long long
  const tune::DeviceBuffer<float> in = f.in, out = f.out;

  tune::DeviceBuffer<double> partials(blocks);
  partials.poison();
  reduce.launch(grid, threads, 0, ctx.stream(), in, partials, n_arg);
  reduce_final.launch(1u, threads, 0, ctx.stream(), partials, out, count);
  tune::check_close(out.download(), f.ref, kernels::reduce_tolerance, "sum");

  return [=](CUstream stream) {
    reduce.launch(grid, threads, 0, stream, in, partials, n_arg);
    reduce_final.launch(1u, threads, 0, stream, partials, out, count);
  };
}

}  // namespace

TUNE_HARNESS_WITH_FIXTURE(prepare, setup)
