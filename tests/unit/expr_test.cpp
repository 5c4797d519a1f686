#include <tuner/core/space/expr.hpp>

#include <limits>
#include <map>

#include <gtest/gtest.h>

namespace tune {
namespace {

using Values = std::map<std::string, ParamValue, std::less<>>;

Expr::Lookup lookup_in(const Values& values) {
  return [&values](std::string_view name) -> const ParamValue* {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  };
}

ParamValue eval(std::string_view text, const Values& values = {}) {
  return Expr::parse(text).value().eval(lookup_in(values)).value();
}

std::int64_t eval_int(std::string_view text, const Values& values = {}) {
  return eval(text, values).as_int();
}

/// The parse error as "column: message".
std::string parse_error(std::string_view text) {
  auto e = Expr::parse(text);
  if (e) return "parsed";
  return std::to_string(e.error().column) + ": " + e.error().message;
}

/// The evaluation error as "column: message".
std::string eval_error(std::string_view text, const Values& values = {}) {
  auto r = Expr::parse(text).value().eval(lookup_in(values));
  if (r) return "evaluated";
  EXPECT_TRUE(r.error().path.empty());
  EXPECT_EQ(r.error().line, 0);
  return std::to_string(r.error().column) + ": " + r.error().message;
}

TEST(ExprTest, IntegerArithmetic) {
  EXPECT_EQ(eval_int("1 + 2 * 3"), 7);
  EXPECT_EQ(eval_int("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval_int("10 - 4 - 3"), 3);  // left associative
  EXPECT_EQ(eval_int("100 / 10 / 5"), 2);
  EXPECT_EQ(eval_int("17 % 5"), 2);
  EXPECT_EQ(eval_int("-3 * -4"), 12);
  EXPECT_EQ(eval_int("--5"), 5);
  EXPECT_EQ(eval_int("2 * -(3 + 4)"), -14);
}

TEST(ExprTest, DivisionAndModuloFollowC) {
  EXPECT_EQ(eval_int("-7 / 2"), -3);  // truncates toward zero
  EXPECT_EQ(eval_int("7 / -2"), -3);
  EXPECT_EQ(eval_int("-7 % 2"), -1);  // sign of the left operand
  EXPECT_EQ(eval_int("7 % -2"), 1);
  EXPECT_EQ(eval_int("-7 % -2"), -1);
}

TEST(ExprTest, Precedence) {
  // * binds tighter than +, + tighter than <, < tighter than ==, == tighter than &&, && tighter
  // than ||.
  EXPECT_EQ(eval_int("1 + 2 < 4"), 1);
  EXPECT_EQ(eval_int("1 < 2 == 1"), 1);
  EXPECT_EQ(eval_int("1 == 1 && 0"), 0);
  EXPECT_EQ(eval_int("1 || 0 && 0"), 1);  // 1 || (0 && 0)
  EXPECT_EQ(eval_int("(1 || 0) && 0"), 0);
  EXPECT_EQ(eval_int("!0 + 1"), 2);  // unary binds tightest
  EXPECT_EQ(eval_int("!(0 + 1)"), 0);
  EXPECT_EQ(eval_int("2 + 3 * 4 % 5"), 4);  // 2 + ((3 * 4) % 5)
}

TEST(ExprTest, ComparisonsAndLogic) {
  EXPECT_EQ(eval_int("3 <= 3"), 1);
  EXPECT_EQ(eval_int("3 < 3"), 0);
  EXPECT_EQ(eval_int("4 >= 5"), 0);
  EXPECT_EQ(eval_int("5 > 4"), 1);
  EXPECT_EQ(eval_int("5 != 4"), 1);
  EXPECT_EQ(eval_int("7 && 3"), 1);  // truth values are 0 and 1
  EXPECT_EQ(eval_int("0 || 0"), 0);
  EXPECT_EQ(eval_int("!7"), 0);
}

TEST(ExprTest, ShortCircuitSkipsTheRightSide) {
  EXPECT_EQ(eval_int("0 && 1 / 0"), 0);
  EXPECT_EQ(eval_int("1 || 1 / 0"), 1);
  EXPECT_EQ(eval_error("1 && 1 / 0"), "8: division by zero in '1 && 1 / 0'");
}

TEST(ExprTest, Names) {
  Values v{{"BM", 128}, {"BN", 64}, {"LAYOUT", "row"}};
  EXPECT_EQ(eval_int("BM * BN <= 32768", v), 1);
  EXPECT_EQ(eval_int("BM * BN * 8 <= 32768", v), 0);
  EXPECT_EQ(eval_int("LAYOUT == 'row' || BM < 4", v), 1);
  auto e = Expr::parse("BM + BN * BM - X_1").value();
  EXPECT_EQ(e.names(), (std::vector<std::string>{"BM", "BN", "X_1"}));
  EXPECT_EQ(e.name_column("BM"), 1);
  EXPECT_EQ(e.name_column("BN"), 6);
  EXPECT_EQ(e.name_column("X_1"), 16);
  EXPECT_EQ(e.name_column("nope"), 0);
}

TEST(ExprTest, Strings) {
  Values v{{"LAYOUT", "row"}};
  EXPECT_EQ(eval_int("LAYOUT == 'row'", v), 1);
  EXPECT_EQ(eval_int("LAYOUT == \"row\"", v), 1);
  EXPECT_EQ(eval_int("LAYOUT != 'col'", v), 1);
  EXPECT_EQ(eval_int("'a' == 'a' && 'a' != 'b'"), 1);
  EXPECT_EQ(eval_int("\"it's\" == \"it's\""), 1);  // the other quote inside
  EXPECT_EQ(eval("LAYOUT", v), ParamValue("row"));
  EXPECT_EQ(eval("'x y'"), ParamValue("x y"));
}

TEST(ExprTest, TypeErrors) {
  Values v{{"LAYOUT", "row"}, {"BM", 64}};
  EXPECT_EQ(eval_error("LAYOUT == 4", v), "8: '==' compares a string with an int");
  EXPECT_EQ(eval_error("BM != 'x'", v), "4: '!=' compares an int with a string");
  EXPECT_EQ(eval_error("LAYOUT < 'z'", v),
            "8: '<' cannot order strings (strings compare only with == and !=)");
  EXPECT_EQ(eval_error("LAYOUT + 1", v), "8: '+' needs ints, got a string and an int");
  EXPECT_EQ(eval_error("-LAYOUT", v), "1: '-' needs an int, got a string");
  EXPECT_EQ(eval_error("!LAYOUT", v), "1: '!' needs an int, got a string");
  EXPECT_EQ(eval_error("LAYOUT && 1", v), "8: '&&' needs ints, got a string and an int");
  EXPECT_EQ(eval_error("1 || LAYOUT", v), "evaluated");  // short-circuit: never read
  EXPECT_EQ(eval_error("0 || LAYOUT", v), "3: '||' needs ints, got an int and a string");
}

TEST(ExprTest, TestRequiresACondition) {
  Values v{{"LAYOUT", "row"}};
  auto e = Expr::parse("LAYOUT").value();
  auto r = e.test(lookup_in(v));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "'LAYOUT' is a string, expected a condition");
  EXPECT_TRUE(Expr::parse("3").value().test(lookup_in(v)).value());
  EXPECT_FALSE(Expr::parse("0").value().test(lookup_in(v)).value());
}

TEST(ExprTest, DivisionByZeroNamesTheExpression) {
  Values v{{"BM", 64}, {"BN", 64}};
  EXPECT_EQ(eval_error("BM / (BN - 64)", v), "4: division by zero in 'BM / (BN - 64)'");
  EXPECT_EQ(eval_error("BM % (BN - 64) == 0", v), "4: modulo by zero in 'BM % (BN - 64) == 0'");
}

TEST(ExprTest, Overflow) {
  EXPECT_EQ(eval_int("9223372036854775807"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(parse_error("9223372036854775808"),
            "1: integer literal '9223372036854775808' does not fit in 64 bits");
  EXPECT_EQ(eval_error("9223372036854775807 + 1"),
            "21: integer overflow in '9223372036854775807 + 1': 9223372036854775807 + 1 does "
            "not fit in 64 bits");
  EXPECT_EQ(eval_error("4611686018427387904 * 2"),
            "21: integer overflow in '4611686018427387904 * 2': 4611686018427387904 * 2 does "
            "not fit in 64 bits");
  EXPECT_EQ(eval_error("-9223372036854775807 - 2"),
            "22: integer overflow in '-9223372036854775807 - 2': -9223372036854775807 - 2 does "
            "not fit in 64 bits");
  Values v{{"MIN", std::numeric_limits<std::int64_t>::min()}};
  EXPECT_EQ(eval_error("-MIN", v),
            "1: integer overflow in '-MIN': -(-9223372036854775808) does not fit in 64 bits");
  EXPECT_EQ(eval_error("MIN / -1", v),
            "5: integer overflow in 'MIN / -1': -9223372036854775808 / -1 does not fit in 64 "
            "bits");
  EXPECT_EQ(eval_error("MIN % -1", v),
            "5: integer overflow in 'MIN % -1': -9223372036854775808 % -1 does not fit in 64 "
            "bits");
}

TEST(ExprTest, ParseErrorsGiveTheColumn) {
  EXPECT_EQ(parse_error(""), "1: the expression is empty");
  EXPECT_EQ(parse_error("   "), "1: the expression is empty");
  EXPECT_EQ(parse_error("BM * <= 4"), "6: expected a number, a name, a string or '(', found '<='");
  EXPECT_EQ(parse_error("BM <"), "5: expected a number, a name, a string or '(', found the end");
  EXPECT_EQ(parse_error("(BM + 1"), "8: expected ')' to close '(', found the end");
  EXPECT_EQ(parse_error("(BM + 1 BN"), "9: expected ')' to close '(', found 'BN'");
  EXPECT_EQ(parse_error("BM BN"), "4: expected an operator or the end, found 'BN'");
  EXPECT_EQ(parse_error("BM )"), "4: expected an operator or the end, found ')'");
  EXPECT_EQ(parse_error("BM = 4"), "4: '=' is not an operator, did you mean '=='?");
  EXPECT_EQ(parse_error("A & B"), "3: '&' is not an operator, did you mean '&&'?");
  EXPECT_EQ(parse_error("A | B"), "3: '|' is not an operator, did you mean '||'?");
  EXPECT_EQ(parse_error("A == 'row"), "6: string literal is never closed (expected a closing ')");
  EXPECT_EQ(parse_error("A == \"row"), "6: string literal is never closed (expected a closing \")");
  EXPECT_EQ(parse_error("A $ B"), "3: unexpected character '$'");
  EXPECT_EQ(parse_error("A == é"), "6: unexpected character 'é'");
  EXPECT_EQ(parse_error("12ab"), "1: '12ab' is not a number (expected decimal digits)");
  EXPECT_EQ(parse_error("A >= 1.5"), "7: unexpected character '.'");
}

TEST(ExprTest, UnknownNameAtEvaluation) {
  EXPECT_EQ(eval_error("1 + NOPE"), "5: unknown name 'NOPE'");
}

TEST(ExprTest, CheckTypesWithoutEvaluating) {
  auto kinds = [](std::string_view name) -> std::optional<ValueKind> {
    if (name == "BM") return ValueKind::integer;
    if (name == "LAYOUT") return ValueKind::string;
    return std::nullopt;
  };
  EXPECT_EQ(Expr::parse("BM / 0 > 1").value().check(kinds).value(), ValueKind::integer);
  EXPECT_EQ(Expr::parse("LAYOUT").value().check(kinds).value(), ValueKind::string);
  auto bad = Expr::parse("1 || LAYOUT < 2").value().check(kinds);  // both sides checked
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().column, 13);
  EXPECT_EQ(bad.error().message, "'<' needs ints, got a string and an int");
  auto unknown = Expr::parse("BM + QQ").value().check(kinds);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().column, 6);
  EXPECT_EQ(unknown.error().message, "unknown name 'QQ'");
}

TEST(ExprTest, CanonicalFormIgnoresFormatting) {
  auto canon = [](std::string_view t) { return Expr::parse(t).value().canonical(); };
  EXPECT_EQ(canon("BM*BN<=32768"), "((BM * BN) <= 32768)");
  EXPECT_EQ(canon("  ( BM * BN )   <= 32768 "), canon("BM*BN<=32768"));
  EXPECT_EQ(canon("L == 'row'"), canon("L==\"row\""));
  EXPECT_EQ(canon("L == 'row'"), "(L == \"row\")");
  EXPECT_NE(canon("BM * BN <= 32768"), canon("BM * BN < 32768"));
  EXPECT_NE(canon("1 + 2 * 3"), canon("(1 + 2) * 3"));
  EXPECT_EQ(canon("-(!A)"), "(-(!A))");
}

TEST(ExprTest, BoundEvaluationMatchesLookup) {
  auto e = Expr::parse("A * B + A").value();
  ParamValue a(3);
  ParamValue b(5);
  std::vector<const ParamValue*> values{&a, &b};  // in names() order
  EXPECT_EQ(e.eval_bound(values).value(), ParamValue(18));
  EXPECT_TRUE(e.test_bound(values).value());
  std::vector<const ParamValue*> missing{&a, nullptr};
  EXPECT_EQ(e.eval_bound(missing).error().message, "unknown name 'B'");
}

}  // namespace
}  // namespace tune
