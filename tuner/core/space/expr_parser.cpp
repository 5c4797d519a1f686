// The expression language's reader: a lexer over the text and a recursive-descent parser that
// builds the tree (expr_node.hpp), refusing what is too deep to walk. The grammar and its
// precedence are in expr.hpp; checking, evaluation and the normal form are in expr.cpp.
#include <tuner/core/space/expr.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <utility>

#include <fmt/core.h>

#include <tuner/core/space/expr_node.hpp>

namespace tune {

using detail::ExprNode;
using detail::Op;

namespace {

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
    const std::size_t start = pos_;
    bool ok = true;
    if (pos_ >= text_.size())
      t.kind = Tok::end;
    else if (std::isdigit(static_cast<unsigned char>(text_[pos_])) != 0)
      ok = lex_number(t);
    else if (is_name_start(text_[pos_]))
      lex_name(t);
    else if (text_[pos_] == '\'' || text_[pos_] == '"')
      ok = lex_string(t);
    else
      ok = lex_operator(t);
    if (!ok) return false;
    t.text = text_.substr(start, pos_ - start);
    tok_ = std::move(t);
    return true;
  }

  // Decimal digits; letters run into the token so that `12ab` is one bad number.
  bool lex_number(Token& t) {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && is_name_char(text_[pos_]))
      ++pos_;
    t.kind = Tok::integer;
    const std::string_view text = text_.substr(start, pos_ - start);
    for (char d : text)
      if (std::isdigit(static_cast<unsigned char>(d)) == 0)
        return error(t.column, fmt::format("'{}' is not a number (expected decimal digits)", text));
    return true;
  }

  void lex_name(Token& t) {
    while (pos_ < text_.size() && is_name_char(text_[pos_]))
      ++pos_;
    t.kind = Tok::name;
  }

  // A string in single or double quotes, without escapes: it ends at the next same quote.
  bool lex_string(Token& t) {
    const char quote = text_[pos_];
    const std::size_t close = text_.find(quote, pos_ + 1);
    if (close == std::string_view::npos)
      return error(t.column,
                   fmt::format("string literal is never closed (expected a closing {})", quote));
    t.kind = Tok::string;
    t.value = std::string(text_.substr(pos_ + 1, close - pos_ - 1));
    if (!valid_utf8(t.value)) return error(t.column, "string literal is not valid UTF-8");
    pos_ = close + 1;
    return true;
  }

  // Parentheses and operators; a lone '=', '&' or '|' offers the operator it likely meant.
  bool lex_operator(Token& t) {
    const std::size_t start = pos_;
    const char c = text_[pos_];
    auto two = [&](char next) { return pos_ + 1 < text_.size() && text_[pos_ + 1] == next; };
    auto op = [&](Op o, std::size_t len) {
      t.kind = Tok::op;
      t.op = o;
      pos_ += len;
    };
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

}  // namespace tune
