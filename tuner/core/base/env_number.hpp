// Numeric environment variables (TUNE_REMOTE_STORE_TIMEOUT, TUNE_COMPILE_JOBS, ...) read in one
// place: a value that is not a finite number in its range (`nan`, `inf`, `1e17`, `0`, `-1`,
// `abc`) is never used, and never dropped silently: a warning on stderr names the variable, the
// value, the range and what is used instead, once per process and variable.
//
// Example:
//   const double t = env_number("TUNE_REMOTE_STORE_TIMEOUT", 0.1, 3600).value_or(30);
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace tune {

/// The one reader of numbers people type (the CLI's --timeout, --keep-days, --compile-jobs, the
/// numeric environment variables): plain decimal text, `[-]digits[.digits][e[+-]digits]` (or
/// `.5`), nothing around it. Hexadecimal (`0x1p4`, which strtod reads as 16), blanks (` 7`),
/// `inf`, `nan` and a value past a double's range are nullopt; a value too small for a double
/// (`1e-320`) reads as what strtod makes of it (a subnormal or 0), as it is in range.
std::optional<double> parse_decimal(std::string_view text);

/// A whole number in decimal (`[-]digits`, nothing around it) that fits a long; nullopt
/// otherwise (`8.5`, `0x8`, ` 8`, `+8`).
std::optional<long> parse_whole(std::string_view text);

/// The value of `name` when it is set, not empty, and a finite number in [lo, hi]; nullopt when
/// unset or empty, and nullopt with the warning (`tune: warning: TUNE_X='inf' is not a number in
/// [0.1, 3600]; the default is used`) for anything else.
std::optional<double> env_number(const char* name, double lo, double hi);

/// The same for a whole number in [lo, hi] (`8`; `8.5` and `0x8` are refused).
std::optional<long> env_whole_number(const char* name, long lo, long hi);

/// A directory named by `name` (TUNE_CACHE_DIR) as an absolute path, nullopt when unset or
/// empty. Every process of a build (the warm steps ninja runs in the build tree, a `tuner run`
/// from the source tree) must see one place: `~` and `~/...` become $HOME's, and a relative
/// path is resolved once, against the working directory, with a note on stderr that says which
/// absolute path is used (once per process and variable).
std::optional<std::filesystem::path> env_directory(const char* name);

}  // namespace tune
