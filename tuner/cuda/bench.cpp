#include <tuner/cuda/bench.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include <tuner/cuda/module.hpp>
#include <tuner/cuda/nvml.hpp>

namespace tune {

BenchOptions BenchOptions::from(const BenchSettings& settings) {
  BenchOptions o;
  o.warmup_ms = settings.warmup_ms;
  o.rep_ms = settings.rep_ms;
  o.min_reps = settings.min_reps;
  o.max_reps = settings.max_reps;
  o.clear_l2 = settings.clear_l2;
  return o;
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

namespace {

// Events owned for the length of one bench call.
class EventPool {
 public:
  ~EventPool() {
    for (CUevent e : events_)
      driver().cuEventDestroy(e);
  }
  CUevent make() {
    CUevent e = nullptr;
    TUNE_CU(driver().cuEventCreate(&e, CU_EVENT_DEFAULT));
    events_.push_back(e);
    return e;
  }

 private:
  std::vector<CUevent> events_;
};

// A CUDA graph of `count` launches of the closure, captured from `stream`.
class Batch {
 public:
  Batch(const Launch& launch, CUstream stream, int count) {
    const DriverApi& cu = driver();
    // Thread-local capture: other threads may keep using the driver meanwhile.
    TUNE_CU(cu.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CUgraph graph = nullptr;
    try {
      for (int i = 0; i < count; ++i)
        launch(stream);
    } catch (...) {
      cu.cuStreamEndCapture(stream, &graph);
      if (graph) cu.cuGraphDestroy(graph);
      throw;
    }
    TUNE_CU(cu.cuStreamEndCapture(stream, &graph));
    CUresult rc = cu.cuGraphInstantiate(&exec_, graph, 0);
    cu.cuGraphDestroy(graph);
    TUNE_CU(rc);
  }
  ~Batch() {
    if (exec_) driver().cuGraphExecDestroy(exec_);
  }
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;
  void launch(CUstream stream) const { TUNE_CU(driver().cuGraphLaunch(exec_, stream)); }

 private:
  CUgraphExec exec_ = nullptr;
};

double elapsed_ms(CUevent start, CUevent end) {
  float ms = 0;
  TUNE_CU(driver().cuEventElapsedTime(&ms, start, end));
  return static_cast<double>(ms);
}

// Warnings about the device that NVML gives while work runs: throttling, other processes.
void device_warnings(const detail::NvmlDevice& nvml, std::vector<std::string>& warnings) {
  if (const auto reasons = nvml.clock_event_reasons()) {
    if (std::string names = detail::throttle_names(*reasons); !names.empty()) {
      warnings.push_back(fmt::format("gpu throttling during the measurement: {}", names));
    }
  }
  if (const auto processes = nvml.compute_processes()) {
    std::vector<unsigned> others;
    const auto self = static_cast<unsigned>(getpid());
    for (unsigned pid : *processes) {
      if (pid != self) others.push_back(pid);
    }
    if (!others.empty()) {
      warnings.push_back(fmt::format("gpu busy: {} other process{} on the device (pid {})",
                                     others.size(), others.size() == 1 ? "" : "es",
                                     fmt::join(others, ", ")));
    }
  }
}

// What bench and bench_paired share: the stream, the events, the L2 flush and the spin in front
// of every timed region, the estimates that size batches and reps, and reading the marks.
class Timing {
 public:
  Timing(Context& ctx, CUstream stream, const BenchOptions& options)
      : ctx_(ctx), options_(options) {
    ctx.make_current();
    // The legacy default stream cannot be captured into a graph: use the context's own stream.
    stream_ = stream ? stream : ctx.stream();
    if (options.min_reps < 1 || options.max_reps < options.min_reps) {
      throw error(fmt::format("bench: reps must satisfy 1 <= min_reps <= max_reps, got {} and {}",
                              options.min_reps, options.max_reps));
    }
    if (options.clear_l2) flush_ = ctx.l2_flush_buffer(&flush_bytes_);
  }

  CUstream stream() const noexcept { return stream_; }
  CUevent event() { return events_.make(); }

  // What goes in front of every timed region: the L2 flushed, then a spin kernel that must
  // outlast the host's queueing of the region (a start event, the closure, an end event), so
  // that the start event is never recorded on an idle GPU. The spin is sized from the closures'
  // measured host time by `estimate`, starting generously.
  void before_region() {
    if (flush_) TUNE_CU(driver().cuMemsetD32Async(flush_, 0, flush_bytes_ / 4, stream_));
    spin(ctx_, stream_, spin_ms_);
  }

  // One launch of each arm (errors surface here, before anything is timed), then five flushed,
  // individually timed rounds of the arms in turn. Returns each arm's median time (at least
  // 1e-4 ms) and sizes the spin from the arms' host cost.
  std::vector<double> estimate(const std::vector<const Launch*>& arms) {
    const DriverApi& cu = driver();
    for (const Launch* arm : arms)
      (*arm)(stream_);
    TUNE_CU(cu.cuStreamSynchronize(stream_));
    constexpr int runs = 5;
    std::vector<std::pair<CUevent, CUevent>> marks;
    for (std::size_t i = 0; i < runs * arms.size(); ++i)
      marks.emplace_back(event(), event());
    double host_ms = 0;
    for (std::size_t i = 0; i < marks.size(); ++i) {
      before_region();
      TUNE_CU(cu.cuEventRecord(marks[i].first, stream_));
      const auto t0 = std::chrono::steady_clock::now();
      (*arms[i % arms.size()])(stream_);
      host_ms = std::max(
          host_ms,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      TUNE_CU(cu.cuEventRecord(marks[i].second, stream_));
    }
    TUNE_CU(cu.cuStreamSynchronize(stream_));
    std::vector<std::vector<double>> times(arms.size());
    for (std::size_t i = 0; i < marks.size(); ++i)
      times[i % arms.size()].push_back(elapsed_ms(marks[i].first, marks[i].second));
    spin_ms_ = std::clamp(2 * host_ms + 0.01, 0.02, 2.0);
    std::vector<double> out;
    for (const auto& t : times)
      out.push_back(std::max(quantile(t, 0.5), 1e-4));
    return out;
  }

  // Whether units whose shortest launch takes `shortest_ms` are timed as CUDA graphs, and of
  // how many launches (1 when not).
  bool batched(double shortest_ms) const {
    return options_.batching == BenchOptions::Batching::always ||
           (options_.batching == BenchOptions::Batching::automatic &&
            shortest_ms < options_.batch_below_ms);
  }
  int batch_size(double shortest_ms) const {
    if (!batched(shortest_ms)) return 1;
    // Clamped as a double: a huge target over a short estimate does not fit an int.
    const double wanted = std::ceil(options_.batch_target_ms / shortest_ms);
    return static_cast<int>(
        std::clamp(wanted, 2.0, static_cast<double>(std::max(2, options_.max_batch))));
  }
  // Warm-up launches for units of `unit_ms` (a round of every arm): by time, at least one.
  long warmups(double unit_ms) const {
    return static_cast<long>(std::clamp(std::ceil(options_.warmup_ms / unit_ms), 1.0, 1e6));
  }

  // Waits for the timed regions, asking NVML for warnings while they run (clock reasons read
  // on an idle GPU say only "idle"), and records the launches into their modules (`scope`).
  std::vector<std::string> finish(detail::LaunchScope& scope) {
    std::vector<std::string> warnings;
    detail::NvmlDevice nvml(ctx_.pci_bus_id());
    device_warnings(nvml, warnings);
    TUNE_CU(driver().cuStreamSynchronize(stream_));
    scope.flush();
    return warnings;
  }

  // A region's time per launch; a time that is not finite is an error.
  static double per_launch(CUevent start, CUevent end, int batch_size) {
    const double ms = elapsed_ms(start, end) / batch_size;
    if (!std::isfinite(ms) || ms < 0) {
      throw error(fmt::format("bench: a rep timed {} ms, not a finite time", ms));
    }
    return ms;
  }

 private:
  Context& ctx_;
  const BenchOptions& options_;
  CUstream stream_ = nullptr;
  EventPool events_;
  std::size_t flush_bytes_ = 0;
  CUdeviceptr flush_ = 0;
  double spin_ms_ = 0.05;
};

}  // namespace

BenchResult bench(Context& ctx, const Launch& launch, CUstream stream,
                  const BenchOptions& options) {
  const DriverApi& cu = driver();
  const auto started = std::chrono::steady_clock::now();
  // Launches inside are recorded into their modules once, at the end (see LaunchScope).
  detail::LaunchScope scope;
  Timing timing(ctx, stream, options);
  stream = timing.stream();
  const double estimate_ms = timing.estimate({&launch}).front();

  BenchResult result;
  result.batched = timing.batched(estimate_ms);
  result.batch_size = timing.batch_size(estimate_ms);
  std::unique_ptr<Batch> batch;
  if (result.batched) batch = std::make_unique<Batch>(launch, stream, result.batch_size);
  const double unit_ms = estimate_ms * result.batch_size;  // one timed unit: a launch or a batch
  auto run_unit = [&] {
    if (batch) {
      batch->launch(stream);
    } else {
      launch(stream);
    }
  };

  for (long i = 0, n = timing.warmups(unit_ms); i < n; ++i)
    run_unit();
  // Where warm-up ends on the device: the timed reps' share of the call (outside every timed
  // region, so the measurement is unchanged).
  const CUevent warmed = timing.event();
  TUNE_CU(cu.cuEventRecord(warmed, stream));

  // Timed reps.
  const int planned = static_cast<int>(std::clamp(std::round(options.rep_ms / unit_ms),
                                                  static_cast<double>(options.min_reps),
                                                  static_cast<double>(options.max_reps)));
  std::vector<std::pair<CUevent, CUevent>> marks;
  for (int i = 0; i < planned; ++i)
    marks.emplace_back(timing.event(), timing.event());
  std::size_t queued = 0;
  auto queue_to = [&](std::size_t n) {
    for (; queued < n; ++queued) {
      timing.before_region();
      TUNE_CU(cu.cuEventRecord(marks[queued].first, stream));
      run_unit();
      TUNE_CU(cu.cuEventRecord(marks[queued].second, stream));
    }
  };
  auto read_to = [&](std::size_t n) {
    for (std::size_t i = result.samples_ms.size(); i < n; ++i)
      result.samples_ms.push_back(
          Timing::per_launch(marks[i].first, marks[i].second, result.batch_size));
  };
  // Early rejection: the reps in rounds, each read and tested before the next is queued.
  if (options.reject) {
    const std::vector<int> looks = early_reject_looks(planned);
    for (int look : looks) {
      queue_to(static_cast<std::size_t>(look));
      TUNE_CU(cu.cuEventSynchronize(marks[queued - 1].second));
      read_to(queued);
      if (clearly_slower(result.samples_ms, *options.reject, static_cast<int>(looks.size()))) {
        result.rejected_early = true;
        break;
      }
    }
  }
  if (!result.rejected_early) queue_to(marks.size());
  result.warnings = timing.finish(scope);
  read_to(queued);
  result.reps = static_cast<int>(queued);
  result.timed_ms = Timing::per_launch(warmed, marks[queued - 1].second, 1);
  if (result.rejected_early)
    result.saved_ms =
        result.timed_ms / static_cast<double>(queued) * static_cast<double>(marks.size() - queued);
  result.warmup_ms = std::max(
      0.0, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                   .count() -
               result.timed_ms);
  result.median_ms = quantile(result.samples_ms, 0.5);
  result.min_ms = *std::min_element(result.samples_ms.begin(), result.samples_ms.end());
  result.p10_ms = quantile(result.samples_ms, 0.1);
  result.p90_ms = quantile(result.samples_ms, 0.9);
  if (result.median_ms > 0) {
    const double spread = (result.p90_ms - result.p10_ms) / result.median_ms;
    if (spread > options.spread_warning) {
      result.warnings.push_back(fmt::format(
          "large spread: p10 to p90 is {:.1f}% of the median (a busy or throttling gpu?)",
          100 * spread));
    }
  }
  return result;
}

PairedBenchResult bench_paired(Context& ctx, const Launch& a, const Launch& b, CUstream stream,
                               const BenchOptions& options, int pairs) {
  const DriverApi& cu = driver();
  detail::LaunchScope scope;
  Timing timing(ctx, stream, options);
  stream = timing.stream();
  // Estimates, alternating the arms.
  const std::vector<double> estimates = timing.estimate({&a, &b});
  const double estimate_a = estimates[0];
  const double estimate_b = estimates[1];

  PairedBenchResult result;
  const double shorter = std::min(estimate_a, estimate_b);
  result.batched = timing.batched(shorter);
  result.batch_size = timing.batch_size(shorter);
  std::unique_ptr<Batch> batch_a, batch_b;
  if (result.batched) {
    batch_a = std::make_unique<Batch>(a, stream, result.batch_size);
    batch_b = std::make_unique<Batch>(b, stream, result.batch_size);
  }
  auto run_unit = [&](bool arm_b) {
    if (result.batched) {
      (arm_b ? batch_b : batch_a)->launch(stream);
    } else {
      (arm_b ? b : a)(stream);
    }
  };
  const double unit_a = estimate_a * result.batch_size;
  const double unit_b = estimate_b * result.batch_size;

  // Warm-up by time, alternating the arms.
  for (long i = 0, n = timing.warmups(unit_a + unit_b); i < n; ++i) {
    run_unit(false);
    run_unit(true);
  }

  result.pairs =
      pairs > 0 ? pairs
                : static_cast<int>(std::clamp(std::round(options.rep_ms / unit_a),
                                              static_cast<double>(std::max(options.min_reps, 20)),
                                              static_cast<double>(std::max(options.max_reps, 20))));
  // Per pair: marks for the first arm timed, then the second.
  std::vector<std::array<CUevent, 4>> marks;
  for (int i = 0; i < result.pairs; ++i)
    marks.push_back({timing.event(), timing.event(), timing.event(), timing.event()});
  for (int i = 0; i < result.pairs; ++i) {
    const bool b_first = i % 2 == 1;
    for (int arm = 0; arm < 2; ++arm) {
      timing.before_region();
      TUNE_CU(cu.cuEventRecord(marks[static_cast<std::size_t>(i)][2 * arm], stream));
      run_unit(b_first ? arm == 0 : arm == 1);
      TUNE_CU(cu.cuEventRecord(marks[static_cast<std::size_t>(i)][2 * arm + 1], stream));
    }
  }
  result.warnings = timing.finish(scope);

  for (int i = 0; i < result.pairs; ++i) {
    const auto& m = marks[static_cast<std::size_t>(i)];
    const double first = Timing::per_launch(m[0], m[1], result.batch_size);
    const double second = Timing::per_launch(m[2], m[3], result.batch_size);
    const bool b_first = i % 2 == 1;
    result.a_ms.push_back(b_first ? second : first);
    result.b_ms.push_back(b_first ? first : second);
  }
  return result;
}

}  // namespace tune
