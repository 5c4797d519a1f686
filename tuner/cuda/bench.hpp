// Device-event timing of a launch closure (docs/measurement.md "Timing one candidate"):
//
// - a first launch (errors surface here, lazy module loading happens here), then an estimate
//   from five timed launches;
// - warm-up by time (`warmup_ms` of launches, to bring the clocks up);
// - reps from the rep budget over the estimate, within [min_reps, max_reps];
// - before every rep, outside the timed window: the L2 flushed by writing a buffer twice the
//   device's L2 (allocated once per context), then the spin kernel, so that the start event is
//   never recorded on an idle GPU (an idle GPU adds the launch latency to the first kernel);
// - kernels estimated under `batch_below_ms` are timed in batches: a CUDA graph of N launches
//   (stream capture), the L2 flushed once before each batch, reported per launch;
// - median, min, p10 and p90 of the reps;
// - warnings for a throttling GPU (NVML clock event reasons, where NVML is available), other
//   processes on the device, and a large spread.
#pragma once

#include <cuda.h>

#include <optional>
#include <string>
#include <vector>

#include <tuner/core/search/early_reject.hpp>
#include <tuner/core/space/space.hpp>
#include <tuner/cuda/driver.hpp>
#include <tuner/cuda/harness.hpp>

namespace tune {

/// How the bench times. The first five are the space's `[bench]` table.
struct BenchOptions {
  double warmup_ms = 25;  ///< device time spent on warm-up launches
  double rep_ms = 100;    ///< device time budget of the timed reps
  int min_reps = 5;
  int max_reps = 1000;
  bool clear_l2 = true;  ///< flush the L2 before every rep (every batch when batched)

  /// When to time in batches of launches captured into a CUDA graph.
  enum class Batching { automatic, always, never };
  Batching batching = Batching::automatic;
  /// With automatic batching, kernels estimated under this are batched (milliseconds).
  double batch_below_ms = 0.02;
  /// A batch holds about this much device time (milliseconds), within [2, max_batch] launches.
  double batch_target_ms = 0.2;
  int max_batch = 200;
  /// A spread (p90 - p10) over this fraction of the median is reported as a warning.
  double spread_warning = 0.10;
  /// Early rejection (tuner/core/search/early_reject.hpp): the timed reps are read at the
  /// looks of `early_reject_looks` and stop once they are clearly above `reject->above_ms`.
  std::optional<EarlyReject> reject;

  /// The options of a space's `[bench]` table, the rest default.
  static BenchOptions from(const BenchSettings& settings);
};

/// The warm-up of a candidate in a worker that has timed one already (docs/measurement.md
/// "Warm-up in a warm worker"), in milliseconds: the clocks are up and stay up between two
/// candidates, so the warm-up only has to bring the new module's code into the caches.
inline constexpr double warm_worker_warmup_ms = 2;

/// What the bench measured. Times in milliseconds, per launch.
struct BenchResult {
  double median_ms = 0;
  double min_ms = 0;
  double p10_ms = 0;
  double p90_ms = 0;
  int reps = 0;          ///< timed reps (batches when batched)
  bool batched = false;  ///< timed as CUDA graphs of `batch_size` launches
  int batch_size = 1;
  std::vector<double> samples_ms;     ///< every rep's time per launch, in order
  std::vector<std::string> warnings;  ///< throttling, other processes, large spread
  /// Where the bench's own time went: `timed_ms` is the device time of the timed reps (from
  /// the end of warm-up to the end of the last rep, the flush and spin before each included),
  /// `warmup_ms` the rest of the call's wall time (first launch, estimate, graph capture,
  /// warm-up).
  double warmup_ms = 0;
  double timed_ms = 0;
  /// The reps stopped early (BenchOptions::reject): `reps` and the statistics are those taken,
  /// `saved_ms` the device time of the planned reps skipped, estimated from those taken.
  bool rejected_early = false;
  double saved_ms = 0;
};

/// Times `launch` on `stream` of `ctx`; a null stream means `ctx.stream()` (the legacy default
/// stream cannot be captured into a graph). `launch` must only queue work on the stream it is
/// given. Throws tune::error (tune::cuda_error for a failed launch) when the closure fails, and
/// when a timing is not finite.
BenchResult bench(Context& ctx, const Launch& launch, CUstream stream,
                  const BenchOptions& options = {});

/// What the paired bench measured: one sample per arm and pair, per launch, in milliseconds.
struct PairedBenchResult {
  std::vector<double> a_ms;  ///< arm A's time in each pair, in pair order
  std::vector<double> b_ms;  ///< arm B's time in each pair, in pair order
  int pairs = 0;
  bool batched = false;  ///< both arms timed as CUDA graphs of `batch_size` launches
  int batch_size = 1;
  std::vector<std::string> warnings;  ///< throttling, other processes
};

/// Times `a` and `b` against each other for the paired runoff (docs/measurement.md "The paired
/// runoff"):
/// a first launch of each, an estimate of each, warm-up alternating A and B, then `pairs`
/// pairs timed in strict alternation (AB in even pairs, BA in odd ones, so that neither arm
/// always goes first), the L2 flushed and the spin kernel queued before each arm. With
/// `pairs` 0 the count is `rep_ms` over A's estimate, within [max(min_reps, 20), max_reps].
/// When either arm is estimated under `batch_below_ms` (automatic batching), both are timed as
/// CUDA graphs of the same number of launches. Throws as `bench` does.
PairedBenchResult bench_paired(Context& ctx, const Launch& a, const Launch& b, CUstream stream,
                               const BenchOptions& options = {}, int pairs = 0);

/// The `q` quantile (0..1) of `values`, interpolating linearly between order statistics (as
/// numpy does by default); NaN for no values.
double quantile(std::vector<double> values, double q);

}  // namespace tune
