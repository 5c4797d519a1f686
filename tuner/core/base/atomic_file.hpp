// Atomic file replacement: write a temporary file beside the target, fsync it, rename it over
// the target, fsync the directory. A reader sees the old bytes or the new bytes, never a mix,
// and a crash at any point leaves the old file intact.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string_view>

namespace tune {

/// Throws tune::error when something is at `path` that is neither a regular file nor a symbolic
/// link (replaced itself, never followed): a device, a FIFO, a socket or a directory is refused,
/// not replaced (`'/dev/full' is a character device; ...`). Every atomic write
/// checks this; a command checks it early to refuse before its work.
void check_replaceable(const std::filesystem::path& path);

/// Replaces `path` with `data` atomically (temp file in the same directory, fsync, rename,
/// directory fsync). Creates missing parent directories. Throws tune::error naming the path and
/// the system's reason on any I/O failure; the temporary file is removed on failure.
///
/// `fault_point` names this write for fault injection (tuner/core/base/fault_inject.hpp): the
/// points
/// `<fault_point>-before-write` (nothing written yet), `<fault_point>-before-rename` (the
/// temporary file written and synced) and `<fault_point>-after-rename` (the new file in place).
/// Example: `write_file_atomic(p, text, "record-save")` honours
/// TUNE_FAULT_INJECT=record-save-before-rename.
void write_file_atomic(const std::filesystem::path& path, std::string_view data,
                       std::string_view fault_point = {});

/// As write_file_atomic, with the data `write` writes to the stream it is given: a large file
/// (an export, a report page) is never held whole. An exception from `write` removes the
/// temporary file and leaves `path` as it was.
void write_file_atomic(const std::filesystem::path& path,
                       const std::function<void(std::ostream&)>& write,
                       std::string_view fault_point = {});

/// As write_file_atomic, unless `path` already holds exactly `data` (only a regular file is
/// read to compare): then nothing is written and
/// its modification time stays, so what depends on the file does not rebuild. Returns whether it
/// wrote. Throws as write_file_atomic does.
bool write_file_if_changed(const std::filesystem::path& path, std::string_view data);

/// Removes the temporary files that write_file_atomic left beside `path` when a process died
/// between writing one and renaming it (`.<name>.tmp.<pid>.<n>` whose pid is no longer running
/// on this host). Scans the directory, so it is for small directories (records); never throws.
void remove_stale_temporaries(const std::filesystem::path& path) noexcept;

}  // namespace tune
