// Reading a trial log for display (`tuner show`, `tuner report`): read-only and tolerant. No
// lock is taken and nothing is repaired (TrialLog::open, which a run uses, does both); lines
// that do not read are skipped with a warning naming the line. The lines go through the
// engine's one reader (tuner/core/search/trial_lines.hpp): a header of another log_schema is
// refused, a trial the engine would not read (a negative time, a non-string phase, a key said
// twice, a minimum above its median) is skipped with the reason.
#pragma once

#include <functional>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <tuner/core/base/log_lines.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/search/overhead.hpp>
#include <tuner/core/search/trial.hpp>

namespace tune::cli {

struct LogFile {
  std::string path;
  nlohmann::json header;               ///< the first line, an object with `log_schema`
  std::vector<nlohmann::json> trials;  ///< each further line that is a JSON object
  std::vector<std::string> warnings;   ///< `<path>:<line>: warning: ...` per skipped line
  bool maximize = false;               ///< the header's objective: a higher score is better
};

/// What visit_log hands on while it reads a log.
struct LogVisitor {
  /// The header, as the engine's reader writes it back, and whether its objective maximizes.
  std::function<void(const nlohmann::json& header, bool maximize)> header;
  /// Each trial that reads, as JSON written back from the engine's Trial, and that Trial.
  std::function<void(const nlohmann::json& trial, const Trial& parsed)> trial;
  /// `<path>:<line>: warning: ...` for each skipped line.
  std::function<void(std::string&& warning)> warning;
};

/// Reads a log a line at a time, holding one line (show, report): the header, then each trial,
/// to `visit`. A diagnostic (naming the file) for text whose first line is not a log header,
/// text that holds none, or a log that grew past max_log_bytes while it was read.
std::optional<diagnostic> visit_log(LogLines& lines, const LogVisitor& visit);

/// Reads the log at `path` from `in` a line at a time, holding at most max_log_line_bytes of a
/// line (a longer one is skipped with a warning). Refuses (with a diagnostic naming the file)
/// text whose first line is not a log header, or that holds none.
result<LogFile> read_log(const std::string& path, std::istream& in);

/// read_log of `content`, the text of the log at `path`.
result<LogFile> parse_log_file(const std::string& path, const std::string& content);

/// The first line of the file at `path`, at most max_log_line_bytes + 1 bytes of it.
std::string first_line(const std::string& path);

/// Whether `content` (of `path`) looks like a trial log: a `.jsonl` name, or a first line that
/// is a JSON object with `log_schema`.
bool looks_like_log(const std::string& path, const std::string& content);

}  // namespace tune::cli
