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

bool digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

std::optional<double> parse_decimal(std::string_view text) {
  std::size_t i = 0;
  if (i < text.size() && text[i] == '-') ++i;
  const std::size_t int_start = i;
  while (i < text.size() && digit(text[i]))
    ++i;
  std::size_t digits = i - int_start;
  if (i < text.size() && text[i] == '.') {
    const std::size_t frac_start = ++i;
    while (i < text.size() && digit(text[i]))
      ++i;
    digits += i - frac_start;
  }
  if (digits == 0) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    const std::size_t exp_start = i;
    while (i < text.size() && digit(text[i]))
      ++i;
    if (i == exp_start) return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  const std::string copy(text);
  errno = 0;
  const double v = std::strtod(copy.c_str(), nullptr);
  // ERANGE with a finite result is an underflow: the tiny value is in range, and kept.
  if (!std::isfinite(v) || (errno == ERANGE && std::fabs(v) > 1)) return std::nullopt;
  return v;
}

std::optional<long> parse_whole(std::string_view text) {
  std::size_t i = text.starts_with("-") ? 1 : 0;
  if (i == text.size()) return std::nullopt;
  for (std::size_t k = i; k < text.size(); ++k)
    if (!digit(text[k])) return std::nullopt;
  const std::string copy(text);
  errno = 0;
  const long v = std::strtol(copy.c_str(), nullptr, 10);
  if (errno == ERANGE) return std::nullopt;
  return v;
}

std::optional<double> env_number(const char* name, double lo, double hi) {
  const char* text = value_of(name);
  if (text == nullptr) return std::nullopt;
  if (const std::optional<double> v = parse_decimal(text); v && *v >= lo && *v <= hi) return v;
  warn_once(name, text, fmt::format("a number in [{}, {}]", lo, hi));
  return std::nullopt;
}

std::optional<long> env_whole_number(const char* name, long lo, long hi) {
  const char* text = value_of(name);
  if (text == nullptr) return std::nullopt;
  if (const std::optional<long> v = parse_whole(text); v && *v >= lo && *v <= hi) return v;
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
