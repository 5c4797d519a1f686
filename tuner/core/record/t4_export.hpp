// Export of trial logs to the T4 results format of Kernel Tuner (its "Open Autotuning Results
// Schema", version 1.0.0), so that its tools read tune's results (docs/formats.md "T4 export").
//
// Reading is read-only and tolerant, as `tuner show` reads a log: no lock, nothing repaired, a
// trial line that does not read is skipped with a warning naming its line. Several logs merge
// into one export only when they come from the same search (same tuner, space, arch and
// objective); the mapping of each trial (its config, timings, invalidity class, device) is a
// pure function, tested without a file.
#pragma once

#include <cstddef>
#include <functional>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <tuner/core/base/log_lines.hpp>
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

/// Reads a log for export a line at a time (nothing but the current line is held): `on_header`
/// gets the header (a diagnostic it returns stops the read and is returned), `on_trial` each
/// trial that reads, `on_warning` the `<path>:<line>: warning: ...` of each skipped line.
/// Refuses (with a diagnostic naming the file and line) text without a header line or with a
/// header that does not read, and a log that grew past max_log_bytes while it was read; a
/// trial line that does not read, or whose minimum is above its median, is skipped.
std::optional<diagnostic> read_export_log(
    LogLines& lines, const std::function<std::optional<diagnostic>(const LogHeader&)>& on_header,
    const std::function<void(Trial&&)>& on_trial,
    const std::function<void(std::string&&)>& on_warning);

/// read_export_log of `content`, the text of the log at `path`, into one ExportLog.
result<ExportLog> parse_export_log(const std::string& path, std::string_view content);

/// One trial as a T4 result: `timestamp`, `configuration` (the params), `objectives` (`time`,
/// or `score` for a maximizing log), `times` (`runtimes` empty: a log keeps summary statistics,
/// not each rep), `invalidity`, `correctness` (0 for a failed correctness gate, else 1) and
/// `measurements` (time or score, time_min, reps, phase, device, warnings; `error` with the
/// reason of an invalid trial). Times stay in milliseconds (unit `ms`).
nlohmann::json t4_result(const Trial& trial, std::string_view objective);

/// Writes the T4 results document of several logs, merged in order, without holding it: the
/// results are written to a scratch stream as the trials come, and `finish` writes the document
/// (`schema_version`, `results`: one per trial of phase `required` or `search`; runoff trials,
/// which time the two finalists again in alternation, are left out and counted; `metadata`:
/// `timeunit` `milliseconds`, the search's tuner, arch, space hash, objective, source hash and
/// toolchain, and the exporting tune's version). The text is what `dump_json(document, 2)`
/// writes, plus a newline.
class T4Writer {
 public:
  /// `results` is the scratch stream the results go to (a temporary file for a large export).
  explicit T4Writer(std::ostream& results) : results_(results) {}
  /// Starts the next log: refuses a header that differs from the first log's (tuner,
  /// space_hash, arch, objective, search; source_hash and toolchain when both carry one),
  /// naming the log, the first log and every differing field.
  std::optional<diagnostic> begin(const std::string& path, const LogHeader& header);
  /// Adds a trial of the log begun last.
  void add(const Trial& trial);
  /// Runoff trials left out so far.
  std::size_t runoff_trials() const noexcept { return runoff_trials_; }
  /// Writes the document to `out`: its metadata, then the results read back from `results`
  /// (the scratch stream's text, from its start). Needs a log begun.
  void finish(std::istream& results, std::ostream& out) const;

 private:
  std::ostream& results_;
  std::optional<LogHeader> header_;  // the first log's, source_hash and toolchain merged in
  std::string path_, source_hash_path_, toolchain_path_;
  std::size_t results_written_ = 0;
  std::size_t runoff_trials_ = 0;
};

/// What an export holds besides its document.
struct T4Export {
  nlohmann::json document;        ///< the T4 results object
  std::size_t runoff_trials = 0;  ///< runoff trials left out
};

/// The T4 results document of `logs` (T4Writer's, as JSON), or the diagnostic of
/// T4Writer::begin.
result<T4Export> export_t4(const std::vector<ExportLog>& logs);

}  // namespace tune
