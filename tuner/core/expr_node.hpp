// The syntax tree of a parsed Expr, internal to tune_core: expr.cpp builds, prints and
// evaluates it; expr_cxx.cpp translates it into C++. Other code goes through Expr's API; the
// tree is here, apart from expr.hpp, so that a walker outside expr.cpp reads the parse as it
// is instead of parsing the canonical text a second time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tune::detail {

/// An operator of the expression language; neg and lnot are the unary ones.
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

/// One node of the tree: a literal, a name, or an operator over its operands.
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
