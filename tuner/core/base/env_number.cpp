#include <tuner/core/base/env_number.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

#include <fmt/core.h>

#include <tuner/core/base/text.hpp>

namespace tune {

namespace {

// Warns about `name` once per process: a tune reads its settings in several places.
void warn_once(const char* name, const char* value, const std::string& range) {
  static std::mutex m;
  static std::set<std::string> warned;
  const std::lock_guard<std::mutex> lock(m);
  if (!warned.insert(name).second) return;
  fmt::print(stderr, "tune: warning: {}='{}' is not {}; the default is used\n", name,
             printable(one_line(value)), range);
}

const char* value_of(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

}  // namespace

std::optional<double> env_number(const char* name, double lo, double hi) {
  const char* text = value_of(name);
  if (text == nullptr) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end != text && *end == '\0' && errno == 0 && std::isfinite(v) && v >= lo && v <= hi) return v;
  warn_once(name, text, fmt::format("a number in [{}, {}]", lo, hi));
  return std::nullopt;
}

std::optional<long> env_whole_number(const char* name, long lo, long hi) {
  const char* text = value_of(name);
  if (text == nullptr) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end != text && *end == '\0' && errno == 0 && v >= lo && v <= hi) return v;
  warn_once(name, text, fmt::format("a whole number in [{}, {}]", lo, hi));
  return std::nullopt;
}

std::optional<std::filesystem::path> env_directory(const char* name) {
  const char* text = value_of(name);
  if (text == nullptr) return std::nullopt;
  std::string value = text;
  const char* home = std::getenv("HOME");
  if ((value == "~" || value.starts_with("~/")) && home != nullptr && *home != '\0')
    value = std::string(home) + value.substr(1);
  std::filesystem::path path(value);
  if (path.is_absolute()) return path.lexically_normal();
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec).lexically_normal();
  if (ec) return path;
  static std::mutex m;
  static std::set<std::string> noted;
  const std::lock_guard<std::mutex> lock(m);
  if (noted.insert(name).second)
    fmt::print(stderr,
               "tune: note: {}='{}' is a relative path; using '{}' (against this process's "
               "working directory: set an absolute path so that every process uses one)\n",
               name, printable(one_line(text)), printable(absolute.string()));
  return absolute;
}

}  // namespace tune
