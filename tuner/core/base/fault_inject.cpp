#include <tuner/core/base/fault_inject.hpp>

#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include <signal.h>
#include <unistd.h>

namespace tune {
namespace {

constexpr std::array<std::string_view, 13> all_points = {
    "log-header-before-write",  "log-header-after-write",   "log-append-before-write",
    "log-append-torn",          "log-append-after-write",   "log-repair-before-write",
    "log-repair-after-write",   "record-save-before-write", "record-save-before-rename",
    "record-save-after-rename", "result-save-before-write", "result-save-before-rename",
    "result-save-after-rename",
};

struct Selection {
  std::string point;
  long occurrence = 1;
};

// What TUNE_FAULT_INJECT selects now; nullopt when unset, empty or malformed (a malformed or
// unknown value is reported once per value). Read at every point, not cached: a write is far
// dearer than getenv, and tests set the variable in a forked child.
std::optional<Selection> selection(std::mutex& m, std::string& reported) {
  const char* env = std::getenv("TUNE_FAULT_INJECT");
  if (env == nullptr || *env == '\0') return std::nullopt;
  auto report = [&](const char* why) {
    std::lock_guard<std::mutex> lock(m);
    if (reported == env) return;
    reported = env;
    std::fprintf(stderr, "tune: warning: TUNE_FAULT_INJECT='%s' %s; no fault will be injected\n",
                 env, why);
  };
  Selection s;
  std::string_view text(env);
  if (auto colon = text.rfind(':'); colon != std::string_view::npos) {
    const std::string_view count = text.substr(colon + 1);
    long n = 0;
    auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
    if (ec != std::errc() || end != count.data() + count.size() || n < 1) {
      report("has a count after ':' that is not a whole number >= 1");
      return std::nullopt;
    }
    s.occurrence = n;
    text = text.substr(0, colon);
  }
  s.point = std::string(text);
  for (std::string_view p : all_points)
    if (p == s.point) return s;
  report("names no fault point (tuner/core/base/fault_inject.hpp lists them)");
  return std::nullopt;
}

struct State {
  std::mutex mutex;
  std::string reported;  // the last bad value warned about
  std::string counted;   // the value `seen` counts for
  pid_t counted_in = 0;  // and the process (a forked child counts afresh)
  long seen = 0;
};

State& state() {
  static State s;
  return s;
}

}  // namespace

void fault_point(std::string_view point) {
  State& st = state();
  std::optional<Selection> s = selection(st.mutex, st.reported);
  if (!s || s->point != point) return;
  {
    std::lock_guard<std::mutex> lock(st.mutex);
    const std::string value = std::getenv("TUNE_FAULT_INJECT");
    if (st.counted != value || st.counted_in != ::getpid()) {
      st.counted = value;
      st.counted_in = ::getpid();
      st.seen = 0;
    }
    if (++st.seen != s->occurrence) return;
  }
  ::kill(::getpid(), SIGKILL);
  std::_Exit(128 + SIGKILL);  // not reached: SIGKILL cannot be caught
}

bool fault_point_selected(std::string_view point) {
  State& st = state();
  std::optional<Selection> s = selection(st.mutex, st.reported);
  return s && s->point == point;
}

std::span<const std::string_view> fault_points() {
  return all_points;
}

}  // namespace tune
