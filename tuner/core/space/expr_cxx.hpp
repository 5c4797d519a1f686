// An Expr as C++17 source, for generated code: the `select` of the winners header (`tuner
// header`, winners_header.hpp) evaluates each bucket's `when` on a runtime shape `s` with these
// translations. The C++ keeps the tuner's semantics (expr.hpp: C on int64, where overflow and
// division by zero are errors): arithmetic goes through the checked helpers
// `detail::add/sub/mul/div/mod/neg` of namespace tune_winners::detail, which take a
// `bool& ok` and clear it on an error, and comparisons, `&&`, `||` and `!` give the ints 0 and 1.
//
// Example: `-M % 7 != 1` becomes
//   static_cast<std::int64_t>(detail::mod(detail::neg(s.M, ok), std::int64_t{7}, ok) !=
//   std::int64_t{1})
#pragma once

#include <string>
#include <string_view>

#include <tuner/core/base/result.hpp>
#include <tuner/core/space/expr.hpp>

namespace tune {

/// `s` as a C++ string literal (quotes included): `"` and `\` escaped, other bytes below 0x20
/// or from 0x7f up as three-digit octal escapes, so the literal is plain ASCII.
std::string cxx_string_literal(std::string_view s);

/// The C++ expression that computes `expr` from the members `s.<name>` of a shape `s`, in a
/// scope where `ok` is a `bool` lvalue and `detail` names tune_winners::detail. Int-valued
/// parts are std::int64_t, strings std::string_view; the whole is an int for a condition.
/// `kinds` gives each name's kind (a name it does not know counts as an int). A `-` or `!` over
/// a string is a diagnostic (`cannot translate '<canonical>' into C++`, no path or position);
/// an expression that passed Expr::check with the same kinds never gives one.
result<std::string> expr_to_cxx(const Expr& expr, const Expr::KindLookup& kinds);

}  // namespace tune
