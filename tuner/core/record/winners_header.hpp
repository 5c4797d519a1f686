// The winners header (`tuner header`, tune_generate_header): a C++17 header with each
// architecture's shipped config per bucket (winners.hpp) as constexpr values, a `select` from a
// runtime shape to its bucket built from the buckets' `when` predicates (expr_cxx.hpp), and a
// dispatch by architecture. The text depends only on the build, the table and the namespace, so
// an unchanged input gives the same bytes and dependents do not rebuild.
//
// Example:
//   WinnersTable table = choose_winners(build);
//   if (table.complete()) write_file_if_changed(out, winners_header(build, table).value());
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <tuner/core/base/cxx_names.hpp>  // cxx_identifier, for the header's names
#include <tuner/core/base/result.hpp>
#include <tuner/core/build/kernel_build.hpp>
#include <tuner/core/record/winners.hpp>

namespace tune {

/// Whether the header can declare the space's names: a param must not be a reserved C++ name
/// (is_reserved_cxx_name: a keyword, a predefined macro, `__x`, `_X`) nor `tune_id` or
/// `tune_origin` (members the header adds); a shape name must not be reserved and must be an int in
/// every bucket or a string in every bucket (the header's Shape has one member per name). The first
/// problem as a diagnostic without a path, e.g. `param 'int' of spaces/pick.toml cannot be a C++
/// member name in the header`.
std::optional<diagnostic> header_name_problem(const KernelBuild& build);

/// How the winners header spells string params that the space maps to C++ text
/// (`[entry.map.LAYOUT]`, docs/embed.md): as that text, so that a template kernel takes a
/// winner's members as its template arguments (`tile_gemm<W::BM, W::LAYOUT>`).
struct HeaderMapping {
  /// Headers that declare what the mapped text names, included first (`layouts.hpp`, or
  /// `<lib/layouts.hpp>` as it is).
  std::vector<std::string> includes;
  /// Mapped params whose text is a type (`float`, `__half`): `using NAME = text;`. The others
  /// are values: `static constexpr auto NAME = text;`.
  std::set<std::string> type_params;
  /// Off: every string param stays its string (the embedded winners' header, which host code
  /// includes without the kernel's declarations).
  bool map_strings = true;
};

/// The text of the winners header of `build` with the winners of `table`, in namespace
/// `name_space` (empty: `tune_winners::<kernel as an identifier>`). A diagnostic without a path
/// for a name the header cannot hold (header_name_problem) or a `when` it cannot translate
/// (`bucket '<name>': ...`). Throws tune::error when the table is not complete() or does not
/// match the build's archs and buckets.
result<std::string> winners_header(const KernelBuild& build, const WinnersTable& table,
                                   std::string_view name_space = {},
                                   const HeaderMapping& mapping = {});

}  // namespace tune
