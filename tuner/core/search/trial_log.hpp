// The trial log: JSON Lines, a header then one trial per line (docs/formats.md "Trial log").
// A run resumes from it, so it is guarded: a log of another search is refused with every
// differing field and left byte-identical; a torn header-only file counts as empty; a torn last
// line is repaired; other unreadable lines are skipped with a warning naming the line; one
// writer at a time (FileLock), and each append is one whole line, written once and synced.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/search/file_lock.hpp>
#include <tuner/core/search/trial.hpp>

namespace tune {

/// The log schema this build writes; a log of another schema is refused.
inline constexpr int log_schema = 1;

/// `{"strategy":"grid"}`: the search of a header that names none.
const nlohmann::json& default_log_search();

/// The first line of a log: which search it belongs to.
struct LogHeader {
  int log_schema = tune::log_schema;
  std::string tuner;       ///< `<kernel>/<bucket>`, or the Autotuner's name
  std::string space_hash;  ///< hash of the space the trials come from
  std::string arch;        ///< `sm_90`; empty when not about one architecture (`tuner exec`)
  std::optional<std::string> source_hash;  ///< compared only when both sides carry one
  std::optional<std::string> toolchain;    ///< compared only when both sides carry one
  /// The build identity (BuildIdentity::digest, tuner/core/base/identity.hpp): every input that
  /// decided the trials' candidates. A log without one, read by a run that has one, is of an
  /// unknown build (judge_log).
  std::optional<std::string> identity;
  /// The identity's inputs (to_json(BuildIdentity)), so that a stale log names what changed;
  /// null when the header carries no identity. Not compared: the digest covers them.
  nlohmann::json identity_inputs;
  /// `minimize` (times) or `maximize` (scores): logs of the two never mix. A header without
  /// the field reads as `minimize`.
  std::string objective = "minimize";
  /// The search strategy and the settings that shape its sequence (SearchSettings::identity):
  /// a resumed run must follow the same one. A header without the field reads as a grid search.
  nlohmann::json search = default_log_search();
  /// The prior a re-tune started from (docs/search.md "Re-tunes start from what was measured"):
  /// `{"from": <log>, "tuner": <its tuner>, "configs": <its configs in this space>, "top_k":
  /// <of them measured first>}`; null when none. Informational: never compared, since a
  /// resumed run reads the prior again.
  nlohmann::json prior;

  friend bool operator==(const LogHeader&, const LogHeader&) = default;
};

/// The header as one JSON object (keys sorted; null for absent optional fields).
nlohmann::json to_json(const LogHeader& header);
/// Reads a header; the message says what is missing or wrong (no path or line).
result<LogHeader> header_from_json(const nlohmann::json& j);
/// Every field in which `logged` differs from `expected`, as `field 'logged' (log) vs
/// 'expected' (this run)`, in header order; empty when they agree.
std::vector<std::string> header_differences(const LogHeader& logged, const LogHeader& expected);

/// What a run does with the log it finds at its path: the one rule the tune and `tuner status`
/// share (docs/search.md "Re-tunes start from what was measured").
enum class LogFate {
  resume,  ///< the same search of the same build: its trials are adopted
  prior,   ///< the same search of another build (identity, source, toolchain or pruned space):
           ///< set aside as the bucket's prior, and a new log starts
  refuse,  ///< another search (tuner, arch, objective, strategy): refused, left as it is
};

struct LogJudgement {
  LogFate fate = LogFate::resume;
  /// For `prior`: what changed, in words (`'kernels/tile.cuh' changed`); for `refuse`: every
  /// differing field (header_differences).
  std::vector<std::string> changes;
};

/// Judges `logged` (its prior field aside) against the header this run expects.
LogJudgement judge_log(const LogHeader& logged, const LogHeader& expected);

/// A log as read without opening it for writing (a prior, docs/search.md "Re-tunes start from
/// what was measured"): no lock is taken and nothing is repaired.
struct LogContents {
  LogHeader header;
  std::vector<Trial> trials;
  /// `<path>:<line>: warning: ...` for each line skipped (a torn last line included).
  std::vector<std::string> warnings;
};

/// Reads the log at `path` read-only: a diagnostic naming the file for one that cannot be read,
/// is not a regular file, is over the size limit or has no valid header (of this schema).
result<LogContents> read_log(const std::filesystem::path& path);

/// An open, locked trial log.
class TrialLog {
 public:
  /// Opens the log at `path` for `header`, creating parent directories, and writes the header
  /// to a missing or empty file (or one holding only a torn header). Refuses, leaving the file
  /// byte-identical: a non-empty file without a valid header, a header that differs from
  /// `header` (every differing field in one message), a log locked by another writer (naming
  /// it). A torn last trial line is truncated away (or completed, when it parses); other
  /// unreadable lines are skipped, each with a warning naming its line. Throws tune::error on
  /// I/O failure.
  static result<TrialLog> open(const std::filesystem::path& path, const LogHeader& header);

  TrialLog(TrialLog&&) noexcept;
  TrialLog& operator=(TrialLog&&) noexcept;
  TrialLog(const TrialLog&) = delete;
  TrialLog& operator=(const TrialLog&) = delete;
  ~TrialLog();

  /// Appends one trial as a whole line: a single write, then fsync. On failure the file is cut
  /// back to its previous length and tune::error is thrown.
  void append(const Trial& trial);

  const std::filesystem::path& path() const noexcept { return path_; }
  const LogHeader& header() const noexcept { return header_; }
  /// The trials read at open, in file order (appended ones are not added).
  const std::vector<Trial>& trials() const noexcept { return trials_; }
  /// `<path>:<line>: warning: ...` for each line skipped or repaired at open.
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }

 private:
  TrialLog(std::filesystem::path path, FileLock lock, int fd) noexcept
      : path_(std::move(path)), lock_(std::move(lock)), fd_(fd) {}
  void close() noexcept;

  std::filesystem::path path_;
  FileLock lock_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  LogHeader header_;
  std::vector<Trial> trials_;
  std::vector<std::string> warnings_;
};

/// The resume state of a search: for each config of `configs` (by id), the last logged trial
/// a run may adopt instead of measuring. Only measured trials of phase `required` or `search`
/// count (invalid ones are retried, runoffs re-run); when `keys` is given (one per config) and
/// a config's key is set, the trial's cache key must equal it. A trial that checked an adopted
/// one (`checks`) replaces whatever came before it, valid or not.
std::map<std::string, Trial> adoptable_trials(
    const std::vector<Trial>& logged, const std::vector<Config>& configs,
    const std::vector<std::optional<std::string>>* keys = nullptr);

}  // namespace tune
