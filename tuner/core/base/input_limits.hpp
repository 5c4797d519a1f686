// Limits on what the readers of user files accept, so that a hostile or broken file is refused
// with a diagnostic instead of exhausting memory or the stack. Every reader checks the size
// before parsing and the JSON readers check nesting before nlohmann::json builds (and later
// copies and prints, recursively) the tree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/core.h>

#include <tuner/core/base/result.hpp>

namespace tune {

/// A space file (TOML) may hold at most 1 MiB.
inline constexpr std::size_t max_space_bytes = std::size_t{1} << 20;
/// A record or manifest (JSON) may hold at most 16 MiB.
inline constexpr std::size_t max_record_bytes = std::size_t{16} << 20;
inline constexpr std::size_t max_manifest_bytes = std::size_t{16} << 20;
/// A trial log may hold at most 1 GiB (a million trials are about 400 MB) ...
inline constexpr std::size_t max_log_bytes = std::size_t{1} << 30;
/// ... and each of its lines at most 1 MiB; a longer trial line is skipped with a warning.
inline constexpr std::size_t max_log_line_bytes = std::size_t{1} << 20;
/// A re-tune's prior (a trial log read for its ranking) may hold at most 256 MiB, about 600,000
/// trials; a larger one is not used, with a warning (docs/search.md "Re-tunes start from what
/// was measured").
inline constexpr std::size_t max_prior_bytes = std::size_t{256} << 20;
/// JSON arrays and objects may nest at most this deep (a record needs 5 levels).
inline constexpr int max_json_depth = 64;

/// The longest time a setting may name (a space's `timeout_s`, `compile_timeout_s` and
/// `budget_s`, the CLI's `--timeout` and `--budget`): one week, in seconds. Longer means "no
/// limit" in practice, and a larger number would overflow the millisecond waits.
inline constexpr double max_seconds = 7.0 * 24 * 3600;
/// The shortest time a setting may name, when not 0: a millisecond.
inline constexpr double min_seconds = 0.001;

/// The most compile seconds a cache entry or a trial is believed (a day): a larger value is no
/// measurement (a cache entry reads it as unknown, a trial log refuses it), and sums and
/// formats of them stay readable numbers.
inline constexpr double max_compile_s = 86400;

/// The most compiles at once that a setting may ask for: --compile-jobs, TUNE_COMPILE_JOBS and
/// the build's TUNE_WARM_JOBS (cmake/TuneKernel.cmake checks the same range at configure,
/// `_TUNE_MAX_JOBS`; tests/layout/one_range_test.py keeps the two equal).
inline constexpr long max_jobs = 1024;

/// `1 MiB` / `16 MiB` / `1 GiB` / `123 bytes`, for messages about the limits above.
inline std::string describe_size(std::uint64_t bytes) {
  if (bytes >= (std::uint64_t{1} << 30) && bytes % (std::uint64_t{1} << 30) == 0)
    return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (std::uint64_t{1} << 20) && bytes % (std::uint64_t{1} << 20) == 0)
    return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

/// The diagnostic for input of `size` bytes over `limit`, or nullopt when it fits. `what` names
/// the kind of file ("a space file").
inline std::optional<diagnostic> size_problem(const std::string& path, std::uint64_t size,
                                              std::uint64_t limit, std::string_view what) {
  if (size <= limit) return std::nullopt;
  return diagnostic{path, 0, 0,
                    fmt::format("the file is {} bytes, more than the {} {} may hold", size,
                                describe_size(limit), what)};
}

/// Where JSON `text` first nests arrays and objects deeper than `max_depth`, as a diagnostic
/// at that bracket (1-based line and column in bytes), or nullopt. Strings are skipped, so
/// brackets inside them do not count; the text need not be valid JSON.
inline std::optional<diagnostic> json_nesting_problem(std::string_view text,
                                                      const std::string& path,
                                                      int max_depth = max_json_depth) {
  int depth = 0;
  int line = 1;
  std::size_t line_start = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      else if (c == '\n')
        ++line, line_start = i + 1;  // invalid JSON, but keep the places right
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '\n':
        ++line, line_start = i + 1;
        break;
      case '[':
      case '{':
        if (++depth > max_depth)
          return diagnostic{
              path, line, static_cast<int>(i - line_start) + 1,
              fmt::format("arrays and objects nest deeper than {} levels", max_depth)};
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

}  // namespace tune
