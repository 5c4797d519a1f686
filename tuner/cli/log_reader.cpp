#include <tuner/cli/log_reader.hpp>

#include <fstream>
#include <istream>
#include <sstream>

#include <fmt/core.h>

#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/log_lines.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/search/trial.hpp>
#include <tuner/core/search/trial_log.hpp>

namespace tune::cli {

using nlohmann::json;

std::optional<diagnostic> visit_log(LogLines& lines, const LogVisitor& visit) {
  const std::string& path = lines.path();
  std::string line;
  bool have_header = false;
  bool maximize = false;
  while (lines.next(line)) {
    const int number = lines.number();
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    // Too long or too deep to hold in memory and print (json copies and dumps recurse).
    if (lines.too_long(line) || json_nesting_problem(line, path)) {
      if (!have_header)
        return diagnostic{path, number, 0,
                          fmt::format("not a trial log: the first line is longer than {} or "
                                      "nests deeper than {} levels",
                                      describe_size(max_log_line_bytes), max_json_depth)};
      visit.warning(lines.too_long(line)
                        ? fmt::format("{}:{}: warning: skipped a line longer than {}", path, number,
                                      describe_size(max_log_line_bytes))
                        : fmt::format("{}:{}: warning: skipped a line nesting deeper than {} "
                                      "levels",
                                      path, number, max_json_depth));
      continue;
    }
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      visit.warning(fmt::format("{}:{}: warning: unreadable line skipped", path, number));
      continue;
    }
    if (!have_header) {
      if (!j.contains("log_schema"))
        return diagnostic{path, number, 0, "not a trial log: the first line has no 'log_schema'"};
      // The engine's own reader: what a run would refuse is not shown as if it were true.
      result<LogHeader> header = header_from_json(j);
      if (!header) return diagnostic{path, number, 0, header.error().message};
      if (header->log_schema != log_schema)
        return diagnostic{path, number, 0,
                          fmt::format("log_schema {} is not supported (this tuner reads {})",
                                      header->log_schema, log_schema)};
      maximize = header->objective == "maximize";
      visit.header(to_json(*header), maximize);
      have_header = true;
      continue;
    }
    // Each trial through the engine's reader too (types, finite positive times), then written
    // back, so that show and report only meet fields of the types they expect.
    result<Trial> trial = trial_from_json(j);
    if (!trial) {
      visit.warning(
          fmt::format("{}:{}: warning: trial skipped: {}", path, number, trial.error().message));
      continue;
    }
    // The rule of every trial reader (a run's resume, export): a key written twice, a minimum
    // above the median.
    if (std::optional<std::string> why = trial_line_problem(line, *trial, maximize)) {
      visit.warning(fmt::format("{}:{}: warning: trial skipped: {}", path, number, *why));
      continue;
    }
    visit.trial(to_json(*trial), *trial);
  }
  if (auto d = lines.overflow()) return d;
  if (!have_header) return diagnostic{path, 0, 0, "an empty trial log (no header line)"};
  return std::nullopt;
}

result<LogFile> read_log(const std::string& path, std::istream& in) {
  LogFile log;
  log.path = path;
  LogLines lines(path, in);
  std::optional<diagnostic> problem =
      visit_log(lines, {[&](const json& header, bool maximize) {
                          log.header = header;
                          log.maximize = maximize;
                        },
                        [&](const json& trial, const Trial&) { log.trials.push_back(trial); },
                        [&](std::string&& w) { log.warnings.push_back(std::move(w)); }});
  if (problem) return fail(*problem);
  return log;
}

result<LogFile> parse_log_file(const std::string& path, const std::string& content) {
  std::istringstream in(content);
  return read_log(path, in);
}

std::string first_line(const std::string& path) {
  if (not_regular_problem(path)) return "";
  std::ifstream in(path, std::ios::binary);
  LogLines lines(path, in);
  std::string line;
  lines.next(line);
  return line;
}

bool looks_like_log(const std::string& path, const std::string& content) {
  if (path.size() >= 6 && path.compare(path.size() - 6, 6, ".jsonl") == 0) return true;
  const json j = json::parse(content.substr(0, content.find('\n')), nullptr, false);
  return !j.is_discarded() && j.is_object() && j.contains("log_schema");
}

}  // namespace tune::cli
