#include <tuner/core/search/file_lock.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>

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

// Whether `pid` is a process on this host that has ended.
bool gone(long pid) {
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// `pid 123 ('sleep')` for each process that holds the file open as `fd` is, found through
// /proc/<pid>/fd: who keeps a lock whose noted holder is gone.
std::vector<std::string> processes_holding(int fd) {
  std::vector<std::string> out;
  struct stat lock {};
  if (::fstat(fd, &lock) != 0) return out;
  std::error_code ec;
  for (std::filesystem::directory_iterator p("/proc", ec), end; !ec && p != end; p.increment(ec)) {
    const std::string pid = p->path().filename().string();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stol(pid) == static_cast<long>(::getpid())) continue;
    std::error_code fd_ec;
    for (std::filesystem::directory_iterator f(p->path() / "fd", fd_ec), fend; !fd_ec && f != fend;
         f.increment(fd_ec)) {
      struct stat st {};
      if (::stat(f->path().c_str(), &st) != 0 || st.st_ino != lock.st_ino ||
          st.st_dev != lock.st_dev)
        continue;
      std::ifstream comm(p->path() / "comm");
      std::string name;
      std::getline(comm, name);
      out.push_back(fmt::format("pid {} ('{}')", pid, name));
      break;
    }
    if (out.size() >= 5) break;
  }
  return out;
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
    // Never through a symbolic link: a link committed as `<record>.lock` would have its
    // target truncated by the note below.
    result<int> opened = open_for_writing(path, O_RDWR | O_CREAT, "lock file");
    if (!opened) return fail(opened.error());
    const int fd = *opened;
    // Inherited by the children this process starts (a measured command, a worker): a child
    // that outlives a killed holder keeps the lock, so a resumed run cannot measure beside it.
    ::fcntl(fd, F_SETFD, 0);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      if (err != EWOULDBLOCK) {
        ::close(fd);
        throw error(fmt::format("cannot lock '{}': {}", path.string(), errno_text(err)));
      }
      std::optional<LockHolder> holder = read_note(fd);
      const bool holder_gone = holder && holder->host == self().host && gone(holder->pid);
      // The lock is inherited by the children a holder starts, so a holder killed with SIGKILL
      // keeps it through what it left running until its watcher has killed that (a moment).
      if (holder_gone && attempt < 40) {
        ::close(fd);
        ::usleep(50'000);
        continue;
      }
      std::string by = holder ? fmt::format("pid {} on host '{}'", holder->pid, holder->host)
                              : std::string("another process");
      if (holder_gone) {
        const std::vector<std::string> left = processes_holding(fd);
        by += fmt::format(
            ", which has ended; what it started still holds the lock{}: end {}, then run again",
            left.empty() ? "" : " (" + join(left) + ")", left.size() == 1 ? "it" : "them");
      }
      ::close(fd);
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
    std::string note = dump_json(nlohmann::json{{"pid", me.pid}, {"host", me.host}}) + "\n";
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
