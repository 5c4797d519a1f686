// A re-tune's prior (docs/search.md "Re-tunes start from what was measured"): the trials of an
// earlier log of the same kernel, read-only, ranked. When a bucket's log was measured for
// another source, toolchain or space, the search sets it aside as the bucket's prior
// (`<bucket>.prior.jsonl`) and starts a new log; the prior is never adopted as a result and
// never counts in a record's statistics: it only says which configs to measure first and where
// a strategy should look.
//
// A prior is read a line at a time and only each config's best is kept, so its memory grows
// with the configs it measured, not with the file. The file is checked before a byte is read:
// what is not a regular file (a directory, a FIFO, a device, a dangling link), is larger than
// max_prior_bytes or is the log the run writes is refused, naming the file; opening never blocks.
//
// Example:
//   if (!prior_absent(path)) {
//     result<Prior> p = read_prior(path, "saxpy/n<=4096", true, false, log_path);
//     if (p) for (const auto& [config, ms] : p->ranked) ...   // best first
//   }
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/search/strategy.hpp>

namespace tune {

/// What an earlier log measured.
struct Prior {
  std::filesystem::path from;  ///< the log it was read from
  std::string tuner;           ///< that log's `<kernel>/<bucket>`
  /// Its measured configs (phase required or search; runoffs left out), best first (the lowest
  /// median, the highest score when maximizing; ties: the first logged), each with its best
  /// median (or score).
  std::vector<std::pair<Config, double>> ranked;
  /// Warnings of the log (lines skipped), `<path>:<line>: warning: ...`: the first
  /// max_prior_warnings, then one line that counts the rest.
  std::vector<std::string> warnings;
};

/// How many skipped lines of a prior are named one by one.
inline constexpr std::size_t max_prior_warnings = 10;

/// Whether nothing at all is at `path`: no file, no directory, not even a dangling symbolic
/// link. Such a candidate prior is passed over in silence; anything else at its path is read
/// with read_prior, which says why it cannot be used.
bool prior_absent(const std::filesystem::path& path);

/// Reads the log at `path` as a prior for the search `tuner` (`<kernel>/<bucket>`), a line at a
/// time. Refused with a diagnostic naming the file: a directory, a FIFO, a device, a socket or
/// a dangling link (opened without blocking); a file over max_prior_bytes (its size and the
/// limit named), also when it grows past it while read; the same file as `current_log` (the
/// log the run writes, compared by device and inode, so a hard or symbolic link is caught); an
/// unreadable or corrupt log, a log of another kernel, of another bucket unless `any_bucket`,
/// of the other objective, or with no measured trial.
result<Prior> read_prior(const std::filesystem::path& path, const std::string& tuner,
                         bool any_bucket, bool maximize,
                         const std::optional<std::filesystem::path>& current_log = std::nullopt);

/// The prior's value of each of `configs` (matched by id) in the units of `Strategy::tell`:
/// log(median), or -log(score) when maximizing; nullopt for a config the prior lacks.
PriorValues prior_values(const Prior& prior, const std::vector<Config>& configs, bool maximize);

}  // namespace tune
