#include <tuner/core/search/supervisor.hpp>

#include <algorithm>
#include <utility>

#include <fmt/core.h>

#include <tuner/core/process/stop_signals.hpp>

namespace tune {

namespace {

/// A worker that is a child process.
class ProcessWorker final : public WorkerConnection {
 public:
  explicit ProcessWorker(std::vector<std::string> argv) : process_(std::move(argv)) {}
  pid_t pid() const override { return process_.pid(); }
  bool send(std::string_view line) override { return process_.send_line(line); }
  Subprocess::Read read(std::string& line, double timeout_s) override {
    return process_.read_line(line, timeout_s);
  }
  ExitStatus wait() override { return process_.wait(); }
  void kill() override { process_.kill(); }
  bool running() override { return process_.running(); }
  std::string last_words() const override { return process_.last_stderr_line(); }

 private:
  Subprocess process_;
};

std::string with_last_words(std::string what, const std::string& last) {
  return last.empty() ? what : what + ": " + last;
}

}  // namespace

WorkerLauncher process_launcher(std::vector<std::string> argv) {
  return [argv = std::move(argv)]() -> std::unique_ptr<WorkerConnection> {
    return std::make_unique<ProcessWorker>(argv);
  };
}

Supervisor::Supervisor(std::vector<Config> configs, std::vector<std::string> keys,
                       WorkerLauncher launch, SupervisorOptions options)
    : configs_(std::move(configs)),
      keys_(std::move(keys)),
      launch_(std::move(launch)),
      options_(std::move(options)) {
  if (configs_.size() != keys_.size())
    throw error(
        fmt::format("supervisor: {} configs but {} cache keys", configs_.size(), keys_.size()));
}

Supervisor::~Supervisor() {
  stop_worker();
}

void Supervisor::skip_when(std::function<std::optional<std::string>(std::size_t)> reason) {
  skip_ = std::move(reason);
}

void Supervisor::on_note(std::function<void(const std::string&)> note) {
  note_ = std::move(note);
}

void Supervisor::check_signal() const {
  if (const int sig = StopSignals::received()) throw Interrupted{sig};
}

void Supervisor::start_worker() {
  worker_ = launch_();
  ++workers_started_;
  StopSignals::kill_on_stop(worker_->pid());  // a stop request must not wait for a hung kernel
  const double start_timeout_s = std::max(options_.start_timeout_s, options_.timeout_s);
  std::string line;
  const Subprocess::Read r = worker_->read(line, start_timeout_s);
  check_signal();
  auto refuse = [&](const std::string& why) {
    stop_worker();
    throw WorkerStartFailure("the measuring worker did not start: " + why);
  };
  if (r == Subprocess::Read::timeout) {
    worker_->kill();
    refuse(with_last_words(fmt::format("it did not answer within {} s", start_timeout_s),
                           worker_->last_words()));
  }
  if (r == Subprocess::Read::eof)
    refuse(with_last_words(worker_->wait().describe(), worker_->last_words()));
  result<WorkerHello> hello = decode_hello(line);
  if (!hello) refuse(fmt::format("unreadable answer '{}'", line));
  if (!hello->ready) refuse(hello->error);
  if (hello->protocol != worker_protocol_version)
    refuse(fmt::format("it speaks worker protocol {} and this tuner speaks {}: rebuild it{}",
                       hello->protocol, worker_protocol_version,
                       options_.rebuild_hint.empty() ? "" : " (" + options_.rebuild_hint + ")"));
  if (device_.empty()) device_ = hello->device;
  if (driver_.empty()) driver_ = hello->driver;
}

void Supervisor::stop_worker() {
  if (worker_) {
    StopSignals::forget_child();
    worker_->kill();
  }
  worker_.reset();
}

void Supervisor::drop_worker(const std::string& what) {
  const long pid = worker_ ? static_cast<long>(worker_->pid()) : 0;
  stop_worker();
  if (note_)
    note_(fmt::format("worker pid {} {}; the next candidate gets a fresh worker", pid, what));
}

// Sends one request and reads the answer line within `timeout_s`. On a timeout or a death the
// worker is dropped and the failure is returned; otherwise `line` holds the answer.
std::optional<std::string> Supervisor::exchange(const WorkerRequest& request, double timeout_s,
                                                std::string& line) {
  if (worker_ && !worker_->running()) stop_worker();  // it died after its last answer
  if (!worker_) start_worker();
  const Subprocess::Read r =
      worker_->send(encode(request)) ? worker_->read(line, timeout_s) : Subprocess::Read::eof;
  check_signal();
  if (r == Subprocess::Read::timeout) {
    std::string failure = fmt::format("timed out after {} s", timeout_s);
    drop_worker(failure + " and was killed");
    return failure;
  }
  if (r == Subprocess::Read::eof) {
    const ExitStatus status = worker_->wait();
    std::string failure =
        with_last_words(fmt::format("worker died: {}", status.describe()), worker_->last_words());
    drop_worker(fmt::format("died ({})", status.describe()));
    return failure;
  }
  return std::nullopt;
}

Trial Supervisor::measure(std::size_t index) {
  Trial t = measure_in_worker(index);
  const auto now = std::chrono::steady_clock::now();
  if (!t.times) t.times = TrialTimes{};
  t.times->wall_ms = std::chrono::duration<double, std::milli>(now - last_end_).count();
  last_end_ = now;
  return t;
}

Trial Supervisor::measure_in_worker(std::size_t index) {
  check_signal();
  if (skip_)
    if (std::optional<std::string> reason = skip_(index)) {
      check_signal();  // a compile killed by the stop request says nothing about the candidate
      return Trial::invalid(*reason);
    }
  std::string line;
  if (auto failure = exchange(MeasureRequest{{configs_[index], keys_[index]}, reject_},
                              options_.timeout_s, line))
    return Trial::invalid(*failure);
  result<std::variant<MeasureAnswer, RefusedAnswer>> answer = decode_measure_answer(line);
  if (!answer) {
    drop_worker("answered something unreadable and was killed");
    return Trial::invalid(fmt::format("unreadable answer from the worker: '{}'", line));
  }
  if (const auto* refused = std::get_if<RefusedAnswer>(&*answer)) {
    drop_worker("refused a request and was killed");
    return Trial::invalid(fmt::format("the worker refused the request: {}", refused->error));
  }
  const MeasureAnswer& m = std::get<MeasureAnswer>(*answer);
  if (m.exiting) {
    worker_->wait();
    drop_worker("exited after a CUDA error (its context cannot be trusted)");
  }
  if (m.fixture_failure) throw FixtureFailure(*m.fixture_failure);
  if (m.harness_failure) throw HarnessFailure(*m.harness_failure);
  return m.to_trial();
}

std::optional<RunoffPairs> Supervisor::runoff(std::size_t incumbent, std::size_t challenger) {
  check_signal();
  RunoffPairs pairs;
  if (skip_) {
    pairs.incumbent_failure = skip_(incumbent);
    pairs.challenger_failure = skip_(challenger);
    check_signal();
    if (pairs.incumbent_failure || pairs.challenger_failure) return pairs;
  }
  std::string line;
  const RunoffRequest request{{configs_[incumbent], keys_[incumbent]},
                              {configs_[challenger], keys_[challenger]}};
  if (auto failure = exchange(request, 3 * options_.timeout_s, line)) {
    pairs.failure = *failure;
    return pairs;
  }
  result<std::variant<RunoffAnswer, RefusedAnswer>> answer = decode_runoff_answer(line);
  if (!answer) {
    drop_worker("answered something unreadable and was killed");
    pairs.failure = fmt::format("unreadable answer from the worker: '{}'", line);
    return pairs;
  }
  if (const auto* refused = std::get_if<RefusedAnswer>(&*answer)) {
    drop_worker("refused a request and was killed");
    pairs.failure = fmt::format("the worker refused the request: {}", refused->error);
    return pairs;
  }
  RunoffAnswer& r = std::get<RunoffAnswer>(*answer);
  if (r.exiting) {
    worker_->wait();
    drop_worker("exited after a CUDA error (its context cannot be trusted)");
  }
  return std::move(r.pairs);
}

}  // namespace tune
