// The harness of kernels/softmax/softmax.cu (contract and gate: docs/kernels.md), with a bucket
// fixture: random inputs in [-8, 8] (a spread wide enough that subtracting the row maximum
// matters) and the double-precision reference over the whole output are made once per bucket;
// each candidate gets the output poisoned with NaN, one checked launch, then the closure the
// bench times.
#include <tune/kernel/softmax.hpp>  // its param and shape names, written by the configure
#include <tuner/cuda/harness.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "../common/random.hpp"
#include "reference.hpp"

namespace {

using namespace tune::kernel::softmax;  // param::X, shape::X

// What every candidate of a bucket shares: the input, the output and the reference, computed on
// the host once and kept on the device (the gate compares there).
struct Softmax {
  std::int64_t rows = 0, cols = 0;
  tune::DeviceBuffer<float> in, out;
  tune::DeviceBuffer<double> ref;
};

Softmax prepare(tune::BucketContext& ctx) {
  Softmax f;
  f.rows = ctx.shape().int_(shape::ROWS);
  f.cols = ctx.shape().int_(shape::COLS);
  f.in = tune::DeviceBuffer<float>(f.rows * f.cols);
  f.out = tune::DeviceBuffer<float>(f.rows * f.cols);
  const std::vector<float> hin = kernels::random_floats(ctx.rng()(), f.in.size(), -8.0f, 8.0f);
  f.in.upload(hin);
  std::vector<double> ref(hin.size());
  kernels::softmax_reference(hin.data(), ref.data(), static_cast<int>(f.rows),
                             static_cast<int>(f.cols));
  f.ref = tune::to_device(ref);
  ctx.output(f.out);  // poisoned before every candidate
  return f;
}

tune::Launch setup(tune::SetupContext& ctx, Softmax& f) {
  const std::int64_t rows = f.rows;
  const std::int64_t cols = f.cols;
  const std::int64_t block = ctx.params().int_(param::BLOCK);
  const std::int64_t rows_per_block = ctx.params().int_(param::ROWS_PER_BLOCK);
  const std::int64_t vec = ctx.params().int_(param::VEC);
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
  const tune::DeviceBuffer<float> in = f.in, out = f.out;

  softmax.launch(grid, threads, smem, ctx.stream(), in, out, rows_i, cols_i);
  tune::check_close(out, f.ref, kernels::softmax_tolerance, "out");  // on the device

  return [=](CUstream stream) {
    softmax.launch(grid, threads, smem, stream, in, out, rows_i, cols_i);
  };
}

}  // namespace

TUNE_HARNESS_WITH_FIXTURE(prepare, setup)
