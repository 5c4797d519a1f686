#include <tuner/core/expr.hpp>
#include <tuner/core/expr_node.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace tune {

using detail::ExprNode;
using detail::Op;

std::string_view describe(ValueKind kind) {
  return kind == ValueKind::integer ? "an int" : "a string";
}

namespace {

std::string_view op_text(Op op) {
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

bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (b < 0x80) {
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      len = 2, cp = b & 0x1Fu;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3, cp = b & 0x0Fu;
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4, cp = b & 0x07u;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3Fu);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      return false;
    i += len;
  }
  return true;
}

enum class Tok { end, integer, string, name, op, lparen, rparen };

struct Token {
  Tok kind = Tok::end;
  std::string_view text;  // as written (for messages)
  std::string value;      // the string literal's contents
  Op op = Op::add;
  int column = 0;
};

}  // namespace

/// Recursive descent over the token stream; see expr.hpp for the grammar's precedence.
class ExprParser {
 public:
  explicit ExprParser(std::string_view text) : text_(text) {}

  result<Expr> run() {
    Expr e;
    e.text_ = std::string(text_);
    expr_ = &e;
    if (text_.find_first_not_of(" \t\r\n") == std::string_view::npos)
      return fail("", 0, 1, "the expression is empty");
    if (!advance()) return fail(err_);
    auto root = parse_or();
    if (!root) return fail(err_);
    if (tok_.kind != Tok::end)
      return fail("", 0, tok_.column,
                  fmt::format("expected an operator or the end, found '{}'", tok_.text));
    e.root_ = std::move(root);
    return e;
  }

 private:
  bool error(int column, std::string message) {
    err_ = diagnostic{"", 0, column, std::move(message)};
    return false;
  }

  // Reads the next token into tok_; false (with err_ set) on a lexical error.
  bool advance() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])) != 0)
      ++pos_;
    Token t;
    t.column = static_cast<int>(pos_) + 1;
    if (pos_ >= text_.size()) {
      t.kind = Tok::end;
      tok_ = std::move(t);
      return true;
    }
    const std::size_t start = pos_;
    const char c = text_[pos_];
    auto two = [&](char next) { return pos_ + 1 < text_.size() && text_[pos_ + 1] == next; };
    auto op = [&](Op o, std::size_t len) {
      t.kind = Tok::op;
      t.op = o;
      pos_ += len;
    };
    if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      while (pos_ < text_.size() && is_name_char(text_[pos_]))
        ++pos_;
      t.kind = Tok::integer;
      t.text = text_.substr(start, pos_ - start);
      for (char d : t.text)
        if (std::isdigit(static_cast<unsigned char>(d)) == 0)
          return error(t.column,
                       fmt::format("'{}' is not a number (expected decimal digits)", t.text));
      tok_ = std::move(t);
      return true;
    }
    if (is_name_start(c)) {
      while (pos_ < text_.size() && is_name_char(text_[pos_]))
        ++pos_;
      t.kind = Tok::name;
      t.text = text_.substr(start, pos_ - start);
      tok_ = std::move(t);
      return true;
    }
    if (c == '\'' || c == '"') {
      const std::size_t close = text_.find(c, pos_ + 1);
      if (close == std::string_view::npos)
        return error(t.column,
                     fmt::format("string literal is never closed (expected a closing {})", c));
      t.kind = Tok::string;
      t.value = std::string(text_.substr(pos_ + 1, close - pos_ - 1));
      if (!valid_utf8(t.value)) return error(t.column, "string literal is not valid UTF-8");
      pos_ = close + 1;
      t.text = text_.substr(start, pos_ - start);
      tok_ = std::move(t);
      return true;
    }
    switch (c) {
      case '(':
        t.kind = Tok::lparen, ++pos_;
        break;
      case ')':
        t.kind = Tok::rparen, ++pos_;
        break;
      case '+':
        op(Op::add, 1);
        break;
      case '-':
        op(Op::sub, 1);
        break;
      case '*':
        op(Op::mul, 1);
        break;
      case '/':
        op(Op::div, 1);
        break;
      case '%':
        op(Op::mod, 1);
        break;
      case '<':
        two('=') ? op(Op::le, 2) : op(Op::lt, 1);
        break;
      case '>':
        two('=') ? op(Op::ge, 2) : op(Op::gt, 1);
        break;
      case '!':
        two('=') ? op(Op::ne, 2) : op(Op::lnot, 1);
        break;
      case '=':
        if (!two('=')) return error(t.column, "'=' is not an operator, did you mean '=='?");
        op(Op::eq, 2);
        break;
      case '&':
        if (!two('&')) return error(t.column, "'&' is not an operator, did you mean '&&'?");
        op(Op::land, 2);
        break;
      case '|':
        if (!two('|')) return error(t.column, "'|' is not an operator, did you mean '||'?");
        op(Op::lor, 2);
        break;
      default: {
        // Show the whole UTF-8 sequence of a non-ASCII character.
        std::size_t len = 1;
        while (start + len < text_.size() &&
               (static_cast<unsigned char>(text_[start + len]) & 0xC0) == 0x80)
          ++len;
        return error(t.column, fmt::format("unexpected character '{}'", text_.substr(start, len)));
      }
    }
    t.text = text_.substr(start, pos_ - start);
    tok_ = std::move(t);
    return true;
  }

  std::string found() const {
    return tok_.kind == Tok::end ? std::string("the end") : fmt::format("'{}'", tok_.text);
  }

  using NodePtr = std::unique_ptr<ExprNode>;

  NodePtr binary(Op op, int column, NodePtr lhs, NodePtr rhs) {
    auto n = std::make_unique<ExprNode>();
    n->kind = ExprNode::Kind::binary;
    n->op = op;
    n->column = column;
    n->height = 1 + std::max(lhs->height, rhs->height);
    n->lhs = std::move(lhs);
    n->rhs = std::move(rhs);
    return too_deep(*n) ? nullptr : std::move(n);
  }

  // Evaluation, printing and destruction recurse over the tree, and parsing over parentheses
  // and unary operators: a tree taller than max_expr_height, or parentheses and unary
  // operators nested deeper, are refused at the operator or parenthesis past the limit.
  bool too_deep(int height, int column) {
    if (height <= max_expr_height) return false;
    error(column, fmt::format("the expression nests deeper than {} levels; split it into "
                              "several prune entries or simplify it",
                              max_expr_height));
    return true;
  }
  bool too_deep(const ExprNode& n) { return too_deep(n.height, n.column); }

  // One precedence level: next (op next)*, for the ops in `ops`.
  template <class Next>
  NodePtr level(std::initializer_list<Op> ops, Next next) {
    NodePtr lhs = (this->*next)();
    if (!lhs) return nullptr;
    for (;;) {
      if (tok_.kind != Tok::op) return lhs;
      bool match = false;
      for (Op o : ops)
        match = match || o == tok_.op;
      if (!match) return lhs;
      const Op op = tok_.op;
      const int column = tok_.column;
      if (!advance()) return nullptr;
      NodePtr rhs = (this->*next)();
      if (!rhs) return nullptr;
      lhs = binary(op, column, std::move(lhs), std::move(rhs));
      if (!lhs) return nullptr;
    }
  }

  NodePtr parse_or() { return level({Op::lor}, &ExprParser::parse_and); }
  NodePtr parse_and() { return level({Op::land}, &ExprParser::parse_eq); }
  NodePtr parse_eq() { return level({Op::eq, Op::ne}, &ExprParser::parse_rel); }
  NodePtr parse_rel() { return level({Op::lt, Op::le, Op::gt, Op::ge}, &ExprParser::parse_add); }
  NodePtr parse_add() { return level({Op::add, Op::sub}, &ExprParser::parse_mul); }
  NodePtr parse_mul() { return level({Op::mul, Op::div, Op::mod}, &ExprParser::parse_unary); }

  // A chain of unary operators is read in a loop (a long chain is refused at its 128th
  // operator, before any recursion), then built from the inside out.
  NodePtr parse_unary() {
    std::vector<std::pair<Op, int>> ops;
    while (tok_.kind == Tok::op && (tok_.op == Op::sub || tok_.op == Op::lnot)) {
      if (too_deep(static_cast<int>(ops.size()) + 2, tok_.column)) return nullptr;
      ops.emplace_back(tok_.op == Op::sub ? Op::neg : Op::lnot, tok_.column);
      if (!advance()) return nullptr;
    }
    NodePtr operand = parse_primary();
    if (!operand) return nullptr;
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      auto n = std::make_unique<ExprNode>();
      n->kind = ExprNode::Kind::unary;
      n->op = it->first;
      n->column = it->second;
      n->height = 1 + operand->height;
      n->lhs = std::move(operand);
      if (too_deep(*n)) return nullptr;
      operand = std::move(n);
    }
    return operand;
  }

  NodePtr parse_primary() {
    auto n = std::make_unique<ExprNode>();
    n->column = tok_.column;
    switch (tok_.kind) {
      case Tok::integer: {
        std::int64_t v = 0;
        for (char d : tok_.text) {
          if (__builtin_mul_overflow(v, std::int64_t{10}, &v) ||
              __builtin_add_overflow(v, std::int64_t{d - '0'}, &v)) {
            error(tok_.column,
                  fmt::format("integer literal '{}' does not fit in 64 bits", tok_.text));
            return nullptr;
          }
        }
        n->kind = ExprNode::Kind::integer;
        n->ival = v;
        break;
      }
      case Tok::string:
        n->kind = ExprNode::Kind::string;
        n->sval = tok_.value;
        break;
      case Tok::name: {
        n->kind = ExprNode::Kind::name;
        n->sval = std::string(tok_.text);
        auto& names = expr_->names_;
        std::size_t i = 0;
        while (i < names.size() && names[i] != n->sval)
          ++i;
        if (i == names.size()) {
          names.push_back(n->sval);
          expr_->name_columns_.push_back(tok_.column);
        }
        n->name_index = static_cast<int>(i);
        break;
      }
      case Tok::lparen: {
        if (too_deep(++depth_, tok_.column)) return nullptr;
        if (!advance()) return nullptr;
        NodePtr inner = parse_or();
        --depth_;
        if (!inner) return nullptr;
        if (tok_.kind != Tok::rparen) {
          error(tok_.column, fmt::format("expected ')' to close '(', found {}", found()));
          return nullptr;
        }
        if (!advance()) return nullptr;
        return inner;
      }
      default:
        error(tok_.column,
              fmt::format("expected a number, a name, a string or '(', found {}", found()));
        return nullptr;
    }
    if (!advance()) return nullptr;
    return n;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;  // parentheses open around the current token
  Token tok_;
  diagnostic err_;
  Expr* expr_ = nullptr;
};

result<Expr> Expr::parse(std::string_view text) {
  return ExprParser(text).run();
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
