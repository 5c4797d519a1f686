// A long-lived child process spoken to in lines: the runner's supervisor starts its measuring
// worker with it, sends one JSON request per line on the child's stdin and reads one JSON answer
// per line from its stdout, with a deadline. The child runs in its own process group (a timeout
// kills whatever it started too) and dies with its parent (PR_SET_PDEATHSIG). Its stderr is
// collected, and the tail kept, so a death can be explained.
#pragma once

#include <sys/types.h>

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

class Subprocess {
 public:
  /// Starts `argv` (searched on PATH) with this environment plus `extra_env` (`NAME=value`).
  /// Throws tune::error when it cannot fork; a program that cannot be executed exits 127 with
  /// the reason on its stderr.
  explicit Subprocess(std::vector<std::string> argv, std::vector<std::string> extra_env = {});
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
  void drain(int timeout_ms);
  ExitStatus reap(bool block);

  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  int err_ = -1;
  std::string out_buf_;
  std::string stderr_;
  std::optional<ExitStatus> status_;
};

}  // namespace tune
