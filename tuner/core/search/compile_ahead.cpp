#include <tuner/core/search/compile_ahead.hpp>

#include <algorithm>
#include <chrono>
#include <string>

#include <tuner/core/base/env_number.hpp>

namespace tune {

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

void CompileAhead::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
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
  changed_.wait(lock, [&] { return state_[index] == State::done; });
  waited_ms_ +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (error_[index]) std::rethrow_exception(error_[index]);
  return outcome_[index];
}

std::size_t CompileAhead::finished() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return finished_;
}

double CompileAhead::waited_ms() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return waited_ms_;
}

int compile_ahead_jobs(std::optional<int> cap) {
  if (const auto n = env_whole_number("TUNE_COMPILE_JOBS", 1, 1024)) return static_cast<int>(*n);
  // One core stays with the measuring worker, whose host thread queues the launches.
  const unsigned cores = std::thread::hardware_concurrency();
  const int jobs = static_cast<int>(cores > 1 ? cores - 1 : 1);
  return cap && *cap > 0 ? std::min(jobs, *cap) : jobs;
}

}  // namespace tune
