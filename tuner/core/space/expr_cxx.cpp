#include <tuner/core/space/expr_cxx.hpp>
#include <tuner/core/space/expr_node.hpp>

#include <fmt/core.h>

namespace tune {

using detail::ExprNode;
using detail::Op;

std::string cxx_string_literal(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {
      out += fmt::format("\\{:03o}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

namespace {

/// How an operator is written in C++: a checked helper of tune_winners::detail, or a C++
/// operator whose bool result becomes an int.
struct CxxOp {
  enum class Form { helper, compare, logical } form;
  std::string_view text;  // the helper's name, or the C++ operator
};

CxxOp cxx_op(Op op) {
  using F = CxxOp::Form;
  switch (op) {
    case Op::neg:
      return {F::helper, "neg"};
    case Op::lnot:
      return {F::logical, "!"};
    case Op::add:
      return {F::helper, "add"};
    case Op::sub:
      return {F::helper, "sub"};
    case Op::mul:
      return {F::helper, "mul"};
    case Op::div:
      return {F::helper, "div"};
    case Op::mod:
      return {F::helper, "mod"};
    case Op::lt:
      return {F::compare, "<"};
    case Op::le:
      return {F::compare, "<="};
    case Op::gt:
      return {F::compare, ">"};
    case Op::ge:
      return {F::compare, ">="};
    case Op::eq:
      return {F::compare, "=="};
    case Op::ne:
      return {F::compare, "!="};
    case Op::land:
      return {F::logical, "&&"};
    case Op::lor:
      return {F::logical, "||"};
  }
  return {F::compare, "?"};
}

/// One node's C++; false (nothing translated) for a unary operator over a string.
class Translator {
 public:
  explicit Translator(const Expr::KindLookup& kinds) : kinds_(kinds) {}

  bool node(const ExprNode& n, std::string& out, ValueKind& kind) {
    kind = ValueKind::integer;
    switch (n.kind) {
      case ExprNode::Kind::integer:
        out = fmt::format("std::int64_t{{{}}}", n.ival);
        return true;
      case ExprNode::Kind::string:
        out = fmt::format("std::string_view{{{}}}", cxx_string_literal(n.sval));
        kind = ValueKind::string;
        return true;
      case ExprNode::Kind::name:
        out = "s." + n.sval;
        kind = kinds_(n.sval).value_or(ValueKind::integer);
        return true;
      case ExprNode::Kind::unary:
        return unary(n, out);
      case ExprNode::Kind::binary:
        return binary(n, out);
    }
    return false;
  }

 private:
  bool unary(const ExprNode& n, std::string& out) {
    std::string operand;
    ValueKind kind = ValueKind::integer;
    if (!node(*n.lhs, operand, kind) || kind != ValueKind::integer) return false;
    out = n.op == Op::neg ? fmt::format("::tune_winners::detail::neg({}, ok)", operand)
                          : fmt::format("static_cast<std::int64_t>(({}) == 0)", operand);
    return true;
  }

  // Operands of binary operators are not type-checked here: Expr::check does that, and C++
  // would refuse a mismatch at compile time.
  bool binary(const ExprNode& n, std::string& out) {
    std::string lhs, rhs;
    ValueKind lkind = ValueKind::integer, rkind = ValueKind::integer;
    if (!node(*n.lhs, lhs, lkind) || !node(*n.rhs, rhs, rkind)) return false;
    const CxxOp op = cxx_op(n.op);
    switch (op.form) {
      case CxxOp::Form::helper:
        out = fmt::format("::tune_winners::detail::{}({}, {}, ok)", op.text, lhs, rhs);
        break;
      case CxxOp::Form::compare:
        out = fmt::format("static_cast<std::int64_t>({} {} {})", lhs, op.text, rhs);
        break;
      case CxxOp::Form::logical:
        out = fmt::format("static_cast<std::int64_t>(({}) != 0 {} ({}) != 0)", lhs, op.text, rhs);
        break;
    }
    return true;
  }

  const Expr::KindLookup& kinds_;
};

}  // namespace

result<std::string> expr_to_cxx(const Expr& expr, const Expr::KindLookup& kinds) {
  std::string out;
  ValueKind kind = ValueKind::integer;
  if (expr.root() == nullptr || !Translator(kinds).node(*expr.root(), out, kind))
    return fail("", 0, 0, fmt::format("cannot translate '{}' into C++", expr.canonical()));
  return out;
}

}  // namespace tune
