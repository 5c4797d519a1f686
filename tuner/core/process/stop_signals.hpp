// The one owner of SIGINT and SIGTERM in a tune program. While a StopSignals lives, either signal
// asks the program to stop instead of ending it: the signal is remembered (`received()`), a
// child registered with `pass_on_to` gets the same signal, and a child registered with
// `kill_on_stop` has its process group killed at once (a measuring worker spinning on the GPU
// must not outlive the request to stop). Blocking waits see EINTR (no SA_RESTART), so loops that
// wait for children notice the request within one poll.
//
// `tuner exec`, `tuner run`, `tuner tune` and `tuner warm` each hold one for their whole run;
// the measuring worker keeps the default actions (its supervisor kills its process group).
//
// Example:
//   StopSignals stop;                       // SIGINT/SIGTERM handled from here
//   while (more_work() && !stop.received()) step();
//   if (int sig = stop.received()) return exit_interrupted(sig);
#pragma once

#include <sys/types.h>

namespace tune {

class StopSignals {
 public:
  /// Installs the handlers; the previous ones come back when the last StopSignals is
  /// destroyed. Nested owners share the outermost one's handlers and its `received()` (a
  /// command that runs another command's function in-process, as `tuner tune` runs `tuner
  /// run`'s, keeps one answer to a stop request).
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  /// The signal that asked to stop (SIGINT or SIGTERM), or 0. Readable without an instance:
  /// 0 whenever none lives.
  static int received() noexcept;

  /// Until `forget_child`, a stop signal is passed on to `pid` (the same signal): a child that
  /// stops cleanly on its own, such as `cmake --build`. A signal that came before the call is
  /// passed on now.
  static void pass_on_to(pid_t pid) noexcept;
  /// Until `forget_child`, a stop signal SIGKILLs the process group of `pid` (and `pid`): a
  /// child that cannot be trusted to stop, such as a worker inside a hung kernel. A signal that
  /// came before the call kills it now.
  static void kill_on_stop(pid_t pid) noexcept;
  /// No child is told any more.
  static void forget_child() noexcept;
};

}  // namespace tune
