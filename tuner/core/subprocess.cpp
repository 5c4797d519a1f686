#include <tuner/core/subprocess.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include <fmt/core.h>

#include <tuner/core/result.hpp>

extern char** environ;

namespace tune {

namespace {
constexpr std::size_t kept_stderr = 8192;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}
}  // namespace

std::string signal_name(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGHUP:
      return "SIGHUP";
    default:
      return fmt::format("signal {}", signal);
  }
}

std::string ExitStatus::describe() const {
  if (signaled) return "killed by signal " + signal_name(signal);
  return fmt::format("exit status {}", code);
}

Subprocess::Subprocess(std::vector<std::string> argv, std::vector<std::string> extra_env) {
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
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e)
    env_strings.emplace_back(*e);
  for (auto& e : extra_env)
    env_strings.push_back(e);
  std::vector<char*> envp;
  for (auto& e : env_strings)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  const pid_t parent = ::getpid();
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
    ::dup2(err[1], 2);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::execvpe(args[0], args.data(), envp.data());
    std::string msg = fmt::format("cannot run '{}': {}\n", args[0], std::strerror(errno));
    if (::write(2, msg.data(), msg.size()) < 0) {
    }
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);
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
  close_fd(in_);
  close_fd(out_);
  close_fd(err_);
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
      wait_ms = std::min(wait_ms, static_cast<int>(std::ceil(left * 1000)));
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
      status_ = ExitStatus{false, -1, 0};
      return *status_;
    }
    break;
  }
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
  return reap(true);
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

}  // namespace tune
