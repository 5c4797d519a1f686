#include <tuner/core/process/child_reaper.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

namespace tune::detail {

// The children this process started and still owns (commands, watchers, attached children).
// Any other child is an orphan of one of them, adopted through PR_SET_CHILD_SUBREAPER.
namespace {
std::mutex spawn_mutex;
std::mutex owned_mutex;
std::set<pid_t>& owned() {
  static std::set<pid_t> pids;
  return pids;
}
}  // namespace

std::unique_lock<std::mutex> lock_spawns() {
  return std::unique_lock<std::mutex>(spawn_mutex);
}

void own(pid_t pid) {
  const std::lock_guard<std::mutex> guard(owned_mutex);
  owned().insert(pid);
}
void disown(pid_t pid) {
  const std::lock_guard<std::mutex> guard(owned_mutex);
  owned().erase(pid);
}

// Makes this process the reaper of its orphaned descendants, once: a grandchild that left its
// process group with setsid is re-parented here when its parent dies, not to init, so that
// kill_orphans can end it.
void become_subreaper() {
#ifdef __linux__
  static const bool done = [] {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    return true;
  }();
  (void)done;
#endif
}

namespace {

// This process's children outside its own process group, from /proc/<pid>/stat (after the
// name: state, parent, process group). A child in this group was started by whoever uses this
// library, never adopted from a measured command, whose groups are its own.
std::vector<pid_t> children_of_this_process() {
  std::vector<pid_t> out;
  const pid_t me = ::getpid();
  const pid_t my_group = ::getpgrp();
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  while (const dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[512];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) continue;
    buf[n] = '\0';
    const char* close_paren = std::strrchr(buf, ')');  // the name may hold spaces and ')'
    if (close_paren == nullptr) continue;
    char state = 0;
    long ppid = 0, group = 0;
    if (std::sscanf(close_paren + 1, " %c %ld %ld", &state, &ppid, &group) == 3 && ppid == me &&
        group != my_group)
      out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return out;
}

}  // namespace

// Kills and reaps every child of this process (outside its group) that it did not start: what a
// measured command or worker left running outside its process group (setsid), adopted by
// become_subreaper when its parent died. Killing one may orphan its own children, hence rounds.
void kill_orphans() {
  const auto no_spawns = lock_spawns();
  for (int round = 0; round < 100; ++round) {
    std::vector<pid_t> orphans;
    {
      const std::lock_guard<std::mutex> guard(owned_mutex);
      for (pid_t pid : children_of_this_process())
        if (owned().count(pid) == 0) orphans.push_back(pid);
    }
    if (orphans.empty()) return;
    for (pid_t pid : orphans)
      ::kill(pid, SIGKILL);
    for (pid_t pid : orphans)
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
  }
}

// Starts the watcher of `group` (a child's process group, which it joins): it waits until the
// write end of `life` closes, which happens when this process closes it (the child is done
// with) or dies however it dies, SIGKILL included, and then kills the whole group. So a
// measured command's own children (a shell's pipeline, `sleep` in a script) do not outlive a
// killed tuner, which PR_SET_PDEATHSIG alone (the direct child only) cannot promise. Returns
// its pid, or -1 when it cannot be started (the child then runs unwatched).
pid_t start_watcher(pid_t group, int life[2]) {
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  // The watcher: async-signal-safe calls only (this process may have threads).
  ::setpgid(0, group);
  const int keep = life[0];
  for (int fd = 0; fd < keep; ++fd)
    ::close(fd);
  ::close_range(static_cast<unsigned>(keep) + 1, ~0U, 0);  // life[1] and every other fd
  if (::getppid() != parent) ::kill(-group, SIGKILL);
  pollfd p{keep, POLLIN, 0};
  while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
  }
  ::kill(-group, SIGKILL);  // the watcher itself is in the group
  ::_exit(0);
}

}  // namespace tune::detail
