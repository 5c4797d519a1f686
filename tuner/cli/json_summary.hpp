// `--json` for the commands that tune (`tuner run`, `tuner tune`): stdout carries one JSON
// document, so everything they would print there for people goes to stderr while they work, and
// the summary is built afterwards from the records themselves (what a CI step wants to know:
// is each record fresh now, and what won).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <tuner/core/build/kernel_build.hpp>

namespace tune::cli {

/// While alive (and `active`), file descriptor 1 is the process's stderr: lines meant for people,
/// including those of child processes (cmake, the worker), stay off the JSON on stdout.
class StdoutToStderr {
 public:
  explicit StdoutToStderr(bool active);
  ~StdoutToStderr();
  StdoutToStderr(const StdoutToStderr&) = delete;
  StdoutToStderr& operator=(const StdoutToStderr&) = delete;

 private:
  int saved_ = -1;
};

/// Each of `archs`' record as it is now: {"arch", "record", "state" (fresh, stale, missing,
/// unreadable), "errors", "entries": [{"bucket", "config", "median_ms", "samples", "source"}]}.
/// Throws what verify_kernel_record throws (nvcc cannot be run).
nlohmann::json records_summary(const KernelBuild& build, const std::vector<std::string>& archs);

}  // namespace tune::cli
