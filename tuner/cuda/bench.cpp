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

}  // namespace

BenchResult bench(Context& ctx, const Launch& launch, CUstream stream,
                  const BenchOptions& options) {
  const DriverApi& cu = driver();
  ctx.make_current();
  // The legacy default stream cannot be captured into a graph: use the context's own stream.
  if (!stream) stream = ctx.stream();
  if (options.min_reps < 1 || options.max_reps < options.min_reps) {
    throw error(fmt::format("bench: reps must satisfy 1 <= min_reps <= max_reps, got {} and {}",
                            options.min_reps, options.max_reps));
  }
  // Launches inside are recorded into their modules once, at the end (see LaunchScope).
  detail::LaunchScope scope;
  EventPool events;

  std::size_t flush_bytes = 0;
  const CUdeviceptr flush = options.clear_l2 ? ctx.l2_flush_buffer(&flush_bytes) : 0;
  auto flush_l2 = [&] {
    if (flush) {
      TUNE_CU(cu.cuMemsetD32Async(flush, 0, flush_bytes / 4, stream));
    }
  };
  // The spin kernel in front of a timed region must outlast the host's queueing of the region
  // (a start event, the closure, an end event); it is sized from the closure's measured host
  // time below, starting generously.
  double spin_ms = 0.05;

  // A first launch: errors surface here, before anything is timed.
  launch(stream);
  TUNE_CU(cu.cuStreamSynchronize(stream));

  // Estimate from five flushed, individually timed launches; measure the closure's host cost.
  constexpr int estimate_runs = 5;
  std::vector<double> estimates;
  double host_ms = 0;
  {
    std::vector<std::pair<CUevent, CUevent>> marks;
    for (int i = 0; i < estimate_runs; ++i)
      marks.emplace_back(events.make(), events.make());
    for (auto& [start, end] : marks) {
      flush_l2();
      spin(ctx, stream, spin_ms);
      TUNE_CU(cu.cuEventRecord(start, stream));
      const auto t0 = std::chrono::steady_clock::now();
      launch(stream);
      host_ms = std::max(
          host_ms,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      TUNE_CU(cu.cuEventRecord(end, stream));
    }
    TUNE_CU(cu.cuStreamSynchronize(stream));
    for (auto& [start, end] : marks)
      estimates.push_back(elapsed_ms(start, end));
  }
  const double estimate_ms = std::max(quantile(estimates, 0.5), 1e-4);
  spin_ms = std::clamp(2 * host_ms + 0.01, 0.02, 2.0);

  BenchResult result;
  result.batched = options.batching == BenchOptions::Batching::always ||
                   (options.batching == BenchOptions::Batching::automatic &&
                    estimate_ms < options.batch_below_ms);
  std::unique_ptr<Batch> batch;
  if (result.batched) {
    result.batch_size =
        std::clamp(static_cast<int>(std::ceil(options.batch_target_ms / estimate_ms)), 2,
                   std::max(2, options.max_batch));
    batch = std::make_unique<Batch>(launch, stream, result.batch_size);
  }
  const double unit_ms = estimate_ms * result.batch_size;  // one timed unit: a launch or a batch
  auto run_unit = [&] {
    if (batch) {
      batch->launch(stream);
    } else {
      launch(stream);
    }
  };

  // Warm-up by time.
  const auto warmups =
      static_cast<long>(std::clamp(std::ceil(options.warmup_ms / unit_ms), 1.0, 1e6));
  for (long i = 0; i < warmups; ++i)
    run_unit();

  // Timed reps.
  result.reps = static_cast<int>(std::clamp(std::round(options.rep_ms / unit_ms),
                                            static_cast<double>(options.min_reps),
                                            static_cast<double>(options.max_reps)));
  std::vector<std::pair<CUevent, CUevent>> marks;
  for (int i = 0; i < result.reps; ++i)
    marks.emplace_back(events.make(), events.make());
  for (auto& [start, end] : marks) {
    flush_l2();
    spin(ctx, stream, spin_ms);
    TUNE_CU(cu.cuEventRecord(start, stream));
    run_unit();
    TUNE_CU(cu.cuEventRecord(end, stream));
  }

  // Ask NVML while the reps run: clock reasons read on an idle GPU say only "idle".
  detail::NvmlDevice nvml(ctx.pci_bus_id());
  const auto reasons = nvml.clock_event_reasons();
  const auto processes = nvml.compute_processes();

  TUNE_CU(cu.cuStreamSynchronize(stream));
  scope.flush();

  for (auto& [start, end] : marks) {
    const double ms = elapsed_ms(start, end) / result.batch_size;
    if (!std::isfinite(ms) || ms < 0) {
      throw error(fmt::format("bench: a rep timed {} ms, not a finite time", ms));
    }
    result.samples_ms.push_back(ms);
  }
  result.median_ms = quantile(result.samples_ms, 0.5);
  result.min_ms = *std::min_element(result.samples_ms.begin(), result.samples_ms.end());
  result.p10_ms = quantile(result.samples_ms, 0.1);
  result.p90_ms = quantile(result.samples_ms, 0.9);

  if (reasons) {
    if (std::string names = detail::throttle_names(*reasons); !names.empty()) {
      result.warnings.push_back(fmt::format("gpu throttling during the measurement: {}", names));
    }
  }
  if (processes) {
    std::vector<unsigned> others;
    const auto self = static_cast<unsigned>(getpid());
    for (unsigned pid : *processes) {
      if (pid != self) others.push_back(pid);
    }
    if (!others.empty()) {
      result.warnings.push_back(fmt::format("gpu busy: {} other process{} on the device (pid {})",
                                            others.size(), others.size() == 1 ? "" : "es",
                                            fmt::join(others, ", ")));
    }
  }
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

namespace {

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

}  // namespace

PairedBenchResult bench_paired(Context& ctx, const Launch& a, const Launch& b, CUstream stream,
                               const BenchOptions& options, int pairs) {
  const DriverApi& cu = driver();
  ctx.make_current();
  // The legacy default stream cannot be captured into a graph: use the context's own stream.
  if (!stream) stream = ctx.stream();
  if (options.min_reps < 1 || options.max_reps < options.min_reps) {
    throw error(fmt::format("bench: reps must satisfy 1 <= min_reps <= max_reps, got {} and {}",
                            options.min_reps, options.max_reps));
  }
  detail::LaunchScope scope;
  EventPool events;
  std::size_t flush_bytes = 0;
  const CUdeviceptr flush = options.clear_l2 ? ctx.l2_flush_buffer(&flush_bytes) : 0;
  auto flush_l2 = [&] {
    if (flush) TUNE_CU(cu.cuMemsetD32Async(flush, 0, flush_bytes / 4, stream));
  };
  double spin_ms = 0.05;

  // First launches: errors surface before anything is timed.
  a(stream);
  b(stream);
  TUNE_CU(cu.cuStreamSynchronize(stream));

  // Estimates, alternating the arms; the closures' host cost sizes the spin.
  constexpr int estimate_runs = 5;
  std::vector<double> est_a, est_b;
  double host_ms = 0;
  {
    std::vector<std::pair<CUevent, CUevent>> marks;
    for (int i = 0; i < 2 * estimate_runs; ++i)
      marks.emplace_back(events.make(), events.make());
    for (int i = 0; i < 2 * estimate_runs; ++i) {
      flush_l2();
      spin(ctx, stream, spin_ms);
      TUNE_CU(cu.cuEventRecord(marks[static_cast<std::size_t>(i)].first, stream));
      const auto t0 = std::chrono::steady_clock::now();
      (i % 2 ? b : a)(stream);
      host_ms = std::max(
          host_ms,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      TUNE_CU(cu.cuEventRecord(marks[static_cast<std::size_t>(i)].second, stream));
    }
    TUNE_CU(cu.cuStreamSynchronize(stream));
    for (int i = 0; i < 2 * estimate_runs; ++i) {
      const auto& [start, end] = marks[static_cast<std::size_t>(i)];
      (i % 2 ? est_b : est_a).push_back(elapsed_ms(start, end));
    }
  }
  const double estimate_a = std::max(quantile(est_a, 0.5), 1e-4);
  const double estimate_b = std::max(quantile(est_b, 0.5), 1e-4);
  spin_ms = std::clamp(2 * host_ms + 0.01, 0.02, 2.0);

  PairedBenchResult result;
  const double shorter = std::min(estimate_a, estimate_b);
  result.batched =
      options.batching == BenchOptions::Batching::always ||
      (options.batching == BenchOptions::Batching::automatic && shorter < options.batch_below_ms);
  std::unique_ptr<Batch> batch_a, batch_b;
  if (result.batched) {
    result.batch_size = std::clamp(static_cast<int>(std::ceil(options.batch_target_ms / shorter)),
                                   2, std::max(2, options.max_batch));
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
  const auto warmups =
      static_cast<long>(std::clamp(std::ceil(options.warmup_ms / (unit_a + unit_b)), 1.0, 1e6));
  for (long i = 0; i < warmups; ++i) {
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
    marks.push_back({events.make(), events.make(), events.make(), events.make()});
  for (int i = 0; i < result.pairs; ++i) {
    const bool b_first = i % 2 == 1;
    for (int arm = 0; arm < 2; ++arm) {
      flush_l2();
      spin(ctx, stream, spin_ms);
      TUNE_CU(cu.cuEventRecord(marks[static_cast<std::size_t>(i)][2 * arm], stream));
      run_unit(b_first ? arm == 0 : arm == 1);
      TUNE_CU(cu.cuEventRecord(marks[static_cast<std::size_t>(i)][2 * arm + 1], stream));
    }
  }

  detail::NvmlDevice nvml(ctx.pci_bus_id());
  device_warnings(nvml, result.warnings);
  TUNE_CU(cu.cuStreamSynchronize(stream));
  scope.flush();

  for (int i = 0; i < result.pairs; ++i) {
    const auto& m = marks[static_cast<std::size_t>(i)];
    const double first = elapsed_ms(m[0], m[1]) / result.batch_size;
    const double second = elapsed_ms(m[2], m[3]) / result.batch_size;
    for (double ms : {first, second}) {
      if (!std::isfinite(ms) || ms < 0) {
        throw error(fmt::format("bench: a rep timed {} ms, not a finite time", ms));
      }
    }
    const bool b_first = i % 2 == 1;
    result.a_ms.push_back(b_first ? second : first);
    result.b_ms.push_back(b_first ? first : second);
  }
  return result;
}

}  // namespace tune
