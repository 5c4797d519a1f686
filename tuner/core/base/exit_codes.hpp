// The exit codes of every tune program (`tuner` and its subcommands, a kernel's runner), in one
// place. Scripts and CI read them: 0 success, 1 a negative answer ("stale", "nothing valid"),
// 2 bad usage or bad input, 3 a broken environment (no compiler, no GPU, an I/O failure), and
// 128 + N after signal N asked the program to stop (130 for SIGINT, 143 for SIGTERM).
#pragma once

namespace tune {

inline constexpr int exit_ok = 0;
inline constexpr int exit_negative = 1;
inline constexpr int exit_bad_input = 2;
inline constexpr int exit_environment = 3;

/// The exit code after signal `signal` stopped the program.
constexpr int exit_interrupted(int signal) noexcept {
  return 128 + signal;
}

/// Whether `code` says a signal stopped the program (SIGINT or SIGTERM).
constexpr bool is_interrupted_exit(int code) noexcept {
  return code == 130 || code == 143;
}

}  // namespace tune
