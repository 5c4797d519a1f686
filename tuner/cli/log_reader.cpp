#include <tuner/cli/log_reader.hpp>

#include <sstream>

#include <fmt/core.h>

#include <tuner/core/input_limits.hpp>

namespace tune::cli {

using nlohmann::json;

result<LogFile> parse_log_file(const std::string& path, const std::string& content) {
  LogFile log;
  log.path = path;
  std::istringstream in(content);
  std::string line;
  bool have_header = false;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    // Too long or too deep to hold in memory and print (json copies and dumps recurse).
    if (line.size() > max_log_line_bytes || json_nesting_problem(line, path)) {
      if (!have_header)
        return fail(path, number, 0,
                    fmt::format("not a trial log: the first line is longer than {} or nests "
                                "deeper than {} levels",
                                describe_size(max_log_line_bytes), max_json_depth));
      log.warnings.push_back(
          line.size() > max_log_line_bytes
              ? fmt::format("{}:{}: warning: skipped a line longer than {}", path, number,
                            describe_size(max_log_line_bytes))
              : fmt::format("{}:{}: warning: skipped a line nesting deeper than {} levels", path,
                            number, max_json_depth));
      continue;
    }
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      log.warnings.push_back(fmt::format("{}:{}: warning: unreadable line skipped", path, number));
      continue;
    }
    if (!have_header) {
      if (!j.contains("log_schema"))
        return fail(path, 1, 0, "not a trial log: the first line has no 'log_schema'");
      log.header = std::move(j);
      have_header = true;
      continue;
    }
    log.trials.push_back(std::move(j));
  }
  if (!have_header) return fail(path, 0, 0, "an empty trial log (no header line)");
  return log;
}

bool looks_like_log(const std::string& path, const std::string& content) {
  if (path.size() >= 6 && path.compare(path.size() - 6, 6, ".jsonl") == 0) return true;
  const json j = json::parse(content.substr(0, content.find('\n')), nullptr, false);
  return !j.is_discarded() && j.is_object() && j.contains("log_schema");
}

}  // namespace tune::cli
