#include <tuner/core/process/stop_signals.hpp>

#include <signal.h>

#include <atomic>

namespace tune {

namespace {

// What the handler reads and writes: lock-free atomics, safe in a signal handler.
std::atomic<int> g_received{0};
std::atomic<pid_t> g_child{-1};
std::atomic<bool> g_kill_child{false};
int g_owners = 0;  // StopSignals alive (constructed and destroyed on the main thread)
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<pid_t>::is_always_lock_free &&
              std::atomic<bool>::is_always_lock_free);

struct sigaction g_old_int {};
struct sigaction g_old_term {};

void tell_child(int sig) noexcept {
  const pid_t child = g_child.load();
  if (child <= 0) return;
  if (g_kill_child.load()) {
    ::kill(-child, SIGKILL);
    ::kill(child, SIGKILL);
  } else {
    ::kill(child, sig);
  }
}

extern "C" void tune_on_stop_signal(int sig) {
  g_received.store(sig);
  tell_child(sig);
}

}  // namespace

StopSignals::StopSignals() {
  if (g_owners++ > 0) return;
  g_received.store(0);
  forget_child();
  struct sigaction sa {};
  sa.sa_handler = tune_on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a wait for a child returns early with EINTR
  ::sigaction(SIGINT, &sa, &g_old_int);
  ::sigaction(SIGTERM, &sa, &g_old_term);
}

StopSignals::~StopSignals() {
  if (--g_owners > 0) return;
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
  forget_child();
  g_received.store(0);
}

int StopSignals::received() noexcept {
  return g_received.load();
}

void StopSignals::pass_on_to(pid_t pid) noexcept {
  g_kill_child.store(false);
  g_child.store(pid);
  if (const int sig = g_received.load(); sig != 0) tell_child(sig);
}

void StopSignals::kill_on_stop(pid_t pid) noexcept {
  g_kill_child.store(true);
  g_child.store(pid);
  if (const int sig = g_received.load(); sig != 0) tell_child(sig);
}

void StopSignals::forget_child() noexcept {
  g_child.store(-1);
}

}  // namespace tune
