// One file per subcommand; each adds itself to the app and, when chosen, leaves the function
// that runs it in `run`. Exit codes: 0 success, 1 a negative answer (stale, nothing valid),
// 2 bad usage or bad input, 3 a broken environment (no compiler, no GPU, I/O failure).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace tune::cli {

using Run = std::function<int()>;

inline constexpr int exit_ok = 0;
inline constexpr int exit_negative = 1;
inline constexpr int exit_bad_input = 2;
inline constexpr int exit_environment = 3;

void add_space_command(CLI::App& app, Run& run);
void add_exec_command(CLI::App& app, Run& run);
void add_key_command(CLI::App& app, Run& run);
void add_verify_command(CLI::App& app, Run& run);
void add_status_command(CLI::App& app, Run& run);
void add_show_command(CLI::App& app, Run& run);
void add_record_command(CLI::App& app, Run& run);
void add_warm_command(CLI::App& app, Run& run);
void add_tune_command(CLI::App& app, Run& run);
void add_run_command(CLI::App& app, Run& run);
void add_header_command(CLI::App& app, Run& run);
void add_report_command(CLI::App& app, Run& run);

/// Runs `argv` (argv[0] looked up in PATH) with this process's stdin, stdout and stderr, and
/// waits for it; SIGINT and SIGTERM are ignored here meanwhile, so that the child handles them.
/// Returns its exit status, or 128 + the signal that ended it. Throws tune::error when it cannot
/// be started. (tuner/cli/cmd_run.cpp)
int run_attached(const std::vector<std::string>& argv);

}  // namespace tune::cli
