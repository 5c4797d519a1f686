#include <tuner/cli/log_reader.hpp>

#include <fstream>
#include <istream>
#include <sstream>

#include <fmt/core.h>

#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/search/trial.hpp>
#include <tuner/core/search/trial_log.hpp>

namespace tune::cli {

using nlohmann::json;

namespace {

// The next line of `in` (without its newline) into `line`; false at the end. Of a line longer
// than `max` only max + 1 bytes are kept: a 300 MB line costs no more memory than a long one.
bool next_line(std::istream& in, std::string& line, std::size_t max) {
  line.clear();
  std::streambuf* buf = in.rdbuf();
  int c = buf->sbumpc();
  if (c == std::char_traits<char>::eof()) return false;
  while (c != std::char_traits<char>::eof() && c != '\n') {
    if (line.size() <= max) line.push_back(static_cast<char>(c));
    c = buf->sbumpc();
  }
  return true;
}

}  // namespace

result<LogFile> read_log(const std::string& path, std::istream& in) {
  LogFile log;
  log.path = path;
  std::string line;
  bool have_header = false;
  int number = 0;
  while (next_line(in, line, max_log_line_bytes)) {
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
        return fail(path, number, 0, "not a trial log: the first line has no 'log_schema'");
      // The engine's own reader: what a run would refuse is not shown as if it were true.
      result<LogHeader> header = header_from_json(j);
      if (!header) return fail(path, number, 0, header.error().message);
      if (header->log_schema != log_schema)
        return fail(path, number, 0,
                    fmt::format("log_schema {} is not supported (this tuner reads {})",
                                header->log_schema, log_schema));
      log.header = to_json(*header);
      log.maximize = header->objective == "maximize";
      have_header = true;
      continue;
    }
    // Each trial through the engine's reader too (types, finite positive times), then written
    // back, so that show and report only meet fields of the types they expect.
    result<Trial> trial = trial_from_json(j);
    if (!trial) {
      log.warnings.push_back(
          fmt::format("{}:{}: warning: trial skipped: {}", path, number, trial.error().message));
      continue;
    }
    log.trials.push_back(to_json(*trial));
  }
  if (!have_header) return fail(path, 0, 0, "an empty trial log (no header line)");
  return log;
}

result<LogFile> parse_log_file(const std::string& path, const std::string& content) {
  std::istringstream in(content);
  return read_log(path, in);
}

result<LogFile> read_log_file(const std::string& path) {
  if (auto d = not_regular_problem(path)) return fail(*d);  // /dev/zero would never end
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(path, 0, 0, "cannot read the file");
  return read_log(path, in);
}

std::string first_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  next_line(in, line, max_log_line_bytes);
  return line;
}

bool looks_like_log(const std::string& path, const std::string& content) {
  if (path.size() >= 6 && path.compare(path.size() - 6, 6, ".jsonl") == 0) return true;
  const json j = json::parse(content.substr(0, content.find('\n')), nullptr, false);
  return !j.is_discarded() && j.is_object() && j.contains("log_schema");
}

std::optional<OverheadSummary> log_overhead(const LogFile& log) {
  std::vector<Trial> trials;
  for (const nlohmann::json& j : log.trials)
    if (result<Trial> t = trial_from_json(j)) trials.push_back(std::move(*t));
  return summarize_overhead(trials);
}

}  // namespace tune::cli
