// Internal to tune_core (not installed): the tree an Expr holds. The parser (expr_parser.cpp)
// builds it; checking, evaluation and the normal form (expr.cpp) walk it, and expr_cxx.cpp
// translates it into C++, reading the parse as it is instead of parsing the canonical text a
// second time. Other code goes through Expr's API.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace tune::detail {

/// The operators of the expression language (expr.hpp); `neg` and `lnot` are unary.
enum class Op {
  neg,
  lnot,
  add,
  sub,
  mul,
  div,
  mod,
  lt,
  le,
  gt,
  ge,
  eq,
  ne,
  land,
  lor,
};

/// The operator as written: "-", "!", "+", "<=", "&&", ...
std::string_view op_text(Op op);

/// One node of a parsed expression: a literal, a name, or an operator over its operands.
struct ExprNode {
  enum class Kind { integer, string, name, unary, binary };
  Kind kind = Kind::integer;
  Op op = Op::neg;
  std::int64_t ival = 0;
  std::string sval;    // string literal, or the name
  int name_index = 0;  // into Expr::names()
  int column = 0;      // of the literal, the name or the operator
  int height = 1;      // of the subtree: evaluation and printing recurse this deep
  std::unique_ptr<ExprNode> lhs;
  std::unique_ptr<ExprNode> rhs;  // the operand of a unary node is lhs
};

}  // namespace tune::detail
