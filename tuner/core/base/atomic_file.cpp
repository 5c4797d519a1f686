#include <tuner/core/base/atomic_file.hpp>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <streambuf>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include <tuner/core/base/fault_inject.hpp>
#include <tuner/core/base/result.hpp>

namespace tune {
namespace {

std::string errno_text(int err) {
  return std::generic_category().message(err);
}

// Closes the descriptor and removes the temporary file unless released.
class TempFile {
 public:
  TempFile(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!released_) {
      std::error_code ec;
      std::filesystem::remove(path_, ec);
    }
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  int fd() const { return fd_; }
  void close_fd() {
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0)
      throw error("cannot close '" + path_.string() + "': " + errno_text(errno));
  }
  void release() { released_ = true; }

 private:
  std::filesystem::path path_;
  int fd_;
  bool released_ = false;
};

// `.<name>.tmp.`: how the temporary files of `path` begin (then `<pid>.<n>`). Hidden, so that
// globbing readers never pick them up.
std::string temporary_prefix(const std::filesystem::path& path) {
  std::string prefix = ".";
  prefix += path.filename().string();
  prefix += ".tmp.";
  return prefix;
}

void fsync_directory(const std::filesystem::path& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // some file systems cannot open directories; the rename still happened
  ::fsync(fd);
  ::close(fd);
}

// Writes all of `data` to `fd` (of the file `name`), or throws.
void write_all(int fd, const std::filesystem::path& name, const char* p, std::size_t left) {
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw error("cannot write '" + name.string() + "': " + errno_text(errno));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

// A stream buffer that writes to a file descriptor in blocks of 64 KiB.
class FdBuffer : public std::streambuf {
 public:
  FdBuffer(int fd, std::filesystem::path name) : fd_(fd), name_(std::move(name)) {
    setp(buffer_, buffer_ + sizeof buffer_);
  }
  void flush_all() {
    write_all(fd_, name_, pbase(), static_cast<std::size_t>(pptr() - pbase()));
    setp(buffer_, buffer_ + sizeof buffer_);
  }

 protected:
  int_type overflow(int_type c) override {
    flush_all();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override {
    flush_all();
    return 0;
  }

 private:
  int fd_;
  std::filesystem::path name_;
  char buffer_[1 << 16];
};

// What a file type is called in the refusal of a target that is not a regular file.
const char* kind_of_file(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

void check_replaceable(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;  // nothing there (the rename says what else)
  if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) return;
  throw error(
      fmt::format("'{}' is {}; tune writes a file only where a regular file or nothing "
                  "is (a rename would replace it, not write to it): name another path, "
                  "or leave the option out to print the output",
                  path.string(), kind_of_file(st.st_mode)));
}

namespace {

// The write of write_file_atomic: `fill` writes the temporary file's content to its descriptor.
void atomic_write(const std::filesystem::path& path, std::string_view fault_point,
                  const std::function<void(int fd, const std::filesystem::path& tmp)>& fill) {
  static std::atomic<unsigned> counter{0};
  // The fault points' names, only built when one is named.
  auto point = [&](std::string_view when) {
    if (!fault_point.empty()) tune::fault_point(std::string(fault_point) + "-" + std::string(when));
  };
  check_replaceable(path);
  point("before-write");
  std::filesystem::path dir = path.parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw error("cannot create directory '" + dir.string() + "': " + ec.message());
  }
  // The temporary name is unique per process and call.
  std::string name = temporary_prefix(path);
  name += std::to_string(::getpid());
  name += '.';
  name += std::to_string(counter.fetch_add(1));
  std::filesystem::path tmp = dir / name;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw error("cannot create '" + tmp.string() + "': " + errno_text(errno));
  TempFile file(tmp, fd);
  fill(file.fd(), tmp);
  if (::fsync(file.fd()) != 0)
    throw error("cannot sync '" + tmp.string() + "': " + errno_text(errno));
  file.close_fd();
  point("before-rename");
  check_replaceable(path);  // again: something may have been put there meanwhile
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    throw error("cannot rename '" + tmp.string() + "' to '" + path.string() +
                "': " + errno_text(errno));
  file.release();
  point("after-rename");
  fsync_directory(dir);
}

}  // namespace

void write_file_atomic(const std::filesystem::path& path, std::string_view data,
                       std::string_view fault_point) {
  atomic_write(path, fault_point, [&](int fd, const std::filesystem::path& tmp) {
    write_all(fd, tmp, data.data(), data.size());
  });
}

void write_file_atomic(const std::filesystem::path& path,
                       const std::function<void(std::ostream&)>& write,
                       std::string_view fault_point) {
  atomic_write(path, fault_point, [&](int fd, const std::filesystem::path& tmp) {
    FdBuffer buffer(fd, tmp);
    std::ostream out(&buffer);
    out.exceptions(std::ios::badbit);  // a failed write throws its own error, not a bare failbit
    write(out);
    out.flush();
    buffer.flush_all();
  });
}

bool write_file_if_changed(const std::filesystem::path& path, std::string_view data) {
  check_replaceable(path);  // a FIFO there would block the read below
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    std::ifstream in(path, std::ios::binary);
    if (in && std::string(std::istreambuf_iterator<char>(in), {}) == data) return false;
  }
  write_file_atomic(path, data);
  return true;
}

void remove_stale_temporaries(const std::filesystem::path& path) noexcept {
  const std::string prefix = temporary_prefix(path);
  std::error_code ec;
  const std::filesystem::path dir = path.parent_path().empty() ? "." : path.parent_path();
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const std::string rest = name.substr(prefix.size());  // <pid>.<n>
    const auto dot = rest.find('.');
    if (dot == std::string::npos || dot == 0) continue;
    long pid = 0;
    try {
      std::size_t used = 0;
      pid = std::stol(rest.substr(0, dot), &used);
      if (used != dot) continue;
    } catch (const std::exception&) {
      continue;
    }
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or unsure
    std::error_code rm;
    std::filesystem::remove(it->path(), rm);
  }
}

}  // namespace tune
