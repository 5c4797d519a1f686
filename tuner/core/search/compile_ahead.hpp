// Compile-ahead: the candidates of a tune that are not in the kernel cache yet, compiled on the
// host's cores ahead of the measuring worker, so that the GPU waits for the compiler only when
// no compiled candidate could be measured instead. Compiles start in the order the search is
// expected to ask for them (`order`); a candidate the search asks for before its turn jumps
// the queue, and `wait` returns once it is compiled (or refused). The measurement order is
// the search's, unchanged; the compiles land in the kernel cache, the one content-addressed
// store, as `tuner warm`'s do.
//
// Example (kernel_tune.cpp):
//   CompileAhead ahead(configs.size(), [&](std::size_t i) { return compile(i); }, 16);
//   ahead.start(order);
//   ... objective.skip_when([&](std::size_t i) { return ahead.wait(i); });
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
  /// Stops: compiles not begun are dropped, those running are waited for.
  ~CompileAhead();
  CompileAhead(const CompileAhead&) = delete;
  CompileAhead& operator=(const CompileAhead&) = delete;

  /// Queues `order` (candidate indices; repeats and indices out of range are ignored) and
  /// starts the threads.
  void start(const std::vector<std::size_t>& order);
  /// Waits until candidate `index` is compiled, compiling it next when it has not begun (it
  /// need not have been queued), and returns what `compile` returned. Rethrows what it threw.
  std::optional<std::string> wait(std::size_t index);
  /// How many compiles have finished (for notes and tests).
  std::size_t finished() const;
  /// Milliseconds `wait` spent waiting in total: the time the search (and the GPU) waited for
  /// the compiler.
  double waited_ms() const;

 private:
  enum class State { queued, running, done };
  void work();

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
  double waited_ms_ = 0;
  bool stopping_ = false;
};

/// The number of compile-ahead threads: `TUNE_COMPILE_JOBS` when set to a positive number,
/// else the host's cores but one (the measuring worker keeps one), at most `cap` when given
/// (the build's TUNE_WARM_JOBS, which `tuner tune` passes).
int compile_ahead_jobs(std::optional<int> cap = std::nullopt);

}  // namespace tune
