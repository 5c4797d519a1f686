// Child processes, the one way tune starts them, in three shapes:
// - Subprocess: a long-lived child spoken to in lines. The supervisor (supervisor.hpp) starts
//   its measuring worker with it, sends one request per line on the child's stdin and reads one
//   answer per line from its stdout, with a deadline.
// - run_captured: a command run to its end with its output collected (`tuner exec`'s objective,
//   nvcc for the kernel cache, `nvcc --version`).
// - run_attached: a command that shares this process's terminal (`tuner tune` running `cmake
//   --build ... warm`), told of a stop request through StopSignals.
// The first two run the child in its own process group (a timeout kills whatever it started
// too); every child dies with its parent (PR_SET_PDEATHSIG), and its stderr is collected, the
// tail kept, so a death can be explained. One ExitStatus describes how any of them ended.
// Nothing they start outlives them: a watcher process in the child's group kills the group when
// this process dies, even by SIGKILL (PR_SET_PDEATHSIG reaches the direct child only), and this
// process is a subreaper (PR_SET_CHILD_SUBREAPER), so a grandchild that left the group with
// setsid is adopted here and killed when its child ends, is killed or times out.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tune {

/// How a child ended: `exit status N` or `killed by signal SIGSEGV`.
struct ExitStatus {
  bool signaled = false;
  int code = 0;    ///< exit code when !signaled
  int signal = 0;  ///< signal number when signaled
  bool success() const noexcept { return !signaled && code == 0; }
  std::string describe() const;
};

/// `SIGSEGV` for 11, `signal 77` for an unknown number.
std::string signal_name(int signal);

/// How a child is started.
struct SpawnOptions {
  /// Its whole environment (`NAME=value` each); unset: this process's environment.
  std::optional<std::vector<std::string>> env;
  /// Its stderr goes into the stdout pipe: one stream, in the order written.
  bool merge_stderr = false;
};

/// What run_captured saw.
struct Captured {
  ExitStatus status;
  bool timed_out = false;  ///< killed (with its process group) at the deadline
  bool stopped = false;    ///< killed because `stop` asked for it
  std::string out;         ///< standard output (and error, when merged)
  std::string err;         ///< standard error (its tail, a few KiB)
};

struct CaptureOptions : SpawnOptions {
  /// Killed, with its process group, after this many seconds.
  std::optional<double> timeout_s;
  /// Keep only the last this many bytes of the output (0: all of it).
  std::size_t keep_bytes = 0;
  /// Asked about every 100 ms (and when a signal interrupts the wait): true kills the child.
  std::function<bool()> stop;
};

/// Runs `argv` (searched on PATH) to its end, its stdin at end of file, collecting its output.
/// Stops at its exit even when something it left in the background keeps the pipes open; what
/// it left running in its process group is killed then.
/// Throws tune::error when it cannot be started: `cannot run '<program>': <reason>`.
Captured run_captured(std::vector<std::string> argv, const CaptureOptions& options = {});

/// Runs `argv` (searched on PATH) with this process's stdin, stdout and stderr, in this
/// process group (a Ctrl-C on the terminal reaches it directly), and waits for it. While a
/// StopSignals lives, SIGINT and SIGTERM sent to this process alone are passed on to it; it gets
/// them with their default actions. Throws tune::error when it cannot be started.
ExitStatus run_attached(std::vector<std::string> argv);

class Subprocess {
 public:
  /// Starts `argv` (searched on PATH) with this environment plus `extra_env` (`NAME=value`,
  /// replacing a variable of the same name). Throws tune::error when it cannot be started
  /// (`cannot run '<program>': No such file or directory`).
  explicit Subprocess(std::vector<std::string> argv, std::vector<std::string> extra_env = {});
  /// Starts `argv` as `options` say.
  Subprocess(std::vector<std::string> argv, const SpawnOptions& options);
  /// Kills the child's process group if it still runs, and reaps it.
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  /// Whether the child has not been reaped yet.
  bool running();

  /// Writes `line` and a newline to the child's stdin; false when the child is gone.
  bool send_line(std::string_view line);

  enum class Read { line, timeout, eof };
  /// Waits for the next whole line on the child's stdout (without its newline), at most
  /// `timeout_s` seconds when given, collecting stderr meanwhile.
  Read read_line(std::string& line, std::optional<double> timeout_s);

  /// SIGKILLs the process group and reaps the child.
  ExitStatus kill();
  /// Waits for the child to end (after closing its stdin) and reaps it.
  ExitStatus wait();

  /// The last non-empty line the child wrote to stderr (shortened), or "".
  std::string last_stderr_line() const;
  /// The tail of what the child wrote to stderr (at most a few KiB).
  const std::string& stderr_tail() const noexcept { return stderr_; }

 private:
  friend Captured run_captured(std::vector<std::string> argv, const CaptureOptions& options);
  void drain(int timeout_ms);
  ExitStatus reap(bool block);
  void end_watcher() noexcept;

  pid_t pid_ = -1;
  pid_t watcher_ = -1;  ///< kills the child's process group when this process dies
  int life_ = -1;       ///< the watcher's pipe: closed (or this process dead), it kills
  int in_ = -1;
  int out_ = -1;
  int err_ = -1;
  std::string out_buf_;
  std::string stderr_;
  std::optional<ExitStatus> status_;
};

}  // namespace tune
