// Internal to tune_core (not installed): the reader behind `Space::load` and `Space::parse`.
// It reads one TOML document into a Space and enforces every rule space.hpp lists; the first
// broken rule becomes the diagnostic. Its parts live by concern:
// - space_toml.cpp: where things are in the TOML source (entries in declaration order, node
//   kinds, the file position of each byte of a string value, for expression columns);
// - space_parser.cpp: the top level, [params], [[configs]], require, the size limit and the
//   enumeration, and the entry points;
// - space_parser_buckets.cpp: [[buckets]] and the expressions (when, prune);
// - space_parser_settings.cpp: [search] and [bench].
// Space's queries (configs, keeps, select, the hashes) live in space.cpp.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/space/space.hpp>

namespace tune::detail {

// ---- the TOML source (space_toml.cpp) ---------------------------------------------------

/// A table entry with where its key was declared.
struct TomlEntry {
  std::string key;
  SourcePos key_pos;
  const toml::node* node;
};

/// The start of a TOML source region.
SourcePos pos_of(const toml::source_region& r);
/// A table's entries in source order (TOML++ tables are sorted maps).
std::vector<TomlEntry> in_order(const toml::table& t);
/// How messages name a TOML node's kind: "an int", "a list", "a table", ...
std::string_view kind_of(const toml::node& n);
/// The byte offset of a 1-based (line, column-in-characters) position in `doc`.
std::size_t offset_of(std::string_view doc, SourcePos pos);
/// For a TOML string value starting (at its opening quote) at `begin`, the file position of
/// each byte of the decoded string, plus one for the closing quote. Handles basic and literal
/// strings, single- and multi-line, escapes and line-ending backslashes. Empty when `begin`
/// is not at a quote.
std::vector<SourcePos> place_string(std::string_view doc, SourcePos begin);

// ---- names (space_parser.cpp) ----------------------------------------------------------

/// Whether `s` is a C identifier (`[A-Za-z_][A-Za-z0-9_]*`): params and shape names.
bool is_identifier(std::string_view s);
/// The identifier rule as messages state it.
inline constexpr std::string_view identifier_rule =
    "letters, digits and '_', not starting with a digit";

// ---- the reader -----------------------------------------------------------------------

/// Reads and validates one space document into a Space; every check of space.hpp lives in its
/// members. Each `read_*` / `check_*` step returns false with `err` set at the first problem.
struct SpaceParser {
  std::string_view doc;  ///< the whole file, for mapping string values to positions
  Space s;               ///< filled step by step; its path_ labels every diagnostic
  std::optional<diagnostic> err;

  /// Parses the TOML, runs every step and computes the space hash.
  result<Space> run();

  // space_parser.cpp
  bool error(SourcePos pos, std::string message);
  bool error_at(const toml::node& n, std::string message);
  const TomlEntry* find_top(std::string_view key) const;
  bool read(const toml::table& root);
  bool check_top_level_keys();
  bool check_reserved();
  bool read_schema();
  bool read_kernel();
  bool read_params_as();
  // space_parser_entry.cpp
  bool read_entry();
  const Param* param(std::string_view name) const;
  std::vector<std::string> param_names() const;
  bool read_params();
  bool read_param(const TomlEntry& pe);
  /// Reads a [[configs]] or require entry: exactly the declared params, each of its kind.
  bool read_config(const toml::node& n, std::string_view what, Config& out);
  bool read_configs();
  bool in_product(const Config& c) const;
  bool check_size();
  bool enumerate();
  bool read_require();

  // space_parser_buckets.cpp
  bool read_buckets();
  bool read_bucket(const toml::node& n, std::size_t index);
  bool read_shape(const toml::node* shape, Bucket& b);
  /// Parses a string node as an expression, mapping its columns to the file. `what` names it
  /// in messages ("prune", "when"), `where` follows the quoted text (" of bucket 'a'").
  bool place(const toml::node& n, std::string_view what, std::string_view where, PlacedExpr& out);
  bool check_when(const PlacedExpr& w, const Bucket& b);
  bool read_prune();
  bool check_prune(const PlacedExpr& pe);

  // space_parser_settings.cpp
  /// The table [`name`] with only `keys` in it; nullptr when absent or (with `err` set) bad.
  const toml::table* settings_table(std::string_view name, std::span<const std::string_view> keys);
  /// A number (int or float) from `t[key]`, checked against 0 (exclusive when `strict`).
  bool number(const toml::table& t, std::string_view table, std::string_view key, bool strict,
              std::string_view unit, std::optional<double>& out);
  /// A time from `t[key]` in `unit` (`seconds`, or `milliseconds` at `per_second` 1000), in the
  /// range the CLI gives --timeout and --budget: above 0 (or at least 0 unless `strict`), at
  /// least min_seconds when not 0, at most max_seconds.
  bool read_cap_factor(const toml::table& t);
  bool time(const toml::table& t, std::string_view table, std::string_view key, bool strict,
            std::string_view unit, double per_second, std::optional<double>& out);
  bool reps(const toml::table& t, std::string_view key, int& out);
  bool read_search();
  bool read_strategy(const toml::table& t);
  bool read_prior(const toml::table& t);
  bool read_count(const toml::table& t, std::string_view key, std::int64_t min,
                  std::optional<std::int64_t>& out);
  bool read_bench();

  SourcePos params_pos;                ///< [params], where the size limit is reported
  std::vector<TomlEntry> top;          ///< the top-level entries in source order
  std::vector<const Config*> outside;  ///< explicit configs outside the product, first use
};

}  // namespace tune::detail
