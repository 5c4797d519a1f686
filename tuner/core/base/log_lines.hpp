// A trial log read a line at a time within the limits of input_limits.hpp, for the readers that
// show, report or export a log: they keep what their output needs, never the file. The file
// must be regular (`/dev/zero` would never end) and at most max_log_bytes, checked before a byte
// is read and again while reading (a log that grows past the limit as it is read stops there);
// of a line longer than max_log_line_bytes only max_log_line_bytes + 1 bytes are held.
//
// Example:
//   if (auto d = log_file_problem(path)) return fail(*d);
//   std::ifstream in(path, std::ios::binary);
//   LogLines lines(path, in);
//   std::string line;
//   while (lines.next(line)) use(lines.number(), line);
//   if (auto d = lines.overflow()) return fail(*d);
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>

#include <tuner/core/base/result.hpp>

namespace tune {

/// Why the file at `path` cannot be read as a trial log before a byte is read, or nullopt: it
/// is not a regular file (a device, a FIFO, a socket), or it is larger than max_log_bytes.
/// Missing files and directories are left to the caller, whose messages name them.
std::optional<diagnostic> log_file_problem(const std::string& path);

/// The lines of one trial log.
class LogLines {
 public:
  /// The lines of `in`, the text of the log at `path` (a file's, or a string's).
  LogLines(std::string path, std::istream& in);

  /// The next line, without its newline, into `line`; false at the end of the file, or once
  /// more than max_log_bytes were read (overflow() then says so).
  bool next(std::string& line);
  /// The 1-based number of the line `next` gave last.
  int number() const noexcept { return number_; }
  /// Whether the line `next` gave last was cut at max_log_line_bytes + 1 bytes.
  bool too_long(const std::string& line) const noexcept;
  /// Whether the line `next` gave last ended at the end of the file, without a newline (the
  /// torn last line of an interrupted write, in a log tune appends to).
  bool unterminated() const noexcept { return unterminated_; }
  /// A diagnostic when the reading stopped at max_log_bytes, else nullopt.
  std::optional<diagnostic> overflow() const;
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  std::istream* in_ = nullptr;
  std::uint64_t bytes_ = 0;
  int number_ = 0;
  bool unterminated_ = false;
};

}  // namespace tune
