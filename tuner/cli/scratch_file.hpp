// A scratch file for output that is known only in part until the input is read to its end (the
// results of `tuner export`, whose metadata comes first; the rows of `tuner show`, whose column
// widths depend on every row): written as the input is read, then read back once. It stays in
// memory up to scratch_memory_bytes (a usual log needs no temporary directory, and `show` works
// with TMPDIR unwritable); past that it moves to a file in the temporary directory ($TMPDIR,
// else /tmp), unlinked as soon as it is open, so nothing is left behind however the tuner ends.
#pragma once

#include <cstddef>
#include <iostream>
#include <streambuf>
#include <string>

namespace tune::cli {

/// What a scratch file holds in memory before it moves to the temporary directory.
inline constexpr std::size_t scratch_memory_bytes = std::size_t{2} << 20;

class ScratchFile {
 public:
  /// An empty scratch file, in memory until it grows.
  ScratchFile();
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  /// The file, for writing and then reading.
  std::iostream& stream() noexcept { return stream_; }
  /// Flushes what was written and moves to the start, for reading it back. Throws tune::error
  /// when a write failed (a full disk) or the file could not be made (an unwritable temporary
  /// directory, once the output outgrew memory).
  std::iostream& rewind();

 private:
  // Memory, then a file: writes append to `memory_` until it passes scratch_memory_bytes,
  // then go to `fd_`; reads come from where the writes went.
  class Buffer : public std::streambuf {
   public:
    ~Buffer() override;
    void rewind();
    const std::string& failure() const noexcept { return failure_; }

   protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int_type underflow() override;
    int sync() override;

   private:
    bool spill();
    bool flush_pending();
    std::string memory_;   // everything, while in memory; pending writes, once in a file
    std::string reading_;  // the read buffer, once in a file
    int fd_ = -1;
    bool reading_back_ = false;
    std::string failure_;
  };
  Buffer buffer_;
  std::iostream stream_;
};

}  // namespace tune::cli
