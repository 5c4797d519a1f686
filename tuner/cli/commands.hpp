// One file per subcommand; each adds itself to the app and, when chosen, leaves the function
// that runs it in `run`. Exit codes: tuner/core/base/exit_codes.hpp.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <tuner/core/build/cache_key.hpp>
#include <tuner/core/build/kernel_build.hpp>
#include <tuner/core/build/kernel_cache.hpp>
#include <tuner/core/record/record.hpp>

#include <tuner/core/base/exit_codes.hpp>

namespace tune {
class RemoteStore;
class TotalBudget;
}  // namespace tune

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
void add_store_command(CLI::App& app, Run& run);
void add_merge_command(CLI::App& app, Run& run);
void add_shards_command(CLI::App& app, Run& run);
void add_slurm_command(CLI::App& app, Run& run);
void add_export_command(CLI::App& app, Run& run);
void add_embed_command(CLI::App& app, Run& run);

/// What `tuner run` is asked to do (`tuner tune` asks the same after its warm).
struct RunOptions {
  std::string manifest;
  std::string bucket;  ///< only this bucket ("" for every one)
  std::string arch;    ///< only this architecture ("" for every one)
  std::optional<double> budget_s;
  std::optional<double> timeout_s;
  std::optional<int> device;
  bool if_stale = false;  ///< measure only an architecture whose record does not verify
  std::string remote;     ///< --remote: the remote store (docs/store.md); "" for the default
  bool no_remote_trials = false;  ///< measure every candidate here, adopting no shared trial
  RemoteStore* store = nullptr;   ///< the opened store, set by run_kernel for its buckets
  std::string shard;  ///< `K/N`: measure only this shard's part (tuner/cli/cmd_shard_run.cpp)
  std::string out;    ///< where a shard writes its logs and summary
  /// --compile-ahead: compile missing candidates ahead of the worker
  /// (core/search/compile_ahead.hpp)
  bool compile_ahead = false;
  std::optional<int> compile_jobs;  ///< --compile-jobs: at most this many compiles at once
  /// A whole tune's budget (`tuner tune --total-budget`): each bucket measured gets its share
  /// (tuner/core/tune/total_budget.hpp) in place of `budget_s`, capped by it.
  TotalBudget* total_budget = nullptr;
  bool json = false;  ///< --json: people's lines to stderr, a summary on stdout (json_summary.hpp)
};

/// Tunes a kernel and writes its records (tuner/cli/cmd_run.cpp); the exit code.
int run_kernel(const RunOptions& options);

/// What `tuner merge` is asked to do (`tuner tune` over several devices asks the same).
struct MergeOptions {
  std::string manifest;
  std::string arch;               ///< only this architecture ("" for every one)
  std::vector<std::string> from;  ///< folders of shards (default: <log_dir>/shards)
  bool partial = false;           ///< merge even when shards are missing
  std::optional<int> device;      ///< the runoff's device
  std::optional<double> timeout_s;
};

/// Merges a kernel's shards and writes its records (tuner/cli/cmd_merge.cpp); the exit code.
int merge_kernel(const MergeOptions& options);

/// Tunes `arch` of `build` over several devices of this host (TUNE_DEVICES): one shard per
/// device in parallel, then the merge, with the runoff on the first device
/// (tuner/cli/tune_devices.cpp); the exit code.
int tune_on_devices(const KernelBuild& build, const std::string& arch,
                    const std::vector<int>& devices);

/// The devices TUNE_DEVICES lists (`0,1`, or `all` for every GPU of this host); empty when it
/// is unset or empty; a diagnostic for a bad list.
result<std::vector<int>> devices_from_env();

/// The kernel build `tuner run` (and a shard of it) measures: loaded from `manifest`, with a
/// harness. Otherwise prints why and sets `exit_code` (bad input; negative without a harness).
std::optional<KernelBuild> load_build_to_run(const std::string& manifest, int& exit_code);

/// Measures one shard of a kernel's tune (`tuner run --shard K/N`); the exit code.
int run_shard(const RunOptions& options);

/// Verifies `record` in memory as `tuner verify` would and writes it to `record_path`, printing
/// `<kernel>: wrote <record> (<arch>), verified` and its entries; otherwise says why (as
/// `<command>: error: ...`) and leaves the old record. The exit code.
int write_record(const KernelBuild& build, const std::string& arch, const Record& record,
                 const std::filesystem::path& record_path, const char* command = "tuner run");

}  // namespace tune::cli
