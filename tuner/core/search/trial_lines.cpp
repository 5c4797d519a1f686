// The one reader of a trial log's lines (trial_lines.hpp).
#include <tuner/core/search/trial_lines.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/json_position.hpp>
#include <tuner/core/base/text.hpp>

namespace tune {

result<LogHeader> read_log_header(std::string_view first, const std::string& where, int number) {
  if (first.size() > max_log_line_bytes || json_nesting_problem(first, where))
    return fail(where, number, 0,
                fmt::format("not a trial log: the first line is longer than {} or nests deeper "
                            "than {} levels",
                            describe_size(max_log_line_bytes), max_json_depth));
  const nlohmann::json j = nlohmann::json::parse(first, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return fail(where, number, 0, "not a trial log: the first line is not valid JSON");
  result<LogHeader> header = header_from_json(j);
  if (!header)
    return fail(where, number, 0, "not a trial log: " + printable(header.error().message));
  if (header->log_schema != log_schema)
    return fail(where, number, 0,
                fmt::format("log_schema {} is not supported (this tuner reads {})",
                            header->log_schema, log_schema));
  if (auto dup = duplicate_key_problem(first))
    return fail(where, number, 0, "not a trial log: " + dup->second);
  return header;
}

std::optional<Trial> read_trial_line(std::string_view line, const std::string& where, int number,
                                     std::string& warning, bool maximize) {
  const bool too_long = line.size() > max_log_line_bytes;
  if (too_long || json_nesting_problem(line, where)) {
    warning = fmt::format("{}:{}: warning: skipped a line {}", where, number,
                          too_long ? "longer than " + describe_size(max_log_line_bytes)
                                   : fmt::format("nesting deeper than {} levels", max_json_depth));
    return std::nullopt;
  }
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    warning = fmt::format("{}:{}: warning: skipped a line that is not valid JSON", where, number);
    return std::nullopt;
  }
  result<Trial> trial = trial_from_json(j);
  const auto why =
      trial ? trial_line_problem(line, *trial, maximize) : std::optional<std::string>("");
  if (trial && !why) return std::move(*trial);
  // The reason may quote the line (a config id, a key): escaped, as all text from a log is.
  warning = fmt::format("{}:{}: warning: skipped {} trial: {}", where, number,
                        trial ? "an inconsistent" : "an unreadable",
                        printable(trial ? *why : trial.error().message));
  return std::nullopt;
}

std::optional<diagnostic> read_log_lines(LogLines& lines, const LogLineVisitor& visit) {
  const std::string& where = lines.path();
  std::string line;
  std::optional<LogHeader> header;
  while (lines.next(line)) {
    const int number = lines.number();
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!header) {
      result<LogHeader> h = read_log_header(line, where, number);
      if (!h) return h.error();
      if (std::optional<diagnostic> stop = visit.header(*h)) return stop;
      header = std::move(*h);
      continue;
    }
    if (lines.unterminated()) {
      visit.warning(fmt::format("{}:{}: warning: ignored a torn last line (an interrupted write)",
                                where, number));
      break;
    }
    std::string warning;
    if (std::optional<Trial> t =
            read_trial_line(line, where, number, warning, header->objective == "maximize"))
      visit.trial(std::move(*t), number);
    else
      visit.warning(std::move(warning));
  }
  if (auto d = lines.overflow()) return d;
  if (!header) return diagnostic{where, 0, 0, "an empty trial log (no header line)"};
  return std::nullopt;
}

}  // namespace tune
