// The harness of bench/search/histogram/histogram.cu, with a bucket fixture: the keys (a cheap
// deterministic hash, a quarter of them on 4 hot bins) are made, counted on the host and
// uploaded once per bucket; the output is poisoned before every candidate. Each candidate gets
// one pass (zero, count, merge, as its config asks) checked bin for bin against the host's
// counts, then the closure the bench times, the same pass.
#include <tune/kernel/histogram.hpp>  // its param and shape names, written by the configure
#include <tuner/cuda/harness.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace tune::kernel::histogram;  // param::X, shape::X

constexpr unsigned kHotBins[] = {3, 257, 700, 1021};

// What every candidate of a bucket shares: the keys on the device, the host's counts and the
// output.
struct Histogram {
  long long n = 0;
  unsigned bins = 0;
  std::vector<unsigned> counts;
  tune::DeviceBuffer<unsigned> keys, out;
};

Histogram prepare(tune::BucketContext& ctx) {
  Histogram f;
  f.n = static_cast<long long>(ctx.shape().int_(shape::N));
  f.bins = static_cast<unsigned>(ctx.shape().int_(shape::BINS));
  if (f.bins == 0 || (f.bins & (f.bins - 1)) != 0 || f.n % 4 != 0)
    throw tune::harness_error("BINS must be a power of two and N a multiple of 4 (BINS = " +
                              std::to_string(f.bins) + ", N = " + std::to_string(f.n) + ")");
  const unsigned mask = f.bins - 1;
  std::vector<unsigned> keys(static_cast<std::size_t>(f.n));
  f.counts.assign(f.bins, 0);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    auto key = static_cast<unsigned>(h);
    if ((h >> 40) % 4 == 0)  // a quarter of the keys land on the hot bins
      key = (key & ~mask) | (kHotBins[(h >> 44) % 4] & mask);
    keys[i] = key;
    ++f.counts[key & mask];
  }
  f.keys = tune::to_device(keys);
  f.out = tune::DeviceBuffer<unsigned>(static_cast<std::int64_t>(f.bins));
  ctx.output(f.out);  // poisoned before every candidate
  return f;
}

tune::Launch setup(tune::SetupContext& ctx, Histogram& f) {
  const auto threads = static_cast<unsigned>(ctx.params().int_(param::THREADS));
  const auto grid =
      static_cast<unsigned>(ctx.params().int_(param::BPSM) * ctx.context().multiprocessors());
  const std::string& priv = ctx.params().str(param::PRIV);
  const bool partial = priv != "global" && ctx.params().str(param::MERGE) == "partial";
  const std::size_t shared_bytes = priv == "warp"    ? threads / 32 * f.bins * 4
                                   : priv == "block" ? f.bins * 4
                                                     : 0;
  const long long n = f.n;
  const unsigned bins = f.bins, mask = f.bins - 1;
  const tune::DeviceBuffer<unsigned> keys = f.keys, out = f.out;
  // The grid's rows of private counts, summed by histogram_merge; out stands in when unused.
  const tune::DeviceBuffer<unsigned> scratch =
      partial ? tune::DeviceBuffer<unsigned>(static_cast<std::int64_t>(grid) * bins) : out;
  tune::Function count = ctx.entry();
  tune::Function zero = ctx.module().function("histogram_zero");
  tune::Function merge = ctx.module().function("histogram_merge");
  const unsigned zero_grid = (bins + 255) / 256, merge_grid = (bins + 31) / 32;
  auto pass = [=](CUstream stream) {
    if (!partial) zero.launch(zero_grid, tune::Dim3(256), 0, stream, out, bins);
    count.launch(grid, tune::Dim3(threads), shared_bytes, stream, keys, n, mask, out, scratch);
    if (partial) merge.launch(merge_grid, tune::Dim3(256), 0, stream, scratch, grid, bins, out);
  };
  pass(ctx.stream());

  const std::vector<unsigned> got = out.download();
  for (unsigned b = 0; b < bins; ++b)
    if (got[b] != f.counts[b])
      throw tune::check_error("out[" + std::to_string(b) + "] is " + std::to_string(got[b]) +
                              ", expected " + std::to_string(f.counts[b]));
  return pass;
}

}  // namespace

TUNE_HARNESS_WITH_FIXTURE(prepare, setup)
