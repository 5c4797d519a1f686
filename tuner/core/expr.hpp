// The expression language of `prune` and `when`: integers with + - * / %, comparisons,
// && || !, parentheses, string literals in single or double quotes and string equality.
// Names resolve to params first, then to shape names.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <tuner/core/config.hpp>
#include <tuner/core/result.hpp>

namespace tune {

namespace detail {
struct ExprNode;
}

/// A parsed expression. Parsing reports the column (1-based, within the expression text) of
/// the first problem; evaluation reports division by zero and type errors.
class Expr {
 public:
  /// Parses `text`. The diagnostic's `column` is the offending column within `text`, its path
  /// and line are empty (callers add where the expression came from).
  static result<Expr> parse(std::string_view text);

  const std::string& text() const noexcept { return text_; }
  /// Every name the expression reads, in first-use order.
  const std::vector<std::string>& names() const noexcept { return names_; }

  /// Resolves a name to a value, or returns nullptr when it is unknown.
  using Lookup = std::function<const ParamValue*(std::string_view)>;
  /// Evaluates to a value; booleans are the ints 0 and 1.
  result<ParamValue> eval(const Lookup& lookup) const;
  /// Evaluates and requires an int (a truth value: non-zero is true).
  result<bool> test(const Lookup& lookup) const;

 private:
  std::string text_;
  std::vector<std::string> names_;
  std::shared_ptr<const detail::ExprNode> root_;
};

}  // namespace tune
