// Names that tune writes into generated C++ (the winners header, the names header, the embedded
// winners): which ones C++ or its standard headers already take, and the one way a free text
// (a bucket label, a kernel name) becomes an identifier.
//
// Example:
//   cxx_identifier("m<=512 & row")  // "m_512_row"
//   cxx_identifier("NULL")          // "NULL_": <cstddef> defines NULL
//   is_reserved_cxx_name("EOF")     // true: a header declaring `int EOF` breaks after <cstdio>
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tune {

/// Whether `name` is a C++20 keyword or an identifier with a special meaning (`final`,
/// `override`, `import`, `module`).
bool is_cxx_keyword(std::string_view name);

/// Whether `name` is a macro that the C and C++ standard headers define (`NULL`, `EOF`,
/// `errno`, `assert`, the `<climits>`, `<cstdint>`, `<cfloat>`, `<cinttypes>` limits and
/// formats, the `<cerrno>` codes, `<csignal>`, `<clocale>`, `<cstdlib>`, `<cfenv>`, `<cmath>`,
/// `stdin`...), or one that GCC, Clang or nvcc predefine without an underscore in GNU modes
/// (`linux`, `unix`, `i386`, `sun`, `sparc`, `mips`, `vax`). Such a name, declared after a
/// harness included the standard headers, is replaced by the preprocessor: `int NULL = 1;`
/// becomes `int __null = 1;`. The list is fixed in the source (cxx_names.cpp).
bool is_predefined_macro(std::string_view name);

/// Whether generated C++ cannot declare `name` as it is: a keyword, a predefined macro
/// (is_predefined_macro), or a name the implementation reserves (`__x`, `_X`).
bool is_reserved_cxx_name(std::string_view name);

/// Why `name` cannot name a namespace of generated code (`app::winners`, tune_generate_header's
/// and tune_embed_winners' NAMESPACE), or nullopt: it is not identifiers joined by `::`, or one of
/// them is reserved (is_reserved_cxx_name: `linux` is `1` under -std=gnu++17).
std::optional<std::string> cxx_namespace_problem(std::string_view name);

/// `text` as a C++ identifier: each run of other characters becomes one '_', a leading digit
/// gets a '_' before it, a reserved prefix a 'b', and a keyword or a predefined macro a '_'
/// after it (`m<=512 & row` gives `m_512_row`, `default` gives `default_`, `NULL` gives
/// `NULL_`). Two texts may give one identifier (`sax-py`, `sax_py`): a caller that declares
/// both in one scope tells them apart (the configure refuses two such kernels).
std::string cxx_identifier(std::string_view text);

}  // namespace tune
