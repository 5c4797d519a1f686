// `tuner export --format t4 [--output F] <log.jsonl>...`: trial logs as Kernel Tuner's T4
// results JSON (docs/formats.md "T4 export"), so that its tools read tune's results.
//
// Several logs of one search (same tuner, space, arch and objective: say, the same bucket tuned
// from two build trees) merge into one document, in the order given. Logs are streamed: memory
// stays flat however many trials they hold. The document goes to
// stdout, or atomically to --output. Lines of a log that do not read are skipped, each with a
// warning on stderr; a note on stderr counts the runoff trials left out.
// Exit codes: 0 exported, 2 bad input (an unknown format, a missing or unreadable file, one that
// is not a trial log, logs of different searches), 3 the output cannot be written.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include <tuner/cli/commands.hpp>
#include <tuner/cli/scratch_file.hpp>
#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/log_lines.hpp>
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

// Each log is read a line at a time and each result written to a scratch file as it comes (the
// document's metadata, which comes first, is known only after the last log): memory does not
// grow with the logs.
int run_export(const ExportOptions& opt) {
  if (opt.format != "t4") {
    fmt::print(stderr, "tuner export: error: unknown format '{}' (expected {}){}\n", opt.format,
               quoted_list(formats), did_you_mean(opt.format, formats));
    return exit_bad_input;
  }
  ScratchFile scratch;
  T4Writer writer(scratch.stream());
  for (const std::string& path : opt.logs) {
    // A device or a FIFO (/dev/zero) never ends: refused before a byte is read, as a log over
    // the size limit is.
    if (auto problem = log_file_problem(path)) {
      fmt::print(stderr, "{}\n", problem->str());
      return exit_bad_input;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      fmt::print(stderr, "tuner export: error: cannot read '{}'\n", path);
      return exit_bad_input;
    }
    LogLines lines(path, in);
    std::optional<diagnostic> problem = read_export_log(
        lines, [&](const LogHeader& header) { return writer.begin(path, header); },
        [&](Trial&& trial) { writer.add(trial); },
        [](std::string&& warning) { fmt::print(stderr, "{}\n", warning); });
    if (problem) {
      fmt::print(stderr, "{}\n", problem->str());
      return exit_bad_input;
    }
  }
  if (writer.runoff_trials() > 0)
    fmt::print(stderr, "tuner export: note: left out {} runoff {} (finalists timed again)\n",
               writer.runoff_trials(), writer.runoff_trials() == 1 ? "trial" : "trials");
  std::iostream& results = scratch.rewind();
  if (opt.output.empty()) {
    std::fflush(stdout);
    writer.finish(results, std::cout);
    std::cout.flush();
  } else {
    write_file_atomic(opt.output, [&](std::ostream& out) { writer.finish(results, out); });
  }
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
  sub->footer(
      "Exit status: 0 exported, 2 bad usage or input (an unknown format, a missing or unreadable "
      "file, one that is not a trial log, logs of different searches), 3 the output cannot be "
      "written.");
  sub->callback([&run, opt] { run = [opt] { return run_export(*opt); }; });
}

}  // namespace tune::cli
