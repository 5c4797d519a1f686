// `tuner export --format t4 [--output F] <log.jsonl>...`: trial logs as Kernel Tuner's T4
// results JSON (docs/formats.md "T4 export"), so that its tools read tune's results.
//
// Several logs of one search (same tuner, space, arch and objective: say, the same bucket tuned
// from two build trees) merge into one document, in the order given. The document goes to
// stdout, or atomically to --output. Lines of a log that do not read are skipped, each with a
// warning on stderr; a note on stderr counts the runoff trials left out.
// Exit codes: 0 exported, 2 bad input (an unknown format, a missing or unreadable file, one that
// is not a trial log, logs of different searches), 3 the output cannot be written.
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include <tuner/cli/commands.hpp>
#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/record/t4_export.hpp>

namespace tune::cli {

namespace {

struct ExportOptions {
  std::string format;
  std::string output;
  std::vector<std::string> logs;
};

const std::vector<std::string> formats = {"t4"};

// The whole file at `path`, or nullopt when it cannot be read. At most max_log_bytes + 1
// bytes are read, so a file that grows while it is read is refused by the size check after,
// not read until memory runs out.
std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  char buffer[1 << 16];
  while (text.size() <= max_log_bytes && in.read(buffer, sizeof buffer).gcount() > 0)
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
  return text;
}

int run_export(const ExportOptions& opt) {
  if (opt.format != "t4") {
    fmt::print(stderr, "tuner export: error: unknown format '{}' (expected {}){}\n", opt.format,
               quoted_list(formats), did_you_mean(opt.format, formats));
    return exit_bad_input;
  }
  std::vector<ExportLog> logs;
  for (const std::string& path : opt.logs) {
    // A device or a FIFO (/dev/zero) never ends: refused before a byte is read.
    if (auto problem = not_regular_problem(path)) {
      fmt::print(stderr, "{}\n", problem->str());
      return exit_bad_input;
    }
    std::error_code ec;
    if (auto size = std::filesystem::file_size(path, ec); !ec)
      if (auto problem = size_problem(path, size, max_log_bytes, "a trial log")) {
        fmt::print(stderr, "{}\n", problem->str());
        return exit_bad_input;
      }
    const std::optional<std::string> content = read_text(path);
    if (!content) {
      fmt::print(stderr, "tuner export: error: cannot read '{}'\n", path);
      return exit_bad_input;
    }
    if (auto problem = size_problem(path, content->size(), max_log_bytes, "a trial log")) {
      fmt::print(stderr, "{}\n", problem->str());
      return exit_bad_input;
    }
    result<ExportLog> log = parse_export_log(path, *content);
    if (!log) {
      fmt::print(stderr, "{}\n", log.error().str());
      return exit_bad_input;
    }
    for (const std::string& w : log->warnings)
      fmt::print(stderr, "{}\n", w);
    logs.push_back(std::move(*log));
  }
  result<T4Export> t4 = export_t4(logs);
  if (!t4) {
    fmt::print(stderr, "{}\n", t4.error().str());
    return exit_bad_input;
  }
  if (t4->runoff_trials > 0)
    fmt::print(stderr, "tuner export: note: left out {} runoff {} (finalists timed again)\n",
               t4->runoff_trials, t4->runoff_trials == 1 ? "trial" : "trials");
  const std::string text = t4->document.dump(2) + "\n";
  if (opt.output.empty())
    fmt::print("{}", text);
  else
    write_file_atomic(opt.output, text);
  return exit_ok;
}

}  // namespace

void add_export_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<ExportOptions>();
  auto* sub = app.add_subcommand("export", "export trial logs to another tool's results format");
  sub->add_option("--format", opt->format, "the format: t4 (Kernel Tuner's T4 results JSON)")
      ->required();
  sub->add_option("--output,-o", opt->output, "write to this file instead of stdout");
  sub->add_option("logs", opt->logs, "trial logs (.trials.jsonl) of one search")->required();
  sub->callback([&run, opt] { run = [opt] { return run_export(*opt); }; });
}

}  // namespace tune::cli
