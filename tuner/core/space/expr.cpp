// The expression language's meaning: type checking, evaluation over int64 with C's rules, and
// the normal form that the space hash reads. The reader is in expr_parser.cpp.
#include <tuner/core/space/expr.hpp>

#include <cstdint>
#include <limits>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/space/expr_node.hpp>

namespace tune {

using detail::ExprNode;
using detail::Op;
using detail::op_text;

std::string_view describe(ValueKind kind) {
  return kind == ValueKind::integer ? "an int" : "a string";
}

std::string_view detail::op_text(Op op) {
  switch (op) {
    case Op::neg:
      return "-";
    case Op::lnot:
      return "!";
    case Op::add:
      return "+";
    case Op::sub:
      return "-";
    case Op::mul:
      return "*";
    case Op::div:
      return "/";
    case Op::mod:
      return "%";
    case Op::lt:
      return "<";
    case Op::le:
      return "<=";
    case Op::gt:
      return ">";
    case Op::ge:
      return ">=";
    case Op::eq:
      return "==";
    case Op::ne:
      return "!=";
    case Op::land:
      return "&&";
    case Op::lor:
      return "||";
  }
  return "?";
}

int Expr::name_column(std::string_view name) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return name_columns_[i];
  return 0;
}

namespace {

void canonical_into(const ExprNode& n, std::string& out) {
  switch (n.kind) {
    case ExprNode::Kind::integer:
      out += std::to_string(n.ival);
      return;
    case ExprNode::Kind::string:
      out += nlohmann::json(n.sval).dump();
      return;
    case ExprNode::Kind::name:
      out += n.sval;
      return;
    case ExprNode::Kind::unary:
      out += '(';
      out += op_text(n.op);
      canonical_into(*n.lhs, out);
      out += ')';
      return;
    case ExprNode::Kind::binary:
      out += '(';
      canonical_into(*n.lhs, out);
      out += ' ';
      out += op_text(n.op);
      out += ' ';
      canonical_into(*n.rhs, out);
      out += ')';
      return;
  }
}

// Type rules shared by check() and evaluation, so both report the same message.
// Returns an empty string when the operand kinds are fine.
std::string unary_type_error(Op op, ValueKind operand) {
  if (operand == ValueKind::integer) return {};
  return fmt::format("'{}' needs an int, got a string", op_text(op));
}

std::string binary_type_error(Op op, ValueKind lhs, ValueKind rhs) {
  if (op == Op::eq || op == Op::ne) {
    if (lhs == rhs) return {};
    return fmt::format("'{}' compares {} with {}", op_text(op), describe(lhs), describe(rhs));
  }
  if (lhs == ValueKind::integer && rhs == ValueKind::integer) return {};
  const bool is_cmp = op == Op::lt || op == Op::le || op == Op::gt || op == Op::ge;
  if (is_cmp && lhs == ValueKind::string && rhs == ValueKind::string)
    return fmt::format("'{}' cannot order strings (strings compare only with == and !=)",
                       op_text(op));
  return fmt::format("'{}' needs ints, got {} and {}", op_text(op), describe(lhs), describe(rhs));
}

result<ValueKind> check_node(const ExprNode& n, const Expr::KindLookup& lookup) {
  switch (n.kind) {
    case ExprNode::Kind::integer:
      return ValueKind::integer;
    case ExprNode::Kind::string:
      return ValueKind::string;
    case ExprNode::Kind::name: {
      auto kind = lookup(n.sval);
      if (!kind) return fail("", 0, n.column, fmt::format("unknown name '{}'", n.sval));
      return *kind;
    }
    case ExprNode::Kind::unary: {
      auto operand = check_node(*n.lhs, lookup);
      if (!operand) return operand;
      if (auto msg = unary_type_error(n.op, *operand); !msg.empty())
        return fail("", 0, n.column, std::move(msg));
      return ValueKind::integer;
    }
    case ExprNode::Kind::binary: {
      auto lhs = check_node(*n.lhs, lookup);
      if (!lhs) return lhs;
      auto rhs = check_node(*n.rhs, lookup);
      if (!rhs) return rhs;
      if (auto msg = binary_type_error(n.op, *lhs, *rhs); !msg.empty())
        return fail("", 0, n.column, std::move(msg));
      return ValueKind::integer;
    }
  }
  return ValueKind::integer;
}

// A value during evaluation: an int, or a pointer to a string that outlives it (a literal in
// the tree or a bound param value), so evaluation copies no strings.
struct Value {
  bool is_string = false;
  std::int64_t i = 0;
  const std::string* s = nullptr;
  ValueKind kind() const { return is_string ? ValueKind::string : ValueKind::integer; }
};

class Evaluator {
 public:
  Evaluator(const Expr& e, std::span<const ParamValue* const> values) : e_(e), values_(values) {}

  bool eval(const ExprNode& n, Value& out) {
    switch (n.kind) {
      case ExprNode::Kind::integer:
        out = Value{false, n.ival, nullptr};
        return true;
      case ExprNode::Kind::string:
        out = Value{true, 0, &n.sval};
        return true;
      case ExprNode::Kind::name: {
        const auto idx = static_cast<std::size_t>(n.name_index);
        const ParamValue* v = idx < values_.size() ? values_[idx] : nullptr;
        if (v == nullptr) return error(n.column, fmt::format("unknown name '{}'", n.sval));
        out = v->is_int() ? Value{false, v->as_int(), nullptr} : Value{true, 0, &v->as_string()};
        return true;
      }
      case ExprNode::Kind::unary: {
        Value a;
        if (!eval(*n.lhs, a)) return false;
        if (auto msg = unary_type_error(n.op, a.kind()); !msg.empty())
          return error(n.column, std::move(msg));
        if (n.op == Op::lnot) {
          out = Value{false, a.i == 0 ? 1 : 0, nullptr};
          return true;
        }
        if (a.i == std::numeric_limits<std::int64_t>::min()) return overflow(n, "-", a.i);
        out = Value{false, -a.i, nullptr};
        return true;
      }
      case ExprNode::Kind::binary:
        return eval_binary(n, out);
    }
    return false;
  }

  const diagnostic& err() const { return err_; }

 private:
  bool error(int column, std::string message) {
    err_ = diagnostic{"", 0, column, std::move(message)};
    return false;
  }
  bool overflow(const ExprNode& n, std::string_view what, std::int64_t a, std::int64_t b = 0) {
    const std::string calc = n.kind == ExprNode::Kind::unary ? fmt::format("-({})", a)
                                                             : fmt::format("{} {} {}", a, what, b);
    return error(n.column, fmt::format("integer overflow in '{}': {} does not fit in 64 bits",
                                       e_.text(), calc));
  }

  bool eval_binary(const ExprNode& n, Value& out) {
    Value a;
    if (!eval(*n.lhs, a)) return false;
    if (n.op == Op::land || n.op == Op::lor) {
      if (a.is_string)
        return error(n.column, binary_type_error(n.op, a.kind(), ValueKind::integer));
      const bool left = a.i != 0;
      if (n.op == Op::land ? !left : left) {
        out = Value{false, left ? 1 : 0, nullptr};
        return true;
      }
      Value b;
      if (!eval(*n.rhs, b)) return false;
      if (b.is_string) return error(n.column, binary_type_error(n.op, a.kind(), b.kind()));
      out = Value{false, b.i != 0 ? 1 : 0, nullptr};
      return true;
    }
    Value b;
    if (!eval(*n.rhs, b)) return false;
    if (auto msg = binary_type_error(n.op, a.kind(), b.kind()); !msg.empty())
      return error(n.column, std::move(msg));
    if (a.is_string) {  // == or != on two strings
      const bool same = *a.s == *b.s;
      out = Value{false, (n.op == Op::eq) == same ? 1 : 0, nullptr};
      return true;
    }
    std::int64_t r = 0;
    switch (n.op) {
      case Op::add:
        if (__builtin_add_overflow(a.i, b.i, &r)) return overflow(n, "+", a.i, b.i);
        break;
      case Op::sub:
        if (__builtin_sub_overflow(a.i, b.i, &r)) return overflow(n, "-", a.i, b.i);
        break;
      case Op::mul:
        if (__builtin_mul_overflow(a.i, b.i, &r)) return overflow(n, "*", a.i, b.i);
        break;
      case Op::div:
      case Op::mod: {
        const std::string_view sym = op_text(n.op);
        if (b.i == 0)
          return error(n.column, fmt::format("{} by zero in '{}'",
                                             n.op == Op::div ? "division" : "modulo", e_.text()));
        if (a.i == std::numeric_limits<std::int64_t>::min() && b.i == -1)
          return overflow(n, sym, a.i, b.i);
        r = n.op == Op::div ? a.i / b.i : a.i % b.i;
        break;
      }
      case Op::lt:
        r = a.i < b.i;
        break;
      case Op::le:
        r = a.i <= b.i;
        break;
      case Op::gt:
        r = a.i > b.i;
        break;
      case Op::ge:
        r = a.i >= b.i;
        break;
      case Op::eq:
        r = a.i == b.i;
        break;
      case Op::ne:
        r = a.i != b.i;
        break;
      default:
        break;
    }
    out = Value{false, r, nullptr};
    return true;
  }

  const Expr& e_;
  std::span<const ParamValue* const> values_;
  diagnostic err_;
};

}  // namespace

std::string Expr::canonical() const {
  std::string out;
  if (root_) canonical_into(*root_, out);
  return out;
}

result<ValueKind> Expr::check(const KindLookup& lookup) const {
  if (!root_) return fail("", 0, 1, "the expression is empty");
  return check_node(*root_, lookup);
}

result<ParamValue> Expr::eval_bound(std::span<const ParamValue* const> values) const {
  if (!root_) return fail("", 0, 1, "the expression is empty");
  Evaluator ev(*this, values);
  Value v;
  if (!ev.eval(*root_, v)) return fail(ev.err());
  if (v.is_string) return ParamValue(*v.s);
  return ParamValue(v.i);
}

result<bool> Expr::test_bound(std::span<const ParamValue* const> values) const {
  if (!root_) return fail("", 0, 1, "the expression is empty");
  Evaluator ev(*this, values);
  Value v;
  if (!ev.eval(*root_, v)) return fail(ev.err());
  if (v.is_string)
    return fail("", 0, 1, fmt::format("'{}' is a string, expected a condition", text_));
  return v.i != 0;
}

namespace {
std::vector<const ParamValue*> resolve(const std::vector<std::string>& names,
                                       const Expr::Lookup& lookup) {
  std::vector<const ParamValue*> values;
  values.reserve(names.size());
  for (const auto& name : names)
    values.push_back(lookup(name));
  return values;
}
}  // namespace

result<ParamValue> Expr::eval(const Lookup& lookup) const {
  return eval_bound(resolve(names_, lookup));
}

result<bool> Expr::test(const Lookup& lookup) const {
  return test_bound(resolve(names_, lookup));
}

}  // namespace tune
