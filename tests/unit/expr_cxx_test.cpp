#include <tuner/core/space/expr_cxx.hpp>

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace tune {
namespace {

/// `text` in C++, with ORDER, LAYOUT and MODE the string shape names.
std::string cxx(std::string_view text) {
  static const std::set<std::string, std::less<>> strings = {"ORDER", "LAYOUT", "MODE"};
  auto kinds = [](std::string_view name) -> std::optional<ValueKind> {
    return strings.count(name) ? ValueKind::string : ValueKind::integer;
  };
  result<std::string> out = expr_to_cxx(Expr::parse(text).value(), kinds);
  return out ? *out : "error: " + out.error().message;
}

TEST(ExprCxx, LiteralsAndNames) {
  EXPECT_EQ(cxx("42"), "std::int64_t{42}");
  EXPECT_EQ(cxx("9223372036854775807"), "std::int64_t{9223372036854775807}");
  EXPECT_EQ(cxx("M"), "s.M");
  EXPECT_EQ(cxx("'row'"), R"(std::string_view{"row"})");
  EXPECT_EQ(cxx(R"("it's")"), R"(std::string_view{"it's"})");
}

TEST(ExprCxx, CheckedArithmetic) {
  EXPECT_EQ(cxx("a + b"), "::tune_winners::detail::add(s.a, s.b, ok)");
  EXPECT_EQ(cxx("a - b"), "::tune_winners::detail::sub(s.a, s.b, ok)");
  EXPECT_EQ(cxx("a * b"), "::tune_winners::detail::mul(s.a, s.b, ok)");
  EXPECT_EQ(cxx("a / b"), "::tune_winners::detail::div(s.a, s.b, ok)");
  EXPECT_EQ(cxx("a % b"), "::tune_winners::detail::mod(s.a, s.b, ok)");
  EXPECT_EQ(cxx("a + b * c - 1"),
            "::tune_winners::detail::sub(::tune_winners::detail::add(s.a, "
            "::tune_winners::detail::mul(s.b, s.c, ok), ok), std::int64_t{1}, ok)");
}

TEST(ExprCxx, ComparisonsAreInts) {
  EXPECT_EQ(cxx("a < b"), "static_cast<std::int64_t>(s.a < s.b)");
  EXPECT_EQ(cxx("a <= b"), "static_cast<std::int64_t>(s.a <= s.b)");
  EXPECT_EQ(cxx("a > b"), "static_cast<std::int64_t>(s.a > s.b)");
  EXPECT_EQ(cxx("a >= b"), "static_cast<std::int64_t>(s.a >= s.b)");
  EXPECT_EQ(cxx("a == b"), "static_cast<std::int64_t>(s.a == s.b)");
  EXPECT_EQ(cxx("a != b"), "static_cast<std::int64_t>(s.a != s.b)");
}

TEST(ExprCxx, LogicalOperatorsTestEachSideAgainstZero) {
  EXPECT_EQ(cxx("a && b"), "static_cast<std::int64_t>((s.a) != 0 && (s.b) != 0)");
  EXPECT_EQ(cxx("a || b"), "static_cast<std::int64_t>((s.a) != 0 || (s.b) != 0)");
  EXPECT_EQ(cxx("a || b && c"),
            "static_cast<std::int64_t>((s.a) != 0 || "
            "(static_cast<std::int64_t>((s.b) != 0 && (s.c) != 0)) != 0)");
}

TEST(ExprCxx, UnaryOperatorsNest) {
  EXPECT_EQ(cxx("-a"), "::tune_winners::detail::neg(s.a, ok)");
  EXPECT_EQ(cxx("!a"), "static_cast<std::int64_t>((s.a) == 0)");
  EXPECT_EQ(cxx("--a"), "::tune_winners::detail::neg(::tune_winners::detail::neg(s.a, ok), ok)");
  EXPECT_EQ(cxx("!-a"), "static_cast<std::int64_t>((::tune_winners::detail::neg(s.a, ok)) == 0)");
  EXPECT_EQ(cxx("-!a"), "::tune_winners::detail::neg(static_cast<std::int64_t>((s.a) == 0), ok)");
  EXPECT_EQ(cxx("!!(a < 2)"),
            "static_cast<std::int64_t>((static_cast<std::int64_t>("
            "(static_cast<std::int64_t>(s.a < std::int64_t{2})) == 0)) == 0)");
  EXPECT_EQ(cxx("-5"), "::tune_winners::detail::neg(std::int64_t{5}, ok)");
}

TEST(ExprCxx, StringsCompareAsStringViews) {
  EXPECT_EQ(cxx("ORDER == 'row'"),
            R"(static_cast<std::int64_t>(s.ORDER == std::string_view{"row"}))");
  EXPECT_EQ(cxx("'col' != LAYOUT"),
            R"(static_cast<std::int64_t>(std::string_view{"col"} != s.LAYOUT))");
  // Quotes and backslashes escaped, bytes outside printable ASCII as octal.
  EXPECT_EQ(cxx(R"(ORDER == 'r"o\w')"),
            R"(static_cast<std::int64_t>(s.ORDER == std::string_view{"r\"o\\w"}))");
  EXPECT_EQ(cxx("ORDER == '\xc3\xa9\x7f'"),
            R"(static_cast<std::int64_t>(s.ORDER == std::string_view{"\303\251\177"}))");
  EXPECT_EQ(cxx("ORDER == '\t'"),
            R"(static_cast<std::int64_t>(s.ORDER == std::string_view{"\011"}))");
}

TEST(ExprCxx, UnaryOverAStringIsRefused) {
  EXPECT_EQ(cxx("-ORDER"), "error: cannot translate '(-ORDER)' into C++");
  EXPECT_EQ(cxx("M > 1 && !'x'"), "error: cannot translate '((M > 1) && (!\"x\"))' into C++");
  EXPECT_EQ(cxx("!Expr"), "static_cast<std::int64_t>((s.Expr) == 0)");  // not a string name
}

TEST(ExprCxx, WithoutATreeIsRefused) {
  result<std::string> out =
      expr_to_cxx(Expr{}, [](std::string_view) -> std::optional<ValueKind> { return {}; });
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().message, "cannot translate '' into C++");
}

// The `when` predicates of the repository's header tests, as the winners header has them.
TEST(ExprCxx, WhenPredicatesEndToEnd) {
  EXPECT_EQ(cxx("M <= 512 && (ORDER == 'row' || ORDER == 'r\"ow')"),
            "static_cast<std::int64_t>((static_cast<std::int64_t>(s.M <= std::int64_t{512})) != 0 "
            "&& (static_cast<std::int64_t>((static_cast<std::int64_t>(s.ORDER == "
            "std::string_view{\"row\"})) != 0 || (static_cast<std::int64_t>(s.ORDER == "
            "std::string_view{\"r\\\"ow\"})) != 0)) != 0)");
  EXPECT_EQ(cxx("!(M / K < 2) && -M % 7 != 1"),
            "static_cast<std::int64_t>((static_cast<std::int64_t>((static_cast<std::int64_t>("
            "::tune_winners::detail::div(s.M, s.K, ok) < std::int64_t{2})) == 0)) != 0 && "
            "(static_cast<std::int64_t>(::tune_winners::detail::mod(::tune_winners::detail::neg(s."
            "M, ok), std::int64_t{7}, ok) "
            "!= std::int64_t{1})) != 0)");
  EXPECT_EQ(cxx("N <= 4096 && MODE == 'fast'"),
            "static_cast<std::int64_t>((static_cast<std::int64_t>(s.N <= std::int64_t{4096})) != "
            "0 && (static_cast<std::int64_t>(s.MODE == std::string_view{\"fast\"})) != 0)");
  EXPECT_EQ(
      cxx("N % 2 == 0 && -N / 1024 > -1048576"),
      "static_cast<std::int64_t>((static_cast<std::int64_t>(::tune_winners::detail::mod(s.N, "
      "std::int64_t{2}, ok) == std::int64_t{0})) != 0 && (static_cast<std::int64_t>("
      "::tune_winners::detail::div(::tune_winners::detail::neg(s.N, ok), std::int64_t{1024}, ok) > "
      "::tune_winners::detail::neg(std::int64_t{1048576}, ok))) != 0)");
}

TEST(ExprCxx, StringLiteral) {
  EXPECT_EQ(cxx_string_literal(""), R"("")");
  EXPECT_EQ(cxx_string_literal("a b"), R"("a b")");
  EXPECT_EQ(cxx_string_literal("\"\\\n"), R"("\"\\\012")");
  EXPECT_EQ(cxx_string_literal(std::string_view("\0x", 2)), R"("\000x")");
}

}  // namespace
}  // namespace tune
