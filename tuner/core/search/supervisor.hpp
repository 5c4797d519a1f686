// The supervisor: the Objective of a kernel's tune, measuring each candidate in a separate
// worker process (a kernel's runner, tuner/cuda/worker.hpp) and surviving whatever the candidate
// does to it. A CUDA context cannot survive a fork, a poisoned context or a hung kernel, so the
// worker is a process of its own from the start: when it crashes, hangs past the timeout,
// answers nonsense or exits after a CUDA error, that candidate becomes an invalid trial with the
// reason, the worker is dropped, and the next candidate gets a fresh one. The supervisor itself
// uses no CUDA: it speaks the protocol of worker_protocol.hpp through a WorkerConnection, which
// tests replace with a fake.
//
// Example (what kernel_tune.cpp does for one bucket):
//   Supervisor objective(configs, keys, process_launcher(worker_argv), {.timeout_s = 30});
//   result<Output> out = Autotuner(name).log(log_path).run_objective(objective);
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/process/subprocess.hpp>
#include <tuner/core/search/autotuner.hpp>
#include <tuner/core/search/worker_protocol.hpp>

namespace tune {

/// A started measuring worker, spoken to in lines. The real one is a child process
/// (process_launcher); tests implement it in-process.
class WorkerConnection {
 public:
  virtual ~WorkerConnection() = default;
  /// The worker's process id (for notes and for killing it on a stop signal).
  virtual pid_t pid() const = 0;
  /// Sends one line; false when the worker is gone.
  virtual bool send(std::string_view line) = 0;
  /// Waits at most `timeout_s` for the next line: `line`, `timeout`, or `eof` when the worker
  /// closed its output (it died).
  virtual Subprocess::Read read(std::string& line, double timeout_s) = 0;
  /// Waits for the worker to end (after eof or an answer that said it exits) and says how.
  virtual ExitStatus wait() = 0;
  /// Kills the worker (with whatever it started) and reaps it.
  virtual void kill() = 0;
  /// Whether it still runs (a worker may die between two requests).
  virtual bool running() = 0;
  /// The last line the worker wrote to stderr (shortened), to explain a death; "" when none.
  virtual std::string last_words() const = 0;
};

/// Starts a worker: the first, and a fresh one after each that was dropped. Throws tune::error
/// when it cannot be started at all (no such program).
using WorkerLauncher = std::function<std::unique_ptr<WorkerConnection>()>;

/// Workers as child processes running `argv` (Subprocess: its own process group, killed when
/// this process dies).
WorkerLauncher process_launcher(std::vector<std::string> argv);

/// Thrown out of the objective when the worker cannot start (no GPU, no driver, a worker that
/// speaks another protocol): the message says why, with the worker's last words.
struct WorkerStartFailure : error {
  using error::error;
};

/// Thrown out of the objective when the bucket's fixture (the harness's `prepare`, run once
/// per bucket and worker) failed: every candidate of the bucket would be invalid with the same
/// message, so the search stops there (nothing is logged for the candidate, so a fixed harness
/// is tried again on the next run) and the caller reports the bucket once.
struct FixtureFailure : error {
  using error::error;
};

/// Thrown out of the objective when the harness failed in a way every candidate of the bucket
/// would (it read a name the space does not have): as for FixtureFailure, the search stops
/// there, nothing is logged for the candidate, and the caller reports the bucket once.
struct HarnessFailure : error {
  using error::error;
};

/// Thrown out of the objective when SIGINT or SIGTERM asked the run to stop (StopSignals): the
/// candidate in flight is abandoned and nothing is logged for it.
struct Interrupted {
  int signal = 0;
};

/// How a supervisor treats its workers.
struct SupervisorOptions {
  /// Seconds one candidate may take (setup, gate and timing); a runoff gets three times this
  /// (two setups and two arms of timing).
  double timeout_s = 30;
  /// Seconds a worker may take to say hello (creating a context on a cold GPU takes a while);
  /// at least `timeout_s`.
  double start_timeout_s = 60;
  /// The command that rebuilds the worker, for the message about a protocol mismatch.
  std::string rebuild_hint;
};

class Supervisor : public Objective {
 public:
  /// `configs` in enumeration order and their cache keys (same length).
  Supervisor(std::vector<Config> configs, std::vector<std::string> keys, WorkerLauncher launch,
             SupervisorOptions options);
  ~Supervisor() override;

  /// Why candidate `index` cannot be measured without asking a worker (not compiled, refused
  /// by the compiler or the limits), or nullopt: such candidates cost no GPU time.
  void skip_when(std::function<std::optional<std::string>(std::size_t)> reason);
  /// Called with a line for people when a worker is dropped (why, and that a fresh one follows).
  void on_note(std::function<void(const std::string&)> note);

  const std::vector<Config>& configs() override { return configs_; }
  std::optional<std::string> cache_key(std::size_t index) override { return keys_.at(index); }
  /// Measures candidate `index` in a worker. The trial's `times` say where its time went, with
  /// `wall_ms` from the end of the previous trial. Throws FixtureFailure when the worker says
  /// the bucket's fixture failed, HarnessFailure when it says the harness failed as it would
  /// for every candidate, Interrupted on a stop signal, WorkerStartFailure when no
  /// worker starts.
  Trial measure(std::size_t index) override;
  std::optional<RunoffPairs> runoff(std::size_t incumbent, std::size_t challenger) override;
  /// Sent with the next measure request: the worker may stop the candidate's reps early.
  void reject_above(std::optional<EarlyReject> rule) override { reject_ = rule; }
  bool has_runoff() override { return true; }

  /// How many workers were started (the first, and one after each that was dropped).
  int workers_started() const noexcept { return workers_started_; }
  /// What the first worker said of its device and driver ("" until one started).
  const std::string& device() const noexcept { return device_; }
  const std::string& driver() const noexcept { return driver_; }

 private:
  void check_signal() const;
  Trial measure_in_worker(std::size_t index);
  void start_worker();
  void stop_worker();
  void drop_worker(const std::string& what);
  std::optional<std::string> exchange(const WorkerRequest& request, double timeout_s,
                                      std::string& line);

  std::vector<Config> configs_;
  std::vector<std::string> keys_;
  /// The end of the last trial (the start, before the first): each trial's `wall_ms` runs
  /// from here.
  std::chrono::steady_clock::time_point last_end_ = std::chrono::steady_clock::now();
  WorkerLauncher launch_;
  SupervisorOptions options_;
  std::function<std::optional<std::string>(std::size_t)> skip_;
  std::function<void(const std::string&)> note_;
  std::unique_ptr<WorkerConnection> worker_;
  std::optional<EarlyReject> reject_;
  std::string device_;
  std::string driver_;
  int workers_started_ = 0;
};

}  // namespace tune
