// The harness of kernels/softmax/softmax.cu (contract and gate: docs/kernels.md). Fresh random
// inputs in [-8, 8] for every candidate (a spread wide enough that subtracting the row maximum
// matters), the output poisoned with NaN, one checked launch against the double-precision
// reference over the whole output, then the closure the bench times.
#include <tuner/cuda/harness.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "../common/random.hpp"
#include "reference.hpp"

namespace {

tune::Launch setup(tune::SetupContext& ctx) {
  const std::int64_t rows = ctx.shape().int_("ROWS");
  const std::int64_t cols = ctx.shape().int_("COLS");
  const std::int64_t block = ctx.params().int_("BLOCK");
  const std::int64_t rows_per_block = ctx.params().int_("ROWS_PER_BLOCK");
  const std::int64_t vec = ctx.params().int_("VEC");
  if (cols % vec != 0) {
    throw tune::error("COLS " + std::to_string(cols) + " is not a multiple of VEC " +
                      std::to_string(vec) + " (the space must prune this config)");
  }

  tune::Function softmax = ctx.entry();
  const auto grid = static_cast<unsigned>((rows + rows_per_block - 1) / rows_per_block);
  const auto threads = static_cast<unsigned>(block);
  // The row cache: ROWS_PER_BLOCK rows of fp32 (launch raises the limit above 48 KiB).
  const auto smem = static_cast<std::size_t>(rows_per_block * cols) * sizeof(float);
  const int rows_i = static_cast<int>(rows), cols_i = static_cast<int>(cols);

  tune::DeviceBuffer<float> in(rows * cols), out(rows * cols);
  const std::vector<float> hin = kernels::random_floats(ctx.rng()(), in.size(), -8.0f, 8.0f);
  in.upload(hin);

  out.poison();
  softmax.launch(grid, threads, smem, ctx.stream(), in, out, rows_i, cols_i);
  std::vector<double> ref(hin.size());
  kernels::softmax_reference(hin.data(), ref.data(), rows_i, cols_i);
  tune::check_close(out.download(), ref, kernels::softmax_tolerance, "out");

  return [=](CUstream stream) {
    softmax.launch(grid, threads, smem, stream, in, out, rows_i, cols_i);
  };
}

}  // namespace

TUNE_HARNESS(setup)
