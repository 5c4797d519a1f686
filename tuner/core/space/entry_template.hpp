// Template entries (docs/embed.md "Template entries"): a kernel written as a C++ function
// template, tuned over its template arguments. The entry is written as an expression such as
// `tile_gemm<{BM}, {BN}, {LAYOUT}>`, where each `{NAME}` is a param of the space. Per candidate
// warm compiles a small generated translation unit that includes the source and instantiates
// the template with the config's values; the instance's lowered (mangled) name is read from
// ptxas's report and kept in the cache entry, so the harness and the embedded winners reach it
// by name. String values may map to C++ text through the space's `[entry.map.<NAME>]` tables.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/result.hpp>

namespace tune {

class Space;

/// A parsed template entry.
struct EntryTemplate {
  std::string text;  ///< as written: `tile_gemm<{BM}, {BN}, {LAYOUT}>`
  std::string name;  ///< the qualified template name before `<`: `tile_gemm`, `ns::tile_gemm`
  /// The text split at placeholders: literal, param, literal, param, ..., literal.
  std::vector<std::string> pieces;
  /// Per param: value (as `-D` would pass it) to the C++ text it stands for.
  std::map<std::string, std::map<std::string, std::string>> maps;

  /// The instantiation for `config`: `tile_gemm<64, 128, Layout::Row>`.
  std::string instantiate(const Config& config) const;
  /// The generated translation unit: includes `source` (as spelled) and takes the address of
  /// the instance, which makes nvcc compile it into the module.
  std::string unit_text(const Config& config, std::string_view source) const;
  /// The Itanium-mangled prefix every instance's name starts with: `_Z9tile_gemmI`,
  /// `_ZN2ns9tile_gemmI`.
  std::string mangled_prefix() const;
  /// The one function of `functions` (names as ptxas prints them) that is an instance of the
  /// template; a message naming what was found when none or several are.
  result<std::string> pick_symbol(const std::vector<std::string>& functions) const;
};

/// Why `text` cannot stand as (part of) a template argument in the generated translation unit,
/// with the 0-based index of the first offending character, or nullopt: a line break or another
/// control character, `#` (a directive such as `#include`), `;`, `{` or `}` (a statement or a
/// body), or a comment (`//`, `/*`). The text of an `[entry.map.*]` value is checked so; the
/// template entry's literal text too, its `{PARAM}` placeholders aside.
std::optional<std::pair<std::size_t, std::string>> template_text_problem(std::string_view text,
                                                                         bool placeholders);

/// Why `text` is not one C++ template argument (a type or a constant expression such as
/// `Layout::Row`, `std::pair<int, float>`, `sizeof(float) * 2`), with the 0-based index of the
/// first offending character, or nullopt: what template_text_problem refuses, and `_Pragma`,
/// `__pragma` or `asm` (a directive or a statement without `#` or `;`), a raw string literal, an
/// unterminated string or character literal, a ')', ']' or '>' that closes nothing (a '>'
/// outside parentheses would end the argument list), a '(', '[' or '<' left open, a ',' outside
/// brackets (a second argument), a character that is not C++ punctuation (`@`, `$`, `\`). The
/// text of every `[entry.map.*]` value is checked so.
std::optional<std::pair<std::size_t, std::string>> map_text_problem(std::string_view text);

/// Whether an entry as given to tune_add_kernel is a template expression (it holds `<`).
bool is_template_entry(std::string_view entry);

/// Parses `text` against the space's params and maps. A diagnostic's `column` is the 1-based
/// column inside `text` (path and line left empty for the caller): a name that is not a
/// (qualified) C++ identifier, an unclosed `{`, a placeholder naming no param (with the near
/// miss), no `<...>`.
result<EntryTemplate> parse_entry_template(std::string_view text, const Space& space);

}  // namespace tune
