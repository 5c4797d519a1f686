// The expression language of `prune` and `when`: integers with + - * / %, comparisons,
// && || !, parentheses, string literals in single or double quotes and string equality.
// Names resolve to params first, then to shape names.
//
// Semantics, as in C on int64: `/` truncates toward zero and `%` takes the sign of the left
// operand; an integer literal or a result outside int64 is an error, and so is a division or
// modulo by zero. Comparisons, `&&`, `||` and `!` give the ints 0 and 1; `&&` and `||`
// short-circuit (the right side is not evaluated when the left decides). Strings compare only
// with `==` and `!=`, and only with strings. Precedence, loosest first: `||`, `&&`,
// `== !=`, `< <= > >=`, `+ -`, `* / %`, unary `- !`.
//
// Example:
//   auto e = tune::Expr::parse("BM * BN <= 32768 && LAYOUT == 'row'").value();
//   bool keep = e.test([&](std::string_view n) { return config.find(n); }).value();
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/result.hpp>

namespace tune {

namespace detail {
struct ExprNode;
}

/// How deep an expression may nest: its tree (each operator over its operands) and the
/// parentheses and unary operators around any token. Deeper ones are refused at parse time,
/// since evaluating and printing recurse (`a+a+...+a` with 200 terms is already too deep).
inline constexpr int max_expr_height = 128;

/// The two kinds of value an expression handles.
enum class ValueKind { integer, string };

/// "an int" / "a string", as messages say it.
std::string_view describe(ValueKind kind);

/// A parsed expression, immutable and cheap to copy (the tree is shared). Parsing reports the
/// column (1-based, within the expression text, in bytes) of the first problem; evaluation
/// reports division by zero, overflow and type errors with the column of the operator.
class Expr {
 public:
  /// Parses `text`. The diagnostic's `column` is the offending column within `text`, its path
  /// and line are empty (callers add where the expression came from).
  static result<Expr> parse(std::string_view text);

  const std::string& text() const noexcept { return text_; }
  /// Every name the expression reads, in first-use order.
  const std::vector<std::string>& names() const noexcept { return names_; }
  /// The 1-based column of the first use of `name` within text(); 0 when it is not used.
  int name_column(std::string_view name) const;
  /// A normal form of the expression: whitespace, redundant parentheses and the choice of
  /// string quotes removed, every operation parenthesized (`((BM * BN) <= 32768)`), strings
  /// JSON-quoted. Two expressions with the same normal form mean the same thing.
  std::string canonical() const;
  /// The syntax tree (tuner/core/space/expr_node.hpp, internal to tune_core) for the walkers that
  /// translate an expression (expr_cxx.hpp); nullptr only in a default-constructed Expr.
  const detail::ExprNode* root() const noexcept { return root_.get(); }

  /// Resolves a name's kind, or nullopt when it is unknown.
  using KindLookup = std::function<std::optional<ValueKind>(std::string_view)>;
  /// Checks types without evaluating: every name known, operands of the right kinds. Returns
  /// the kind of the whole expression. An unknown name is reported at its column with the
  /// message `unknown name '<name>'`.
  result<ValueKind> check(const KindLookup& lookup) const;

  /// Resolves a name to a value, or returns nullptr when it is unknown.
  using Lookup = std::function<const ParamValue*(std::string_view)>;
  /// Evaluates to a value; booleans are the ints 0 and 1. Each name is looked up once.
  result<ParamValue> eval(const Lookup& lookup) const;
  /// Evaluates and requires an int (a truth value: non-zero is true).
  result<bool> test(const Lookup& lookup) const;

  /// As `eval` / `test`, with the names already resolved: `values[i]` is the value of
  /// `names()[i]` (nullptr for an unknown name). The fast path for evaluating one expression
  /// over many configs.
  result<ParamValue> eval_bound(std::span<const ParamValue* const> values) const;
  result<bool> test_bound(std::span<const ParamValue* const> values) const;

 private:
  std::string text_;
  std::vector<std::string> names_;
  std::vector<int> name_columns_;
  std::shared_ptr<const detail::ExprNode> root_;
  friend class ExprParser;
};

}  // namespace tune
