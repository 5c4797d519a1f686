#include <tuner/core/base/cxx_names.hpp>

#include <gtest/gtest.h>

namespace tune {
namespace {

TEST(CxxNames, CxxIdentifier) {
  EXPECT_EQ(cxx_identifier("m<=512 & row"), "m_512_row");
  EXPECT_EQ(cxx_identifier("default"), "default_");
  EXPECT_EQ(cxx_identifier("1x\\"), "_1x_");
  EXPECT_EQ(cxx_identifier("_Xy\nz"), "b_Xy_z");
  EXPECT_EQ(cxx_identifier("a__b"), "a_b");
  EXPECT_EQ(cxx_identifier(""), "_");
  EXPECT_EQ(cxx_identifier("sm_90a"), "sm_90a");
  // Two kernel names, one identifier: the configure refuses the pair.
  EXPECT_EQ(cxx_identifier("sax-py"), cxx_identifier("sax_py"));
}

TEST(CxxNames, MacrosOfTheStandardHeadersAndTheCompilerGetASuffix) {
  // Each broke a generated header: `Bucket::NULL` is `Bucket::__null` after <cstddef>, and
  // `namespace tune_winners::linux` is `namespace tune_winners::1` under -std=gnu++17.
  for (const char* name : {"NULL", "EOF", "errno", "INT_MAX", "CHAR_BIT", "PTRDIFF_MAX", "linux",
                           "unix", "stdin", "assert", "offsetof", "SIGINT", "M_PI", "i386"}) {
    EXPECT_TRUE(is_predefined_macro(name)) << name;
    EXPECT_TRUE(is_reserved_cxx_name(name)) << name;
    EXPECT_EQ(cxx_identifier(name), std::string(name) + "_");
  }
  // Lookalikes stay as they are.
  for (const char* name :
       {"Null", "eof", "major", "minor", "BLOCK", "INT_MAX_", "SIGMA", "EPT", "M", "NULL2", ""}) {
    EXPECT_FALSE(is_predefined_macro(name)) << name;
  }
  EXPECT_EQ(cxx_identifier("NULL_"), "NULL_");
  EXPECT_TRUE(is_cxx_keyword("co_await"));
  EXPECT_FALSE(is_cxx_keyword("await"));
  EXPECT_FALSE(is_cxx_keyword("int int"));
  EXPECT_TRUE(is_reserved_cxx_name("__x"));
  EXPECT_TRUE(is_reserved_cxx_name("_X"));
  EXPECT_FALSE(is_reserved_cxx_name("_x"));
}

TEST(CxxNames, ANamespaceOfGeneratedCodeIsIdentifiersNoneOfThemReserved) {
  EXPECT_EQ(cxx_namespace_problem("app::winners"), std::nullopt);
  EXPECT_EQ(cxx_namespace_problem("tune_winners::sax_py"), std::nullopt);
  EXPECT_EQ(cxx_namespace_problem("app::linux"),
            "'linux' is a C++ keyword, a macro of the standard headers or the compiler, or a "
            "reserved name");
  EXPECT_EQ(cxx_namespace_problem("int"),
            "'int' is a C++ keyword, a macro of the standard headers or the compiler, or a "
            "reserved name");
  for (const char* bad : {"", "a::", "::a", "a:::b", "tune_winners::sax-py", "1a", "a b"})
    EXPECT_EQ(cxx_namespace_problem(bad), "it is not C++ identifiers joined by '::'") << bad;
}

}  // namespace
}  // namespace tune
