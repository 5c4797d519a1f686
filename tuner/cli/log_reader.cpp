#include <tuner/cli/log_reader.hpp>

#include <fstream>
#include <istream>
#include <sstream>

#include <fmt/core.h>

#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/log_lines.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/search/trial.hpp>
#include <tuner/core/search/trial_lines.hpp>

namespace tune::cli {

using nlohmann::json;

std::optional<diagnostic> visit_log(LogLines& lines, const LogVisitor& visit) {
  // The one reader of log lines (tuner/core/search/trial_lines.hpp), as a run's resume, a prior
  // and export read them: what a run would refuse is not shown as if it were true. Each trial
  // is written back from the engine's Trial, so that show and report only meet fields of the
  // types they expect.
  bool maximize = false;
  return read_log_lines(lines, {[&](const LogHeader& h) {
                                  maximize = h.objective == "maximize";
                                  visit.header(to_json(h), maximize);
                                  return std::optional<diagnostic>();
                                },
                                [&](Trial&& t, int) { visit.trial(to_json(t), t); },
                                [&](std::string&& w) { visit.warning(std::move(w)); }});
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
