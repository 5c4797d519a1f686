// Bad input is expected: functions that read user files return `result<T>`, whose error is a
// `diagnostic` printed compiler-style (`path:line:column: error: message`). Broken environments
// and bugs throw `tune::error` instead. `result` keeps `std::expected`'s member names so it can
// be swapped for it once C++23 is available everywhere.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tune {

/// One problem in one input, located as precisely as the reader knows (line and column are
/// 1-based; 0 means unknown). `message` is lowercase, names what was found and what was expected.
struct diagnostic {
  std::string path;
  int line = 0;
  int column = 0;
  std::string message;

  /// `path:line:column: error: message`, leaving out what is unknown.
  std::string str() const;
};

/// Thrown for a broken environment or a violated invariant (never for bad user input).
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Thrown by `result::value()` on an error, and usable wherever a diagnostic must unwind.
class input_error : public error {
 public:
  explicit input_error(diagnostic d) : error(d.str()), diag_(std::move(d)) {}
  const diagnostic& diag() const noexcept { return diag_; }

 private:
  diagnostic diag_;
};

struct unexpected_diag {
  diagnostic diag;
};

/// `return fail(path, line, column, "message");` from a function returning result<T>.
inline unexpected_diag fail(std::string path, int line, int column, std::string message) {
  return {diagnostic{std::move(path), line, column, std::move(message)}};
}
inline unexpected_diag fail(diagnostic d) {
  return {std::move(d)};
}

/// A value or a diagnostic (std::expected<T, diagnostic> in spirit).
template <class T>
class result {
 public:
  result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  result(unexpected_diag e) : v_(std::in_place_index<1>, std::move(e.diag)) {}

  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  /// The value; throws `input_error` when this holds a diagnostic.
  T& value() & {
    if (!has_value()) throw input_error(std::get<1>(v_));
    return std::get<0>(v_);
  }
  const T& value() const& {
    if (!has_value()) throw input_error(std::get<1>(v_));
    return std::get<0>(v_);
  }
  T&& value() && {
    if (!has_value()) throw input_error(std::get<1>(v_));
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return std::get<0>(v_); }
  const T& operator*() const& { return std::get<0>(v_); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }

  const diagnostic& error() const& { return std::get<1>(v_); }

 private:
  std::variant<T, diagnostic> v_;
};

}  // namespace tune
