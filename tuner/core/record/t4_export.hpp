// Export of trial logs to the T4 results format of Kernel Tuner (its "Open Autotuning Results
// Schema", version 1.0.0), so that its tools read tune's results (docs/formats.md "T4 export").
//
// Reading is read-only and tolerant, as `tuner show` reads a log: no lock, nothing repaired, a
// trial line that does not read is skipped with a warning naming its line. Several logs merge
// into one export only when they come from the same search (same tuner, space, arch and
// objective); the mapping of each trial (its config, timings, invalidity class, device) is a
// pure function, tested without a file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <tuner/core/base/result.hpp>
#include <tuner/core/search/trial.hpp>
#include <tuner/core/search/trial_log.hpp>

namespace tune {

/// The version of the T4 results schema an export follows (its `schema_version`).
inline constexpr std::string_view t4_schema_version = "1.0.0";

/// The T4 classes of a trial: `correct` for a measured one, else why it has no time.
enum class T4Invalidity { correct, compile, constraints, correctness, timeout, runtime };

/// `correct`, `compile`, `constraints`, `correctness`, `timeout` or `runtime`: the T4 enum.
std::string_view to_string(T4Invalidity invalidity);

/// The T4 class of an invalid trial's `reason`, from how tune words its reasons:
///   timeout      `timed out after ...` (the worker's or the command's timeout)
///   compile      `the compiler ...` (nvcc refused it or wrote no cubin), `not compiled: ...`
///   constraints  `function '...' uses ..., over the limit of ...` (registers or shared memory
///                over the architecture's limits, found before any launch)
///   correctness  `'<output>' is wrong: ...` (the harness's correctness gate)
///   runtime      anything else: a CUDA error, a worker that died or answered nonsense, an
///                objective command's exit status or unreadable result
/// A `runoff setup failed: ` prefix is looked through.
T4Invalidity classify_invalid_reason(std::string_view reason);

/// One trial log read for export.
struct ExportLog {
  std::string path;  ///< as given, for messages
  LogHeader header;
  std::vector<Trial> trials;          ///< every trial line that reads, in file order
  std::vector<std::string> warnings;  ///< `<path>:<line>: warning: ...` per skipped line
};

/// Reads `content`, the text of the log at `path`. Refuses (with a diagnostic naming the file
/// and line) text without a header line or with a header that does not read; a trial line that
/// does not read is skipped with a warning.
result<ExportLog> parse_export_log(const std::string& path, std::string_view content);

/// One trial as a T4 result: `timestamp`, `configuration` (the params), `objectives` (`time`,
/// or `score` for a maximizing log), `times` (`runtimes` empty: a log keeps summary statistics,
/// not each rep), `invalidity`, `correctness` (0 for a failed correctness gate, else 1) and
/// `measurements` (time or score, time_min, reps, phase, device, warnings; `error` with the
/// reason of an invalid trial). Times stay in milliseconds (unit `ms`).
nlohmann::json t4_result(const Trial& trial, std::string_view objective);

/// What an export holds besides its document.
struct T4Export {
  nlohmann::json document;        ///< the T4 results object
  std::size_t runoff_trials = 0;  ///< runoff trials left out
};

/// The T4 results document of `logs`, merged in order: `schema_version`, `results` (one per
/// trial of phase `required` or `search`; runoff trials, which time the two finalists again
/// in alternation, are left out and counted) and `metadata` (`timeunit` `milliseconds`, the
/// search's tuner, arch, space hash, objective, source hash and toolchain, and the exporting
/// tune's version). Refuses a log whose header differs from the first's (tuner, space_hash,
/// arch, objective, search; source_hash and toolchain when both carry one), naming the log, the
/// first log and every differing field.
result<T4Export> export_t4(const std::vector<ExportLog>& logs);

}  // namespace tune
