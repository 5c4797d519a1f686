// The harness of bench/search/transpose/transpose.cu, with a bucket fixture: the input batch (a
// cheap deterministic pattern) and its scaled transpose, the reference, are made on the host and
// uploaded once per bucket; the output is poisoned before every candidate. Each candidate gets
// one launch checked on the device against the reference (every element), then the closure the
// bench times.
#include <tune/kernel/transpose.hpp>  // its param and shape names, written by the configure
#include <tuner/cuda/harness.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace tune::kernel::transpose;  // param::X, shape::X

constexpr float kAlpha = 1.5f;

// What every candidate of a bucket shares: the input and the reference on the device, and the
// output.
struct Transpose {
  int batch = 0, rows = 0, cols = 0;
  tune::DeviceBuffer<float> in, out, reference;
};

Transpose prepare(tune::BucketContext& ctx) {
  Transpose f;
  f.batch = static_cast<int>(ctx.shape().int_(shape::BATCH));
  f.rows = static_cast<int>(ctx.shape().int_(shape::ROWS));
  f.cols = static_cast<int>(ctx.shape().int_(shape::COLS));
  const auto rows = static_cast<std::size_t>(f.rows), cols = static_cast<std::size_t>(f.cols);
  const std::size_t plane = rows * cols, count = static_cast<std::size_t>(f.batch) * plane;
  std::vector<float> hin(count), want(count);
  for (std::size_t i = 0; i < count; ++i)
    hin[i] = static_cast<float>((i * 2654435761u >> 11) & 4095u) / 4096.0f - 0.5f;
  for (std::size_t b = 0; b < static_cast<std::size_t>(f.batch); ++b)
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c)
        want[b * plane + c * rows + r] = kAlpha * hin[b * plane + r * cols + c];
  f.in = tune::DeviceBuffer<float>(static_cast<std::int64_t>(count));
  f.out = tune::DeviceBuffer<float>(static_cast<std::int64_t>(count));
  f.in.upload(hin);
  f.reference = tune::to_device(want);  // once: every gate compares on the device
  ctx.output(f.out);                    // poisoned before every candidate
  return f;
}

tune::Launch setup(tune::SetupContext& ctx, Transpose& f) {
  const auto tx = static_cast<int>(ctx.params().int_(param::TX));
  const auto ty = static_cast<int>(ctx.params().int_(param::TY));
  const auto threads = static_cast<unsigned>(ctx.params().int_(param::THREADS));
  if (f.rows % ty != 0 || f.cols % tx != 0 || f.cols % 4 != 0 || f.rows % 4 != 0)
    throw tune::check_error("the shape " + std::to_string(f.rows) + " x " + std::to_string(f.cols) +
                            " is not whole tiles of " + std::to_string(ty) + " x " +
                            std::to_string(tx) + " (or not whole float4 rows)");
  const tune::Dim3 grid(static_cast<unsigned>(f.cols / tx), static_cast<unsigned>(f.rows / ty),
                        static_cast<unsigned>(f.batch));
  const int rows = f.rows, cols = f.cols;
  const float alpha = kAlpha;
  const tune::DeviceBuffer<float> in = f.in, out = f.out;
  tune::Function transpose = ctx.entry();
  transpose.launch(grid, tune::Dim3(threads), 0, ctx.stream(), in, out, rows, cols, alpha);
  tune::check_close(out, f.reference, 1e-6, "out");  // exact products: any error is a bug

  return [=](CUstream stream) {
    transpose.launch(grid, tune::Dim3(threads), 0, stream, in, out, rows, cols, alpha);
  };
}

}  // namespace

TUNE_HARNESS_WITH_FIXTURE(prepare, setup)
