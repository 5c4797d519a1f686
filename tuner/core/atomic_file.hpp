// Atomic file replacement: write a temporary file beside the target, fsync it, rename it over
// the target, fsync the directory. A reader sees the old bytes or the new bytes, never a mix,
// and a crash at any point leaves the old file intact.
#pragma once

#include <filesystem>
#include <string_view>

namespace tune {

/// Replaces `path` with `data` atomically (temp file in the same directory, fsync, rename,
/// directory fsync). Creates missing parent directories. Throws tune::error naming the path and
/// the system's reason on any I/O failure; the temporary file is removed on failure.
///
/// `fault_point` names this write for fault injection in tests: when the environment variable
/// TUNE_FAULT_INJECT equals `<fault_point>-before-rename`, the process exits immediately
/// (std::_Exit(70)) after the temporary file is written and synced and before the rename, as a
/// crash would. Example: `write_file_atomic(p, text, "record-save")` honours
/// TUNE_FAULT_INJECT=record-save-before-rename.
void write_file_atomic(const std::filesystem::path& path, std::string_view data,
                       std::string_view fault_point = {});

}  // namespace tune
