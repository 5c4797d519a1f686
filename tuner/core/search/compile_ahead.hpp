// Compile-ahead: the candidates the search proposed, compiled on the host's cores ahead of the
// measuring worker, so that the GPU waits for the compiler only when no proposed candidate is
// ready. The search's strategy drives it (docs/search.md "The pipeline"): the proposals are
// queued in the strategy's order (`queue`), those it gives back are dropped before they begin
// (`cancel`), and the search measures whichever proposal is ready first (`wait_any`). Nothing
// is compiled that was not proposed. A candidate the search needs at once (an incumbent) jumps
// the queue (`wait`). The compiles land in the kernel cache, through the candidate store, as
// `tuner warm`'s do.
//
// Example (kernel_tune.cpp):
//   CompileAhead ahead(configs.size(), [&](std::size_t i) { return compile(i); }, 16);
//   CompilePipeline pipeline(supervisor, ahead, 32, [&](std::size_t i) { return cached(i); });
//   Autotuner(name).run_objective(pipeline);
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <tuner/core/search/autotuner.hpp>

namespace tune {

class CompileAhead {
 public:
  /// Compiles candidate `index`: nullopt when it can then be measured, else why not (the
  /// compiler refused it, it is over the limits). It runs on the pool's threads, several at
  /// once for different candidates; a tune::error (no compiler) is handed to `wait`.
  using Compile = std::function<std::optional<std::string>(std::size_t index)>;

  /// A pool of `jobs` threads (at least 1) for `count` candidates; nothing starts before
  /// `start`.
  CompileAhead(std::size_t count, Compile compile, int jobs);
  /// Stops: compiles not begun are dropped, those running are waited for (a stop signal kills
  /// them, and `wait_any` and `wait` throw Interrupted on it).
  ~CompileAhead();
  CompileAhead(const CompileAhead&) = delete;
  CompileAhead& operator=(const CompileAhead&) = delete;

  /// Queues `order` (candidate indices; repeats and indices out of range are ignored) and
  /// starts the threads.
  void start(const std::vector<std::size_t>& order);
  /// Queues `indices` behind what is queued (those queued, running or done are left alone),
  /// starting the threads when they have not started.
  void queue(const std::vector<std::size_t>& indices);
  /// Takes `indices` off the queue when they have not begun; they may be queued again.
  void cancel(const std::vector<std::size_t>& indices);
  /// The position in `candidates` (not empty) of the first that is ready: compiled, or never
  /// queued (it needed no compile); waits until one is. Adds the wait to `waited_ms`.
  std::size_t wait_any(const std::vector<std::size_t>& candidates);
  /// Waits until candidate `index` is compiled, compiling it next when it has not begun (it
  /// need not have been queued), and returns what `compile` returned. Rethrows what it threw.
  std::optional<std::string> wait(std::size_t index);
  /// How many compiles have finished (for notes and tests).
  std::size_t finished() const;
  /// The candidates whose compile finished, in the order they finished.
  std::vector<std::size_t> compiled() const;
  /// Milliseconds `wait` spent waiting in total: the time the search (and the GPU) waited for
  /// the compiler.
  double waited_ms() const;

 private:
  enum class State { queued, running, done };
  void work();
  /// Waits (holding `lock` when it returns) until `ready`; throws Interrupted when a stop
  /// signal (StopSignals) came first.
  void wait_until(std::unique_lock<std::mutex>& lock, const std::function<bool()>& ready);

  Compile compile_;
  int jobs_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::size_t> queue_;
  std::vector<State> state_;
  std::vector<std::optional<std::string>> outcome_;
  std::vector<std::exception_ptr> error_;
  std::vector<bool> queued_;
  std::vector<std::thread> threads_;
  std::size_t finished_ = 0;
  std::vector<std::size_t> compiled_;
  double waited_ms_ = 0;
  bool stopping_ = false;
};

/// An objective whose candidates are compiled ahead as the strategy proposes them: the search
/// keeps `window` proposals pending, `ahead` compiles those that `ready` says need a compile
/// (in the order proposed), and the search measures whichever is ready first. Each measured
/// trial's `times.compile_wait_ms` is how long the search waited for that candidate's compile.
class CompilePipeline : public ForwardingObjective {
 public:
  /// `ready(i)`: whether candidate `i` can be measured without a compile (the kernel cache has
  /// it). `ahead` must outlive the pipeline.
  CompilePipeline(Objective& inner, CompileAhead& ahead, std::size_t window,
                  std::function<bool(std::size_t)> ready);

  std::size_t window() override { return window_; }
  void prepare(const std::vector<std::size_t>& indices) override;
  void drop(const std::vector<std::size_t>& indices) override { ahead_.cancel(indices); }
  std::size_t pick(const std::vector<std::size_t>& pending) override;
  bool ready(std::size_t index) override { return ready_(index); }
  Trial measure(std::size_t index) override;

 private:
  CompileAhead& ahead_;
  std::size_t window_;
  std::function<bool(std::size_t)> ready_;
  std::optional<std::pair<std::size_t, double>> last_wait_;  // index, milliseconds
};

/// The pipeline's window for `jobs` compile threads: the threads plus a look-ahead of as many
/// again, so that a compile can start as soon as one ends while the GPU measures.
std::size_t pipeline_window(int jobs);

/// The number of compile-ahead threads: `TUNE_COMPILE_JOBS` when set to a positive number;
/// else, when the compiles go through a compiler launcher (`launched`; it may run them on other
/// hosts: srun, icecream, sccache), `jobs` as it is, not capped by this host's cores; else the
/// host's cores but one (the measuring worker keeps one), at most `jobs`. `jobs` is --compile-jobs
/// (the build's TUNE_WARM_JOBS, which `tuner tune` passes); unset, the cores but one either way.
int compile_ahead_jobs(std::optional<int> jobs = std::nullopt, bool launched = false);

}  // namespace tune
