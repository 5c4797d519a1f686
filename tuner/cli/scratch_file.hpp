// A scratch file for output that is known only in part until the input is read to its end (the
// results of `tuner export`, whose metadata comes first; the rows of `tuner show`, whose column
// widths depend on every row): written as the input is read, then read back once. It lives in
// the temporary directory ($TMPDIR, else /tmp) and is unlinked as soon as it is open, so nothing
// is left behind however the tuner ends.
#pragma once

#include <fstream>
#include <string>

namespace tune::cli {

class ScratchFile {
 public:
  /// Creates and opens the file; throws tune::error when the temporary directory is not
  /// writable.
  ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  /// The file, for writing and then reading.
  std::fstream& stream() noexcept { return file_; }
  /// Flushes what was written and moves to the start, for reading it back. Throws tune::error
  /// when a write failed (a full disk).
  std::fstream& rewind();

 private:
  std::fstream file_;
};

}  // namespace tune::cli
