// Reading a trial log for display (`tuner show`, `tuner report`): read-only and tolerant. No
// lock is taken and nothing is repaired (TrialLog::open, which a run uses, does both); lines
// that do not read are skipped with a warning naming the line.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <tuner/core/result.hpp>

namespace tune::cli {

struct LogFile {
  std::string path;
  nlohmann::json header;               ///< the first line, an object with `log_schema`
  std::vector<nlohmann::json> trials;  ///< each further line that is a JSON object
  std::vector<std::string> warnings;   ///< `<path>:<line>: warning: ...` per skipped line
};

/// Parses `content`, the text of the log at `path`. Refuses (with a diagnostic naming the file)
/// text whose first line is not a log header, or that holds none.
result<LogFile> parse_log_file(const std::string& path, const std::string& content);

/// Whether `content` (of `path`) looks like a trial log: a `.jsonl` name, or a first line that
/// is a JSON object with `log_schema`.
bool looks_like_log(const std::string& path, const std::string& content);

}  // namespace tune::cli
