#include <tuner/core/search/prior.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <istream>
#include <streambuf>
#include <unordered_map>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/log_lines.hpp>
#include <tuner/core/search/trial_lines.hpp>

namespace tune {

namespace {

std::string kernel_of(const std::string& tuner) {
  return tuner.substr(0, tuner.find('/'));
}

// A file descriptor, closed when it goes.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// The bytes of an open file as a stream, at most `cap` of them: the reading stops there, so a
// file that grows while it is read costs no more than `cap`.
class CappedFileBuf : public std::streambuf {
 public:
  CappedFileBuf(int fd, std::uint64_t cap) : fd_(fd), cap_(cap) {}
  std::uint64_t bytes() const noexcept { return bytes_; }
  int read_errno() const noexcept { return errno_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (bytes_ >= cap_ || errno_ != 0) return traits_type::eof();
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buf_, cap_ - bytes_));
    ssize_t n;
    do {
      n = ::read(fd_, buf_, want);
    } while (n < 0 && errno == EINTR);
    if (n < 0) errno_ = errno;
    if (n <= 0) return traits_type::eof();
    bytes_ += static_cast<std::uint64_t>(n);
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  int fd_;
  std::uint64_t cap_;
  std::uint64_t bytes_ = 0;
  int errno_ = 0;
  char buf_[1 << 16];
};

// Why the file at `path` is not opened as a prior, for an open(2) that failed with `err`.
diagnostic open_problem(const std::filesystem::path& path, int err) {
  const std::string where = path.string();
  struct stat st {};
  if (err == ENOENT && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const std::filesystem::path target = std::filesystem::read_symlink(path, ec);
    return {where, 0, 0,
            fmt::format("is a symbolic link to '{}', which does not exist: remove the link",
                        target.string())};
  }
  if (err == ELOOP)
    return {where, 0, 0, "is a symbolic link that leads back to itself: remove the link"};
  if (err == ENXIO)
    return {where, 0, 0,
            "is not a regular file (a socket or a device), not a trial log: remove it"};
  return {where, 0, 0, fmt::format("cannot open the file: {}", std::strerror(err))};
}

// A config's best in the prior so far, of the trials measured here and of the adopted ones
// (kept apart: a check measured here discards the adopted ones, wherever it comes in the log).
struct Best {
  std::optional<double> value;
  int order = 0;  // the line of the first trial that counted
};
struct Seen {
  std::optional<Config> config;
  Best own;
  Best adopted;
  bool checked = false;
};

}  // namespace

bool prior_absent(const std::filesystem::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
}

result<Prior> read_prior(const std::filesystem::path& path, const std::string& tuner,
                         bool any_bucket, bool maximize,
                         const std::optional<std::filesystem::path>& current_log) {
  const std::string where = path.string();
  // O_NONBLOCK: a FIFO must not wait for a writer here; it is refused below, as every file that
  // is not regular.
  Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
  if (file.fd < 0) return fail(open_problem(path, errno));
  struct stat st {};
  if (::fstat(file.fd, &st) != 0)
    return fail(where, 0, 0, fmt::format("cannot read the file: {}", std::strerror(errno)));
  if (S_ISDIR(st.st_mode))
    return fail(where, 0, 0, "is a directory, not a trial log: remove it or move it away");
  if (!S_ISREG(st.st_mode))
    return fail(where, 0, 0,
                "is not a regular file (a FIFO, a device or a socket), not a trial log: remove it");
  if (auto d =
          size_problem(where, static_cast<std::uint64_t>(st.st_size), max_prior_bytes, "a prior"))
    return fail(*d);
  if (current_log) {
    struct stat log {};
    if (::stat(current_log->c_str(), &log) == 0 && log.st_dev == st.st_dev &&
        log.st_ino == st.st_ino)
      return fail(where, 0, 0,
                  fmt::format("is the same file as '{}', the log this run writes: a log is not "
                              "its own prior (when [search] prior names this bucket or this "
                              "arch, name another)",
                              current_log->string()));
  }
  const int flags = ::fcntl(file.fd, F_GETFL);
  if (flags >= 0) ::fcntl(file.fd, F_SETFL, flags & ~O_NONBLOCK);

  CappedFileBuf buf(file.fd, std::uint64_t{max_prior_bytes} + 1);
  std::istream in(&buf);
  LogLines lines(where, in);
  Prior p;
  p.from = path;
  std::size_t unlisted = 0;
  auto skipped = [&](std::string&& warning) {
    if (p.warnings.size() < max_prior_warnings)
      p.warnings.push_back(std::move(warning));
    else
      ++unlisted;
  };
  // Each config's best only: the prior's memory grows with its configs, not with its lines.
  std::unordered_map<std::string, Seen> seen;
  auto better = [maximize](double a, double b) { return maximize ? a > b : a < b; };
  auto header = [&](const LogHeader& h) -> std::optional<diagnostic> {
    if (kernel_of(h.tuner) != kernel_of(tuner))
      return diagnostic{where, 1, 0,
                        fmt::format("a log of kernel '{}', not '{}': not a prior of this search",
                                    kernel_of(h.tuner), kernel_of(tuner))};
    if (!any_bucket && h.tuner != tuner)
      return diagnostic{
          where, 1, 0,
          fmt::format("a log of '{}', not '{}': not a prior of this search", h.tuner, tuner)};
    const std::string objective = maximize ? "maximize" : "minimize";
    if (h.objective != objective)
      return diagnostic{where, 1, 0,
                        fmt::format("a log that {}s, this search {}s: not a prior of it",
                                    h.objective, objective)};
    p.tuner = h.tuner;
    return std::nullopt;
  };
  auto trial = [&](Trial&& t, int number) {
    const MeasuredState* m = t.state.measured();
    const bool counts = m != nullptr && t.phase != Phase::runoff;
    if (!counts && !t.checks) return;
    Seen& s = seen[t.id()];
    // An adopted trial that a measurement here checked is replaced by it (docs/search.md
    // "Adopted trials are checked here"): a discarded one must not lead the prior.
    if (t.checks) s.checked = true;
    if (!counts) return;
    Best& b = t.adopted() ? s.adopted : s.own;
    if (!b.value) {
      b = {m->median_ms, number};
    } else if (better(m->median_ms, *b.value)) {
      b.value = m->median_ms;
    }
    if (!s.config) s.config = std::move(t.config);
  };
  // The one reader of log lines (trial_lines.hpp), as a resume, show and export read them.
  if (std::optional<diagnostic> bad = read_log_lines(lines, {header, trial, skipped}))
    return fail(*bad);
  if (buf.read_errno() != 0)
    return fail(where, 0, 0,
                fmt::format("cannot read the file: {}", std::strerror(buf.read_errno())));
  if (buf.bytes() > max_prior_bytes)
    return fail(where, 0, 0,
                fmt::format("the file grew past the {} a prior may hold while it was read",
                            describe_size(max_prior_bytes)));
  if (unlisted > 0)
    p.warnings.push_back(
        fmt::format("{}: warning: skipped {} more lines that do not read (only "
                    "the first {} are named)",
                    where, unlisted, max_prior_warnings));
  struct Ranked {
    double value;
    int order;
    Config config;
  };
  std::vector<Ranked> ranked;
  ranked.reserve(seen.size());
  for (auto& [id, s] : seen) {
    Best b = s.own;
    if (!s.checked && s.adopted.value) {
      if (!b.value) {
        b = s.adopted;
      } else {
        if (better(*s.adopted.value, *b.value)) b.value = s.adopted.value;
        b.order = std::min(b.order, s.adopted.order);
      }
    }
    if (b.value) ranked.push_back({*b.value, b.order, std::move(*s.config)});
  }
  seen.clear();
  if (ranked.empty())
    return fail(where, 0, 0, "the log holds no measured trial: not a prior of this search");
  // Best first; ties: the first logged.
  std::sort(ranked.begin(), ranked.end(), [&](const Ranked& a, const Ranked& b) {
    if (a.value != b.value) return better(a.value, b.value);
    return a.order < b.order;
  });
  p.ranked.reserve(ranked.size());
  for (Ranked& r : ranked)
    p.ranked.emplace_back(std::move(r.config), r.value);
  return p;
}

PriorValues prior_values(const Prior& prior, const std::vector<Config>& configs, bool maximize) {
  std::unordered_map<std::string, double> by_id;
  for (const auto& [config, value] : prior.ranked)
    by_id.emplace(config.id(), value);
  PriorValues out(configs.size());
  for (std::size_t k = 0; k < configs.size(); ++k)
    if (auto it = by_id.find(configs[k].id()); it != by_id.end() && it->second > 0)
      out[k] = maximize ? -std::log(it->second) : std::log(it->second);
  return out;
}

}  // namespace tune
