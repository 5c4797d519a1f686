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

}  // namespace tune
