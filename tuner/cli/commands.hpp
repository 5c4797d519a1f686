// One file per subcommand; each adds itself to the app and, when chosen, leaves the function
// that runs it in `run`. Exit codes: tuner/core/exit_codes.hpp.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <tuner/core/exit_codes.hpp>

namespace tune::cli {

using Run = std::function<int()>;

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
void add_archs_command(CLI::App& app, Run& run);
void add_export_command(CLI::App& app, Run& run);

/// What `tuner run` is asked to do (`tuner tune` asks the same after its warm).
struct RunOptions {
  std::string manifest;
  std::string bucket;  ///< only this bucket ("" for every one)
  std::string arch;    ///< only this architecture ("" for every one)
  std::optional<double> budget_s;
  std::optional<double> timeout_s;
  std::optional<int> device;
  bool if_stale = false;  ///< measure only an architecture whose record does not verify
};

/// Tunes a kernel and writes its records (tuner/cli/cmd_run.cpp); the exit code.
int run_kernel(const RunOptions& options);

}  // namespace tune::cli
