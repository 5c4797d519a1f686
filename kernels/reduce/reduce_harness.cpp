// The harness of kernels/reduce/reduce.cu (contract and gate: docs/kernels.md). Fresh random
// inputs in [-1, 1] for every candidate (mixed signs: the fp64 accumulation must hold up under
// cancellation), the result and the partials poisoned with NaN, one checked run of both
// entries against the double-precision sum, then the closure the bench times: `reduce`, then
// `reduce_final`, as one candidate.
#include <tuner/cuda/harness.hpp>

#include <cstdint>
#include <vector>

#include "../common/random.hpp"
#include "reference.hpp"

namespace {

tune::Launch setup(tune::SetupContext& ctx) {
  const std::int64_t n = ctx.shape().int_("N");

  // Both entries of the candidate's module, and the tile it was compiled for.
  tune::Function reduce = ctx.entry();
  tune::Function reduce_final = ctx.module().function("reduce_final");
  const std::int64_t tile = ctx.module().global("reduce_tile").download<int>();
  const auto threads = static_cast<unsigned>(ctx.module().global("reduce_threads").download<int>());
  const std::int64_t blocks = (n + tile - 1) / tile;
  const auto grid = static_cast<unsigned>(blocks);
  const auto count = static_cast<int>(blocks);
  const auto n_arg = static_cast<long long>(n);  // the kernel takes a long long

  tune::DeviceBuffer<float> in(n), out(1);
  tune::DeviceBuffer<double> partials(blocks);
  const std::vector<float> hin = kernels::random_floats(ctx.rng()(), in.size(), -1.0f, 1.0f);
  in.upload(hin);

  partials.poison();
  out.poison();
  reduce.launch(grid, threads, 0, ctx.stream(), in, partials, n_arg);
  reduce_final.launch(1u, threads, 0, ctx.stream(), partials, out, count);
  const std::vector<double> ref = {kernels::reduce_reference(hin.data(), hin.size())};
  tune::check_close(out.download(), ref, kernels::reduce_tolerance, "sum");

  return [=](CUstream stream) {
    reduce.launch(grid, threads, 0, stream, in, partials, n_arg);
    reduce_final.launch(1u, threads, 0, stream, partials, out, count);
  };
}

}  // namespace

TUNE_HARNESS(setup)
