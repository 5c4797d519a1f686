#include <tuner/cli/scratch_file.hpp>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <unistd.h>

#include <tuner/core/base/result.hpp>

namespace tune::cli {

namespace {

constexpr std::size_t file_chunk = 64 * 1024;

}  // namespace

ScratchFile::ScratchFile() : stream_(&buffer_) {}

ScratchFile::~ScratchFile() = default;

std::iostream& ScratchFile::rewind() {
  stream_.flush();
  buffer_.rewind();
  if (!buffer_.failure().empty()) throw error(buffer_.failure());
  if (stream_.bad())
    throw error("cannot write a scratch file in the temporary directory (is it full?)");
  stream_.clear();  // the end of a reading before
  return stream_;
}

ScratchFile::Buffer::~Buffer() {
  if (fd_ >= 0) ::close(fd_);
}

bool ScratchFile::Buffer::spill() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string name = (dir / "tune-scratch-XXXXXX").string();
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0) {
    failure_ = "cannot create a scratch file in '" + dir.string() +
               "': " + std::generic_category().message(errno);
    return false;
  }
  ::unlink(name.c_str());  // the open descriptor keeps it until it closes
  return flush_pending();
}

bool ScratchFile::Buffer::flush_pending() {
  std::size_t done = 0;
  while (done < memory_.size()) {
    const ssize_t n = ::write(fd_, memory_.data() + done, memory_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failure_ = "cannot write a scratch file in the temporary directory (is it full?)";
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  memory_.clear();
  return true;
}

std::streamsize ScratchFile::Buffer::xsputn(const char* s, std::streamsize n) {
  if (!failure_.empty() || reading_back_) return 0;
  memory_.append(s, static_cast<std::size_t>(n));
  if (fd_ < 0 && memory_.size() > scratch_memory_bytes && !spill()) return 0;
  if (fd_ >= 0 && memory_.size() > file_chunk && !flush_pending()) return 0;
  return n;
}

ScratchFile::Buffer::int_type ScratchFile::Buffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
}

int ScratchFile::Buffer::sync() {
  if (fd_ >= 0 && !reading_back_ && !flush_pending()) return -1;
  return failure_.empty() ? 0 : -1;
}

void ScratchFile::Buffer::rewind() {
  if (!failure_.empty()) return;
  if (fd_ < 0) {
    reading_back_ = true;
    setg(memory_.data(), memory_.data(), memory_.data() + memory_.size());
    return;
  }
  if (!reading_back_ && !flush_pending()) return;
  reading_back_ = true;
  if (::lseek(fd_, 0, SEEK_SET) < 0) failure_ = "cannot read back a scratch file";
  setg(nullptr, nullptr, nullptr);
}

ScratchFile::Buffer::int_type ScratchFile::Buffer::underflow() {
  if (gptr() != nullptr && gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (fd_ < 0 || !reading_back_) return traits_type::eof();
  reading_.resize(file_chunk);
  ssize_t n = 0;
  do {
    n = ::read(fd_, reading_.data(), reading_.size());
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return traits_type::eof();
  setg(reading_.data(), reading_.data(), reading_.data() + n);
  return traits_type::to_int_type(*gptr());
}

}  // namespace tune::cli
