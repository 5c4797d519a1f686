// One writer per file: an exclusive advisory lock (flock) on a sidecar `<file>.lock`, which also
// notes its holder (pid and host) so that a refused writer can name it. The kernel releases the
// lock when the holder dies, however it dies; a note left behind by a dead holder is simply
// overwritten by the next one. Used by the trial log and, later, by record writers.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <tuner/core/base/result.hpp>

namespace tune {

/// Who holds a lock, as its note says.
struct LockHolder {
  long pid = 0;
  std::string host;
};

/// An exclusive advisory lock on `<target>.lock`, held for the object's lifetime (RAII,
/// move-only). Inherited by the child processes this process starts: one left running by a
/// killed holder (a measured command, a worker on the device) keeps the lock until it ends, and
/// the refusal then names it.
class FileLock {
 public:
  /// Takes the lock for `target` without waiting. When another open holds it, returns a
  /// diagnostic for `target`: `<noun> is locked by pid <pid> on host '<host>'` (or `by another
  /// process` when the note is unreadable). A lock file that is a symbolic link or not a
  /// regular file is refused with a diagnostic for the lock file itself (safe_file.hpp). Throws
  /// tune::error when the lock file cannot be created or locked for another reason (permissions, no
  /// such directory).
  static result<FileLock> try_lock(const std::filesystem::path& target, std::string_view noun);

  /// The lock file used for `target`: `<target>.lock`.
  static std::filesystem::path lock_path(const std::filesystem::path& target);

  /// This process's note: its pid and the host name.
  static LockHolder self();

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  /// Removes the lock file and releases the lock.
  ~FileLock();

  /// Releases early (the destructor then does nothing).
  void unlock() noexcept;
  bool locked() const noexcept { return fd_ >= 0; }

 private:
  FileLock(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::filesystem::path path_;
};

}  // namespace tune
