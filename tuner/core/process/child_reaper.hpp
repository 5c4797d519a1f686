// Internal to tune_core (not installed): what keeps the children of subprocess.hpp from
// outliving the tuner. The pids Subprocess and run_attached started are owned; the tuner is a
// subreaper, so an orphan of a child (a grandchild that left the child's process group with
// setsid) is re-parented here and kill_orphans ends it; a watcher process in each child's group
// kills the group when the tuner dies, however it dies.
#pragma once

#include <sys/types.h>

#include <mutex>

namespace tune::detail {

/// Held from just before a fork until its child is owned: kill_orphans, which may run on another
/// thread (a compile-ahead compile ending while the search starts a worker), takes it too, so it
/// never sees a child that has left this process's group but is not owned yet, kills it and
/// reaps its status from under its Subprocess.
[[nodiscard]] std::unique_lock<std::mutex> lock_spawns();
/// Notes `pid` as a child this process started (never killed as an orphan).
void own(pid_t pid);
/// Forgets `pid` (reaped).
void disown(pid_t pid);
/// Makes this process the reaper of its orphaned descendants (PR_SET_CHILD_SUBREAPER), once.
void become_subreaper();
/// Kills and reaps every child outside this process's group that it did not start, in rounds
/// (killing one may orphan its own children).
void kill_orphans();
/// Forks the watcher of process group `group`, which joins it, keeps only `life[0]` open and
/// kills the group when the write end `life[1]` closes (this process closed it or died).
/// Returns its pid, or -1 when it cannot be started.
pid_t start_watcher(pid_t group, int life[2]);

}  // namespace tune::detail
