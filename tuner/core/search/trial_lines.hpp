// The one reader of a trial log's lines (docs/formats.md "Trial log"): its header line and its
// trial lines, as every command reads them: a run's resume (TrialLog::open, read_log), a
// re-tune's prior, `show`, `report`, `export` and `store push`. One set of rules, so that what
// one command refuses no other shows as true: the limits of input_limits.hpp (a line over
// max_log_line_bytes, JSON nested deeper than max_json_depth), a key said twice in one object,
// a time's minimum above its median (trial_line_problem), the trial's own types and ranges
// (trial_from_json), a torn last line (an interrupted append).
//
// Example:
//   LogLines lines(path, in);
//   auto problem = read_log_lines(lines, {[&](const LogHeader& h) { ...; return std::nullopt; },
//                                         [&](Trial&& t, int line) { ... },
//                                         [&](std::string&& w) { warn(w); }});
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <tuner/core/base/log_lines.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/search/trial.hpp>
#include <tuner/core/search/trial_log.hpp>

namespace tune {

/// The header line (without its newline) of the log at `where`, line `number`: the header, or a
/// diagnostic at that line (too long or too deep, not JSON, a key said twice, not a header,
/// another schema).
result<LogHeader> read_log_header(std::string_view first, const std::string& where, int number = 1);

/// Line `number` of the log at `where` (a trial line, without its newline): the trial, or
/// nullopt with `warning` set to why the line is skipped (`<where>:<number>: warning: skipped a
/// line that is not valid JSON`), trial_line_problem's rule included (`maximize`: the log's
/// objective).
std::optional<Trial> read_trial_line(std::string_view line, const std::string& where, int number,
                                     std::string& warning, bool maximize = false);

/// What read_log_lines hands out, in the order of the file.
struct LogLineVisitor {
  /// The header (the first line that holds more than white space); a diagnostic it returns
  /// stops the reading and is returned.
  std::function<std::optional<diagnostic>(const LogHeader&)> header;
  /// Each trial read, with its line number.
  std::function<void(Trial&&, int)> trial;
  /// Each line skipped (read_trial_line's warning, or a torn last line).
  std::function<void(std::string&&)> warning;
};

/// Reads a log a line at a time: lines that hold only white space are passed over, the first
/// other line is the header (read_log_header), each later one a trial (read_trial_line, under the
/// header's objective); a last line without its newline is a torn append, skipped with
/// `<where>:<n>: warning: ignored a torn last line (an interrupted write)`. A diagnostic for a
/// bad header, an empty log, or a file that grew past max_log_bytes while it was read.
std::optional<diagnostic> read_log_lines(LogLines& lines, const LogLineVisitor& visit);

}  // namespace tune
