// Numeric environment variables (tuner/core/base/env_number.hpp) and their readers.
#include <tuner/core/base/env_number.hpp>

#include <cstdlib>

#include <gtest/gtest.h>

#include <tuner/core/build/kernel_cache.hpp>
#include <tuner/core/search/compile_ahead.hpp>
#include <tuner/core/store/store.hpp>

namespace tune {
namespace {

class EnvNumberTest : public ::testing::Test {
 protected:
  void TearDown() override {
    ::unsetenv("TUNE_TEST_NUMBER");
    ::unsetenv("TUNE_TEST_WARNED");
    ::unsetenv("TUNE_REMOTE_STORE_TIMEOUT");
    ::unsetenv("TUNE_COMPILE_JOBS");
    ::unsetenv("TUNE_CACHE_DIR");
  }
};

TEST_F(EnvNumberTest, OnlyFiniteNumbersInRangeAreUsed) {
  EXPECT_EQ(env_number("TUNE_TEST_NUMBER", 0.1, 3600), std::nullopt);
  ::setenv("TUNE_TEST_NUMBER", "2.5", 1);
  EXPECT_EQ(env_number("TUNE_TEST_NUMBER", 0.1, 3600), 2.5);
  // Plain decimal only: hexadecimal (`0x10` read as 16) and blanks were taken.
  for (const char* bad :
       {"inf", "nan", "1e17", "0", "-1", "abc", "2.5s", " ", "0x10", " 3", "3 ", "1e", "-", "."}) {
    ::setenv("TUNE_TEST_NUMBER", bad, 1);
    EXPECT_EQ(env_number("TUNE_TEST_NUMBER", 0.1, 3600), std::nullopt) << bad;
  }
  ::setenv("TUNE_TEST_NUMBER", "8", 1);
  EXPECT_EQ(env_whole_number("TUNE_TEST_NUMBER", 1, 1024), 8);
  for (const char* bad : {"8.5", "0", "1025", "99999999999999999999", "x", "0x8", " 8", "+8"}) {
    ::setenv("TUNE_TEST_NUMBER", bad, 1);
    EXPECT_EQ(env_whole_number("TUNE_TEST_NUMBER", 1, 1024), std::nullopt) << bad;
  }
}

TEST(ParseDecimal, PlainDecimalTextOnly) {
  EXPECT_EQ(parse_decimal("7"), 7.0);
  EXPECT_EQ(parse_decimal("-2.5e3"), -2500.0);
  EXPECT_EQ(parse_decimal(".5"), 0.5);
  EXPECT_EQ(parse_decimal("5."), 5.0);
  EXPECT_EQ(parse_decimal("1E+2"), 100.0);
  // Too small for a double is in range (nearly 0), where strtod's ERANGE made it "not a number".
  EXPECT_TRUE(parse_decimal("1e-320").has_value());
  EXPECT_EQ(parse_decimal("1e-400"), 0.0);
  for (const char* bad : {"", " 7", "7 ", "0x1p4", "0x10", "inf", "nan", "1e400", "+7", "1e", "e5",
                          "1_0", "\xef\xbc\x91\xef\xbc\x90"})
    EXPECT_EQ(parse_decimal(bad), std::nullopt) << bad;
  EXPECT_EQ(parse_whole("-12"), -12);
  for (const char* bad : {"", "-", "1.0", "0x8", " 8", "8 ", "+8", "99999999999999999999"})
    EXPECT_EQ(parse_whole(bad), std::nullopt) << bad;
}

TEST_F(EnvNumberTest, TheWarningNamesTheVariableOnce) {
  ::setenv("TUNE_TEST_WARNED", "inf\x1b[2J", 1);
  ::testing::internal::CaptureStderr();
  (void)env_number("TUNE_TEST_WARNED", 0.1, 3600);
  (void)env_number("TUNE_TEST_WARNED", 0.1, 3600);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err,
            "tune: warning: TUNE_TEST_WARNED='inf\\x1b[2J' is not a number in [0.1, 3600]; the "
            "default is used\n");
}

TEST_F(EnvNumberTest, AnInfiniteStoreTimeoutKeepsTheDefault) {
  for (const char* bad : {"inf", "1e17", "nan", "0", "-1", "abc"}) {
    ::setenv("TUNE_REMOTE_STORE_TIMEOUT", bad, 1);
    const HttpOptions o = http_options_from_env();
    EXPECT_EQ(o.timeout_s, 30) << bad;
    EXPECT_EQ(o.connect_timeout_s, 3) << bad;
  }
  ::setenv("TUNE_REMOTE_STORE_TIMEOUT", "2", 1);
  EXPECT_EQ(http_options_from_env().timeout_s, 2);
}

TEST_F(EnvNumberTest, CompileJobsOutOfRangeAreTheDefault) {
  ::setenv("TUNE_COMPILE_JOBS", "3", 1);
  EXPECT_EQ(compile_ahead_jobs(std::nullopt), 3);
  ::setenv("TUNE_COMPILE_JOBS", "0", 1);
  const int fallback = compile_ahead_jobs(std::nullopt);
  ::unsetenv("TUNE_COMPILE_JOBS");
  EXPECT_EQ(fallback, compile_ahead_jobs(std::nullopt));
}

TEST_F(EnvNumberTest, TheCacheDirectoryIsAbsoluteWhereverItIsRead) {
  // A relative TUNE_CACHE_DIR named another folder in each working directory (ninja's warm
  // steps run in the build tree, a user's `tuner run` elsewhere), and `~` a folder named `~`.
  namespace fs = std::filesystem;
  EXPECT_EQ(effective_cache_dir("/build/tune/cache"), fs::path("/build/tune/cache"));
  ::setenv("TUNE_CACHE_DIR", "relcache", 1);
  testing::internal::CaptureStderr();
  const fs::path relative = effective_cache_dir("/build/tune/cache");
  effective_cache_dir("/build/tune/cache");
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(relative, fs::current_path() / "relcache");
  EXPECT_EQ(said, "tune: note: TUNE_CACHE_DIR='relcache' is a relative path; using '" +
                      relative.string() +
                      "' (against this process's working directory: set an absolute path so "
                      "that every process uses one)\n");  // once
  const char* home = std::getenv("HOME");
  ASSERT_NE(home, nullptr);
  ::setenv("TUNE_CACHE_DIR", "~/cache", 1);
  EXPECT_EQ(effective_cache_dir("/x"), (fs::path(home) / "cache").lexically_normal());
  ::setenv("TUNE_CACHE_DIR", "/shared/./cache", 1);
  EXPECT_EQ(effective_cache_dir("/x"), fs::path("/shared/cache"));
  ::setenv("TUNE_CACHE_DIR", "", 1);
  EXPECT_EQ(effective_cache_dir("/x"), fs::path("/x"));
}

}  // namespace
}  // namespace tune
