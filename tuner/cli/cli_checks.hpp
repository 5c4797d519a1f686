// Range checks of the CLI's numbers, as CLI11 validators: a readable message that names the
// range instead of CLI11's own (whose `0` for --timeout printed the smallest double, 309
// digits), and no NaN or infinity slipping through a comparison.
#pragma once

#include <optional>
#include <string>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <tuner/core/base/cxx_names.hpp>
#include <tuner/core/base/env_number.hpp>
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
        // Plain decimal only (parse_decimal): `0x1p4` and ` 7` are no numbers of seconds.
        const std::optional<double> parsed = parse_decimal(text);
        const double v = parsed.value_or(0);
        // `-0` is refused as a negative number, and a positive time under a millisecond
        // (`1e-300`) as no time at all.
        if (!parsed || v > max_seconds || v < 0 || text.front() == '-' ||
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
        // `1e-320` is a number of days in range (nearly 0); `0x1p4` (16) and ` 7` are not
        // numbers as people write them.
        const std::optional<double> parsed = parse_decimal(text);
        const double v = parsed.value_or(0);
        if (!parsed || v < 0 || v > max_days || text.front() == '-')
          return fmt::format("must be a number of days in [0, {}], got '{}'", max_days, text);
        return {};
      },
      "DAYS");
}

/// A whole number in [lo, hi]: `must be a whole number in [0, 1024], got '-1'`.
inline CLI::Validator whole_number(long lo, long hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        const std::optional<long> v = parse_whole(text);
        if (!v || *v < lo || *v > hi)
          return fmt::format("must be a whole number in [{}, {}], got '{}'", lo, hi, text);
        return {};
      },
      "");  // no description: the help says INT, not INT:INT
}

/// A namespace for generated code (`--namespace`): identifiers joined by `::`, none of them a
/// keyword or a macro (cxx_namespace_problem): `must be a C++ namespace name such as
/// 'app::winners', got 'linux::w': 'linux' is a C++ keyword, a macro ...`.
inline CLI::Validator cxx_namespace() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (const std::optional<std::string> why = cxx_namespace_problem(text))
          return fmt::format("must be a C++ namespace name such as 'app::winners', got '{}': {}",
                             text, *why);
        return {};
      },
      "");
}

}  // namespace tune::cli
