// Reading a trial log for display (`tuner show`, `tuner report`): read-only and tolerant. No
// lock is taken and nothing is repaired (TrialLog::open, which a run uses, does both); lines
// that do not read are skipped with a warning naming the line. The header and each trial go
// through the engine's readers (header_from_json, trial_from_json): a header of another
// log_schema is refused, a trial the engine would not read (a negative time, a non-string
// phase) is skipped with the reason.
#pragma once

#include <istream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <tuner/core/base/result.hpp>
#include <tuner/core/search/overhead.hpp>

namespace tune::cli {

struct LogFile {
  std::string path;
  nlohmann::json header;               ///< the first line, an object with `log_schema`
  std::vector<nlohmann::json> trials;  ///< each further line that is a JSON object
  std::vector<std::string> warnings;   ///< `<path>:<line>: warning: ...` per skipped line
  bool maximize = false;               ///< the header's objective: a higher score is better
};

/// Where the log's time went (core/search/overhead.hpp), from the trials that carry times; nullopt
/// for a log from before them.
std::optional<OverheadSummary> log_overhead(const LogFile& log);

/// Reads the log at `path` from `in` a line at a time, holding at most max_log_line_bytes of a
/// line (a longer one is skipped with a warning). Refuses (with a diagnostic naming the file)
/// text whose first line is not a log header, or that holds none.
result<LogFile> read_log(const std::string& path, std::istream& in);

/// read_log of `content`, the text of the log at `path`.
result<LogFile> parse_log_file(const std::string& path, const std::string& content);

/// read_log of the file at `path`, refused when it is not a regular file.
result<LogFile> read_log_file(const std::string& path);

/// The first line of the file at `path`, at most max_log_line_bytes + 1 bytes of it.
std::string first_line(const std::string& path);

/// Whether `content` (of `path`) looks like a trial log: a `.jsonl` name, or a first line that
/// is a JSON object with `log_schema`.
bool looks_like_log(const std::string& path, const std::string& content);

}  // namespace tune::cli
