// Range checks of the CLI's numbers, as CLI11 validators: a readable message that names the
// range instead of CLI11's own (whose `0` for --timeout printed the smallest double, 309
// digits), and no NaN or infinity slipping through a comparison.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <tuner/core/base/input_limits.hpp>

namespace tune::cli {

/// The range of a --budget or --timeout: a space's time settings have the same one.
using tune::max_seconds;
using tune::min_seconds;

/// A number of seconds: finite, more than 0 (or at least 0 with `zero_allowed`) and at most
/// max_seconds, and at least min_seconds when not 0. Refused: `must be a number of seconds in
/// (0, 604800], at least 0.001 when not 0, got 'nan'`.
inline CLI::Validator seconds(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& text) -> std::string {
        const std::string range = fmt::format("{}0, {}]", zero_allowed ? "[" : "(", max_seconds);
        errno = 0;
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        const bool number = !text.empty() && end == text.c_str() + text.size() && errno == 0;
        // `-0` is refused as a negative number, and a positive time under a millisecond
        // (`1e-300`) as no time at all.
        if (!number || !std::isfinite(v) || v > max_seconds || v < 0 || text.front() == '-' ||
            (v == 0 && !zero_allowed) || (v > 0 && v < min_seconds))
          return fmt::format("must be a number of seconds in {}, at least {} when not 0, got '{}'",
                             range, min_seconds, text);
        return {};
      },
      "SECONDS");
}

/// The longest --keep-days: a hundred years.
inline constexpr double max_days = 36500;

/// A number of days: finite, at least 0 and at most max_days (`nan`, `inf` and `1e300`, which
/// overflow a duration, are refused): `must be a number of days in [0, 36500], got 'nan'`.
inline CLI::Validator days() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        const bool number = !text.empty() && end == text.c_str() + text.size() && errno == 0;
        if (!number || !std::isfinite(v) || v < 0 || v > max_days || text.front() == '-')
          return fmt::format("must be a number of days in [0, {}], got '{}'", max_days, text);
        return {};
      },
      "DAYS");
}

/// A whole number in [lo, hi]: `must be a whole number in [0, 1024], got '-1'`.
inline CLI::Validator whole_number(long lo, long hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long v = std::strtol(text.c_str(), &end, 10);
        const bool number = !text.empty() && end == text.c_str() + text.size() && errno == 0;
        if (!number || v < lo || v > hi)
          return fmt::format("must be a whole number in [{}, {}], got '{}'", lo, hi, text);
        return {};
      },
      "INT");
}

}  // namespace tune::cli
