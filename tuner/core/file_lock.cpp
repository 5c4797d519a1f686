#include <tuner/core/file_lock.hpp>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace tune {

namespace {

std::string errno_text(int err) {
  return std::strerror(err);
}

// The holder's note, or nullopt when it is missing or unreadable (the holder may not have
// written it yet).
std::optional<LockHolder> read_note(int fd) {
  std::string text;
  char buf[512];
  off_t off = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, off);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    off += n;
    if (text.size() > 4096) return std::nullopt;
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  auto pid = j.find("pid");
  auto host = j.find("host");
  if (pid == j.end() || !pid->is_number_integer() || host == j.end() || !host->is_string())
    return std::nullopt;
  return LockHolder{pid->get<long>(), host->get<std::string>()};
}

}  // namespace

std::filesystem::path FileLock::lock_path(const std::filesystem::path& target) {
  std::filesystem::path p = target;
  p += ".lock";
  return p;
}

LockHolder FileLock::self() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return LockHolder{static_cast<long>(::getpid()), host};
}

result<FileLock> FileLock::try_lock(const std::filesystem::path& target, std::string_view noun) {
  const std::filesystem::path path = lock_path(target);
  // The holder unlinks the lock file before releasing it, so an open may find a file that is
  // no longer the one at `path`: lock, then check that `path` still names what we locked.
  for (int attempt = 0; attempt < 1000; ++attempt) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      throw error(fmt::format("cannot open lock file '{}': {}", path.string(), errno_text(errno)));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      if (err != EWOULDBLOCK) {
        ::close(fd);
        throw error(fmt::format("cannot lock '{}': {}", path.string(), errno_text(err)));
      }
      std::optional<LockHolder> holder = read_note(fd);
      ::close(fd);
      std::string by = holder ? fmt::format("pid {} on host '{}'", holder->pid, holder->host)
                              : std::string("another process");
      return fail(target.string(), 0, 0, fmt::format("{} is locked by {}", noun, by));
    }
    struct stat mine {
    }, named{};
    if (::fstat(fd, &mine) != 0 || ::stat(path.c_str(), &named) != 0 ||
        mine.st_ino != named.st_ino || mine.st_dev != named.st_dev) {
      ::close(fd);
      continue;
    }
    LockHolder me = self();
    std::string note = nlohmann::json{{"pid", me.pid}, {"host", me.host}}.dump() + "\n";
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, note.data(), note.size(), 0) != static_cast<ssize_t>(note.size())) {
      int err = errno;
      ::unlink(path.c_str());
      ::close(fd);
      throw error(fmt::format("cannot write lock file '{}': {}", path.string(), errno_text(err)));
    }
    return FileLock(fd, path);
  }
  throw error(fmt::format("cannot lock '{}': the lock file keeps being replaced", path.string()));
}

FileLock::FileLock(FileLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    unlock();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

FileLock::~FileLock() {
  unlock();
}

void FileLock::unlock() noexcept {
  if (fd_ < 0) return;
  // Unlink while still holding the lock: a waiter that opened the old file re-checks the path
  // after locking and retries (see try_lock).
  ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace tune
