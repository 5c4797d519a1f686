#include <tuner/core/process/subprocess.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include <fmt/core.h>

#include <tuner/core/base/result.hpp>
#include <tuner/core/process/child_reaper.hpp>
#include <tuner/core/process/stop_signals.hpp>

extern char** environ;

namespace tune {

namespace {

// The next wait of a loop that looks at a deadline `left_s` seconds away every `slice_ms`: the
// smaller of the two, clamped in double before the cast, so that a timeout of any size (a
// `timeout_s` of 1e12 is 10^15 ms, past an int) never becomes a negative, endless poll.
int wait_slice_ms(double left_s, int slice_ms) {
  return static_cast<int>(std::ceil(std::min(left_s * 1000.0, static_cast<double>(slice_ms))));
}
constexpr std::size_t kept_stderr = 8192;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}
}  // namespace

std::string signal_name(int signal) {
  if (const char* abbrev = ::sigabbrev_np(signal)) return std::string("SIG") + abbrev;
  return fmt::format("signal {}", signal);
}

std::string ExitStatus::describe() const {
  if (signaled) return "killed by signal " + signal_name(signal);
  return fmt::format("exit status {}", code);
}

namespace {

// This process's environment with `extra` (`NAME=value`) replacing or adding variables.
std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  auto name_of = [](std::string_view var) { return var.substr(0, var.find('=')); };
  for (char** e = environ; e && *e; ++e) {
    std::string_view var(*e);
    bool replaced = false;
    for (const std::string& x : extra)
      replaced = replaced || name_of(x) == name_of(var);
    if (!replaced) env.emplace_back(var);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

}  // namespace

Subprocess::Subprocess(std::vector<std::string> argv, std::vector<std::string> extra_env)
    : Subprocess(std::move(argv), SpawnOptions{environment_with(extra_env), false}) {}

Subprocess::Subprocess(std::vector<std::string> argv, const SpawnOptions& options) {
  if (argv.empty()) throw error("subprocess: empty command");
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw error(fmt::format("pipe: {}", std::strerror(errno)));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]), ::close(in[1]);
    throw error(fmt::format("pipe: {}", std::strerror(errno)));
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
    throw error(fmt::format("pipe: {}", std::strerror(errno)));
  }
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<std::string> env_strings = options.env ? *options.env : environment_with({});
  std::vector<char*> envp;
  for (auto& e : env_strings)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  // Tells the parent why exec failed (an errno), or closes on a successful exec.
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]})
      ::close(fd);
    throw error(fmt::format("pipe: {}", std::strerror(errno)));
  }

  const pid_t parent = ::getpid();
  auto spawning = detail::lock_spawns();
  pid_ = ::fork();
  if (pid_ < 0) throw error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid_ == 0) {
    ::setpgid(0, 0);
#ifdef __linux__
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
#endif
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(options.merge_stderr ? out[1] : err[1], 2);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::execvpe(args[0], args.data(), envp.data());
    const int why = errno;
    if (::write(status_pipe[1], &why, sizeof why) < 0) {
    }
    ::_exit(127);
  }
  detail::own(pid_);
  spawning.unlock();
  ::close(status_pipe[1]);
  int why = 0;
  ssize_t got;
  do {
    got = ::read(status_pipe[0], &why, sizeof why);
  } while (got < 0 && errno == EINTR);
  ::close(status_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof why)) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    detail::disown(pid_);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]})
      ::close(fd);
    pid_ = -1;
    throw error(fmt::format("cannot run '{}': {}", argv[0], std::strerror(why)));
  }
  ::setpgid(pid_, pid_);
  detail::become_subreaper();
  int life[2];
  if (::pipe2(life, O_CLOEXEC) == 0) {
    spawning.lock();
    watcher_ = detail::start_watcher(pid_, life);
    if (watcher_ > 0) detail::own(watcher_);
    spawning.unlock();
    ::close(life[0]);
    if (watcher_ > 0) {
      life_ = life[1];
    } else {
      ::close(life[1]);
    }
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  in_ = in[1];
  out_ = out[0];
  err_ = err[0];
  // A dead child must not kill us through SIGPIPE on the next request.
  ::signal(SIGPIPE, SIG_IGN);
}

Subprocess::~Subprocess() {
  if (!status_ && pid_ > 0) kill();
  end_watcher();
  close_fd(in_);
  close_fd(out_);
  close_fd(err_);
}

void Subprocess::end_watcher() noexcept {
  // Closing the life pipe makes the watcher kill what is left of the group, then exit.
  close_fd(life_);
  if (watcher_ > 0) {
    while (::waitpid(watcher_, nullptr, 0) < 0 && errno == EINTR) {
    }
    detail::disown(watcher_);
    watcher_ = -1;
  }
  detail::kill_orphans();
}

bool Subprocess::running() {
  if (status_) return false;
  reap(false);
  return !status_;
}

bool Subprocess::send_line(std::string_view line) {
  if (in_ < 0) return false;
  std::string data(line);
  data += '\n';
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(in_, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;  // EPIPE: the child is gone
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

void Subprocess::drain(int timeout_ms) {
  pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
  int n = ::poll(fds, 2, timeout_ms);
  if (n <= 0) return;
  int* owners[2] = {&out_, &err_};
  std::string* sinks[2] = {&out_buf_, &stderr_};
  for (int i = 0; i < 2; ++i) {
    if (fds[i].fd < 0 || fds[i].revents == 0) continue;
    char buf[8192];
    ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
    if (got > 0) {
      sinks[i]->append(buf, static_cast<std::size_t>(got));
      if (i == 1 && stderr_.size() > 2 * kept_stderr)
        stderr_.erase(0, stderr_.size() - kept_stderr);
    } else if (got == 0 || errno != EINTR) {
      close_fd(*owners[i]);
    }
  }
}

Subprocess::Read Subprocess::read_line(std::string& line, std::optional<double> timeout_s) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    if (auto nl = out_buf_.find('\n'); nl != std::string::npos) {
      line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      return Read::line;
    }
    if (out_ < 0) return Read::eof;
    int wait_ms = 200;
    if (timeout_s) {
      std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      double left = *timeout_s - elapsed.count();
      if (left <= 0) return Read::timeout;
      wait_ms = wait_slice_ms(left, wait_ms);
    }
    drain(wait_ms);
  }
}

ExitStatus Subprocess::reap(bool block) {
  if (status_) return *status_;
  int status = 0;
  for (;;) {
    pid_t r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return {};  // still running
    if (r < 0) {
      detail::disown(pid_);
      status_ = ExitStatus{false, -1, 0};
      return *status_;
    }
    break;
  }
  detail::disown(pid_);
  ExitStatus s;
  if (WIFSIGNALED(status)) {
    s.signaled = true;
    s.signal = WTERMSIG(status);
  } else {
    s.code = WEXITSTATUS(status);
  }
  status_ = s;
  // Collect what is left of stderr (its writers may be gone now).
  for (int i = 0; i < 20 && err_ >= 0; ++i)
    drain(10);
  return s;
}

ExitStatus Subprocess::kill() {
  if (status_) return *status_;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  const ExitStatus s = reap(true);
  end_watcher();  // and whatever escaped the group with setsid
  return s;
}

ExitStatus Subprocess::wait() {
  close_fd(in_);
  return reap(true);
}

std::string Subprocess::last_stderr_line() const {
  std::size_t end = stderr_.size();
  while (end > 0) {
    std::size_t start = stderr_.rfind('\n', end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    std::string line = stderr_.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
      line.pop_back();
    if (!line.empty()) return line.size() > 300 ? line.substr(0, 297) + "..." : line;
    if (start == 0) break;
    end = start - 1;
  }
  return "";
}

ExitStatus run_attached(std::vector<std::string> argv) {
  if (argv.empty()) throw error("run_attached: empty command");
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(a.data());
  args.push_back(nullptr);
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0)
    throw error(fmt::format("pipe: {}", std::strerror(errno)));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
#ifdef __linux__
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
#endif
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGINT, SIGTERM, SIGPIPE})
      ::signal(sig, SIG_DFL);
    ::execvp(args[0], args.data());
    const int why = errno;
    if (::write(status_pipe[1], &why, sizeof why) < 0) {
    }
    ::_exit(127);
  }
  ::close(status_pipe[1]);
  int why = 0;
  ssize_t got;
  do {
    got = ::read(status_pipe[0], &why, sizeof why);
  } while (got < 0 && errno == EINTR);
  ::close(status_pipe[0]);
  int status = 0;
  if (got == static_cast<ssize_t>(sizeof why)) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    throw error(fmt::format("cannot run '{}': {}", argv[0], std::strerror(why)));
  }
  detail::own(pid);
  StopSignals::pass_on_to(pid);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  StopSignals::forget_child();
  detail::disown(pid);
  ExitStatus s;
  if (WIFSIGNALED(status)) {
    s.signaled = true;
    s.signal = WTERMSIG(status);
  } else {
    s.code = WEXITSTATUS(status);
  }
  return s;
}

Captured run_captured(std::vector<std::string> argv, const CaptureOptions& options) {
  Subprocess child(std::move(argv), options);
  close_fd(child.in_);  // its stdin reads end of file
  Captured c;
  const auto start = std::chrono::steady_clock::now();
  auto trim = [&](std::string& text) {
    if (options.keep_bytes > 0 && text.size() > 2 * options.keep_bytes)
      text.erase(0, text.size() - options.keep_bytes);
  };
  for (;;) {
    int wait_ms = 100;
    if (options.timeout_s) {
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      const double left = *options.timeout_s - elapsed.count();
      if (left <= 0) {
        c.timed_out = true;
        break;
      }
      wait_ms = wait_slice_ms(left, wait_ms);
    }
    if (options.stop && options.stop()) {
      c.stopped = true;
      break;
    }
    const std::size_t before = child.out_buf_.size() + child.stderr_.size();
    child.drain(wait_ms);
    trim(child.out_buf_);
    const bool quiet = child.out_buf_.size() + child.stderr_.size() == before;
    const bool closed = child.out_ < 0 && child.err_ < 0;
    // Something it left in the background may keep the pipes open: stop at its exit.
    if ((quiet || closed) && !child.running()) break;
  }
  if (!c.timed_out && !c.stopped) {
    // What it wrote just before it exited may still wait in the pipes.
    for (int i = 0; i < 1024 && (child.out_ >= 0 || child.err_ >= 0); ++i) {
      const std::size_t before = child.out_buf_.size() + child.stderr_.size();
      child.drain(0);
      trim(child.out_buf_);
      if (child.out_buf_.size() + child.stderr_.size() == before) break;
    }
  }
  c.status = (c.timed_out || c.stopped) ? child.kill() : child.wait();
  // What it left running in the background ends with it: its process group, then (the
  // watcher's pipe closed) what left the group with setsid.
  ::kill(-child.pid(), SIGKILL);
  child.end_watcher();
  if (options.stop && !c.stopped && !c.timed_out && options.stop()) c.stopped = true;
  c.out = std::move(child.out_buf_);
  trim(c.out);
  c.err = child.stderr_;
  return c;
}

}  // namespace tune
