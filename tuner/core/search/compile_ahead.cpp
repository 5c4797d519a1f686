#include <tuner/core/search/compile_ahead.hpp>

#include <algorithm>
#include <chrono>
#include <string>

#include <tuner/core/base/env_number.hpp>
#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/process/stop_signals.hpp>
#include <tuner/core/search/supervisor.hpp>

namespace tune {

namespace {

// How often a wait for a compile looks at StopSignals: a signal reaches any thread, and the
// one waiting on the condition variable is not woken by it.
constexpr std::chrono::milliseconds stop_poll{50};

}  // namespace

void CompileAhead::wait_until(std::unique_lock<std::mutex>& lock,
                              const std::function<bool()>& ready) {
  while (!changed_.wait_for(lock, stop_poll, ready))
    if (const int sig = StopSignals::received()) throw Interrupted{sig};
}

CompileAhead::CompileAhead(std::size_t count, Compile compile, int jobs)
    : compile_(std::move(compile)),
      jobs_(std::max(1, jobs)),
      state_(count, State::queued),
      outcome_(count),
      error_(count),
      queued_(count, false) {}

CompileAhead::~CompileAhead() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  changed_.notify_all();
  for (std::thread& t : threads_)
    t.join();
}

void CompileAhead::start(const std::vector<std::size_t>& order) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i : order) {
      if (i >= state_.size() || queued_[i]) continue;
      queued_[i] = true;
      queue_.push_back(i);
    }
  }
  for (int j = 0; j < jobs_; ++j)
    threads_.emplace_back([this] { work(); });
}

void CompileAhead::queue(const std::vector<std::size_t>& indices) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i : indices) {
      if (i >= state_.size() || queued_[i] || state_[i] != State::queued) continue;
      queued_[i] = true;
      queue_.push_back(i);
    }
    if (!threads_.empty()) {
      changed_.notify_all();
      return;
    }
  }
  start({});
}

void CompileAhead::cancel(const std::vector<std::size_t>& indices) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i : indices) {
    if (i >= state_.size() || state_[i] != State::queued || !queued_[i]) continue;
    queued_[i] = false;
    std::erase(queue_, i);
  }
}

std::size_t CompileAhead::wait_any(const std::vector<std::size_t>& candidates) {
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  std::size_t pos = 0;
  wait_until(lock, [&] {
    for (pos = 0; pos < candidates.size(); ++pos) {
      const std::size_t i = candidates[pos];
      if (state_.at(i) == State::done || (state_[i] == State::queued && !queued_[i])) return true;
    }
    return false;
  });
  waited_ms_ +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return pos;
}

void CompileAhead::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait_for(lock, stop_poll, [&] { return stopping_ || !queue_.empty(); });
    // A stop request begins no compile more; the search's waits end on it too.
    if (stopping_ || StopSignals::received() != 0) return;
    if (queue_.empty()) continue;
    const std::size_t i = queue_.front();
    queue_.pop_front();
    if (state_[i] != State::queued) continue;
    state_[i] = State::running;
    lock.unlock();
    std::optional<std::string> outcome;
    std::exception_ptr failure;
    try {
      outcome = compile_(i);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    outcome_[i] = std::move(outcome);
    error_[i] = failure;
    state_[i] = State::done;
    ++finished_;
    compiled_.push_back(i);
    changed_.notify_all();
  }
}

std::optional<std::string> CompileAhead::wait(std::size_t index) {
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  if (state_.at(index) == State::queued) {
    // Its turn now: the search asked for it before the queue reached it.
    std::erase(queue_, index);
    queue_.push_front(index);
    queued_[index] = true;
    if (threads_.empty()) {
      lock.unlock();
      start({});
      lock.lock();
    }
    changed_.notify_all();
  }
  wait_until(lock, [&] { return state_[index] == State::done; });
  waited_ms_ +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (error_[index]) std::rethrow_exception(error_[index]);
  return outcome_[index];
}

std::size_t CompileAhead::finished() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return finished_;
}

std::vector<std::size_t> CompileAhead::compiled() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return compiled_;
}

double CompileAhead::waited_ms() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return waited_ms_;
}

CompilePipeline::CompilePipeline(Objective& inner, CompileAhead& ahead, std::size_t window,
                                 std::function<bool(std::size_t)> ready)
    : ForwardingObjective(inner), ahead_(ahead), window_(window), ready_(std::move(ready)) {}

void CompilePipeline::prepare(const std::vector<std::size_t>& indices) {
  std::vector<std::size_t> missing;
  for (std::size_t i : indices)
    if (!ready_(i)) missing.push_back(i);
  if (!missing.empty()) ahead_.queue(missing);
}

std::size_t CompilePipeline::pick(const std::vector<std::size_t>& pending) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t pos = ahead_.wait_any(pending);
  last_wait_ = {
      pending.at(pos),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()};
  return pos;
}

Trial CompilePipeline::measure(std::size_t index) {
  Trial t = inner_.measure(index);
  if (t.times && last_wait_ && last_wait_->first == index)
    t.times->compile_wait_ms += last_wait_->second;
  last_wait_.reset();
  return t;
}

std::size_t pipeline_window(int jobs) {
  return 2 * static_cast<std::size_t>(std::max(1, jobs));
}

int compile_ahead_jobs(std::optional<int> jobs, bool launched) {
  if (const auto n = env_whole_number("TUNE_COMPILE_JOBS", 1, max_jobs))
    return static_cast<int>(*n);
  // A launcher may run the compiles elsewhere: then the number asked for is not this host's to
  // cap (within the one range of every jobs setting).
  if (launched && jobs && *jobs > 0) return static_cast<int>(std::min<long>(*jobs, max_jobs));
  // One core stays with the measuring worker, whose host thread queues the launches.
  const unsigned cores = std::thread::hardware_concurrency();
  const int here = static_cast<int>(cores > 1 ? cores - 1 : 1);
  return jobs && *jobs > 0 ? std::min(here, *jobs) : here;
}

}  // namespace tune
