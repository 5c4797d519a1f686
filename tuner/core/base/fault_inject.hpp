// Fault injection, for the tests that show a crash loses nothing: every write of a trial log, a
// record and a runner's result passes a named point, and when the environment variable
// TUNE_FAULT_INJECT names that point the process kills itself there with SIGKILL, as a power
// cut or the OOM killer would (no destructors, no flushing, no cleanup of temporary files).
//
//   TUNE_FAULT_INJECT=<point>        the first time this process reaches <point>
//   TUNE_FAULT_INJECT=<point>:<n>    the n-th time (n >= 1)
//
// The points, in the order a write reaches them (docs/interfaces.md "Fault injection"):
//   log-header-before-write, log-header-after-write     a new log's header line
//   log-append-before-write, log-append-torn,           one trial line; `torn` writes the first
//   log-append-after-write                               half of the line, syncs it, then dies
//   log-repair-before-write, log-repair-after-write     cutting a torn last line off at open
//   <file>-before-write, <file>-before-rename,          a file replaced atomically, for <file>
//   <file>-after-rename                                  record-save (a record) and result-save
//                                                        (a runner's bucket result)
// A name that is none of these is reported on stderr (once per value), so that a typo in a test
// cannot pass unnoticed. The variable is read at each point (a getenv; every point sits beside
// an fsync or a rename), so a test may set it in a forked child.
#pragma once

#include <span>
#include <string_view>

namespace tune {

/// Kills this process with SIGKILL when TUNE_FAULT_INJECT selects `point` (and this is the
/// selected occurrence); otherwise returns.
void fault_point(std::string_view point);

/// Whether TUNE_FAULT_INJECT names `point` (any occurrence): for a write that must prepare its
/// fault (the torn line) before passing the point.
bool fault_point_selected(std::string_view point);

/// Every point the code passes, in the order above.
std::span<const std::string_view> fault_points();

}  // namespace tune
