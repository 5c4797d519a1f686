// The [search] keys of a re-tune and of compile cost (docs/search.md "Re-tunes start from what
// was measured" and "Compile cost"): prior_top_k, retune, retune_min_new, prior and
// compile_timeout_s. Valid values are read as written; each bad value is refused at its
// file:line:col with what it must be (and the likely fix where there is one).
#include <tuner/core/space/space.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include <gtest/gtest.h>

namespace tune {
namespace {

// A space with two buckets; `search` is the body of its [search] table (line 12 on).
std::string space_with(std::string_view search) {
  return std::string(R"toml(schema = 1
kernel = "k"
[params]
BM = [64, 128]
[[buckets]]
name = "small"
shape = {}
[[buckets]]
name = "large"
shape = {}
[search]
)toml") + std::string(search) +
         "\n";
}

SearchSettings parse_ok(std::string_view search) {
  auto s = Space::parse(space_with(search), "mem.toml");
  if (!s) {
    ADD_FAILURE() << s.error().str();
    return {};
  }
  return s->search();
}

std::string parse_error(std::string_view search) {
  auto s = Space::parse(space_with(search), "mem.toml");
  return s ? std::string("parsed") : s.error().str();
}

// The re-tune keys of `s`, as one comparable tuple.
auto retune_keys(const SearchSettings& s) {
  return std::tuple(s.retune, s.prior_top_k, s.retune_min_new, s.prior, s.compile_timeout_s);
}
using Keys = std::tuple<std::string, std::int64_t, std::int64_t, std::optional<std::string>,
                        std::optional<double>>;

TEST(SpaceSearchTest, TheDefaultsWhenNoKeyIsGiven) {
  // No compile_timeout_s: default_compile_timeout_s applies.
  EXPECT_EQ(retune_keys(parse_ok("strategy = \"random\"")),
            Keys("warm", 8, 16, std::nullopt, std::nullopt));
}

TEST(SpaceSearchTest, ValidValuesAreReadAsWritten) {
  EXPECT_EQ(retune_keys(parse_ok("retune = \"full\"\nprior_top_k = 0\nretune_min_new = 0\n"
                                 "prior = \"auto\"\ncompile_timeout_s = 0.5")),
            Keys("full", 0, 0, "auto", 0.5));
  EXPECT_EQ(retune_keys(parse_ok("retune = \"warm\"\nprior_top_k = 32\nretune_min_new = 100\n"
                                 "prior = \"bucket:large\"\ncompile_timeout_s = 1200")),
            Keys("warm", 32, 100, "bucket:large", 1200.0));
  EXPECT_EQ(parse_ok("prior = \"arch:sm_90\"").prior, "arch:sm_90");
  EXPECT_EQ(parse_ok("prior = \"arch:sm_90a\"").prior, "arch:sm_90a");
  EXPECT_EQ(parse_ok("prior = \"arch:sm_100\"").prior, "arch:sm_100");
}

TEST(SpaceSearchTest, EachBadValueIsRefusedAtItsPlaceWithTheFix) {
  struct Bad {
    std::string search;
    std::string error;
  };
  const Bad bad[] = {
      {"prior_top_k = -1",
       "mem.toml:12:15: error: 'prior_top_k' in [search] must be a "
       "non-negative int, got -1"},
      {"prior_top_k = 2.5",
       "mem.toml:12:15: error: 'prior_top_k' in [search] must be a "
       "non-negative int, got a float"},
      {"prior_top_k = \"8\"",
       "mem.toml:12:15: error: 'prior_top_k' in [search] must be a "
       "non-negative int, got a string"},
      {"retune_min_new = -16",
       "mem.toml:12:18: error: 'retune_min_new' in [search] must be a "
       "non-negative int, got -16"},
      {"retune_min_new = true",
       "mem.toml:12:18: error: 'retune_min_new' in [search] must be a "
       "non-negative int, got a boolean"},
      {"retune = \"cold\"",
       "mem.toml:12:10: error: 'retune' in [search] must be \"warm\" or \"full\", got 'cold'"},
      {"retune = \"Warm\"",
       "mem.toml:12:10: error: 'retune' in [search] must be \"warm\" or \"full\", got 'Warm'"},
      {"retune = false",
       "mem.toml:12:10: error: 'retune' in [search] must be \"warm\" or \"full\", got a boolean"},
      {"prior = \"nearest\"",
       "mem.toml:12:9: error: 'prior' in [search] must be \"auto\", "
       "\"bucket:<name>\" or \"arch:sm_<NN>\", got 'nearest'"},
      {"prior = 90",
       "mem.toml:12:9: error: 'prior' in [search] must be \"auto\", "
       "\"bucket:<name>\" or \"arch:sm_<NN>\", got an int"},
      {"prior = \"bucket:\"",
       "mem.toml:12:9: error: 'prior' in [search] must be \"auto\", "
       "\"bucket:<name>\" or \"arch:sm_<NN>\", got 'bucket:'"},
      {"prior = \"arch:sm_\"",
       "mem.toml:12:9: error: 'prior' in [search] must be \"auto\", "
       "\"bucket:<name>\" or \"arch:sm_<NN>\", got 'arch:sm_'"},
      {"prior = \"arch:sm_9.0\"",
       "mem.toml:12:9: error: 'prior' in [search] must be \"auto\", "
       "\"bucket:<name>\" or \"arch:sm_<NN>\", got 'arch:sm_9.0'"},
      // The likely fix, where the value names something without its prefix.
      {"prior = \"arch:90\"",
       "mem.toml:12:9: error: 'prior' in [search] must be \"auto\", \"bucket:<name>\" or "
       "\"arch:sm_<NN>\", got 'arch:90', did you mean 'arch:sm_90'?"},
      {"prior = \"sm_90\"",
       "mem.toml:12:9: error: 'prior' in [search] must be \"auto\", \"bucket:<name>\" or "
       "\"arch:sm_<NN>\", got 'sm_90', did you mean 'arch:sm_90'?"},
      {"prior = \"large\"",
       "mem.toml:12:9: error: 'prior' in [search] must be \"auto\", \"bucket:<name>\" or "
       "\"arch:sm_<NN>\", got 'large', did you mean 'bucket:large'?"},
      // A long name is shortened, not echoed whole (5000 characters were).
      {"prior = \"bucket:" + std::string(5000, 'x') + "\"",
       "mem.toml:12:9: error: 'prior' in [search] names no bucket of the space: '" +
           std::string(80, 'x') + "...' (the buckets: 'small', 'large')"},
      {"prior = \"bucket:larg\"",
       "mem.toml:12:9: error: 'prior' in [search] names no bucket of the space: 'larg' (the "
       "buckets: 'small', 'large'), did you mean 'large'?"},
      {"compile_timeout_s = 0",
       "mem.toml:12:21: error: 'compile_timeout_s' in [search] must be "
       "a positive number of seconds, got 0"},
      {"compile_timeout_s = -60",
       "mem.toml:12:21: error: 'compile_timeout_s' in [search] must "
       "be a positive number of seconds, got -60"},
      {"compile_timeout_s = \"10m\"",
       "mem.toml:12:21: error: 'compile_timeout_s' in [search] "
       "must be a positive number of seconds, got a string"},
      {"compile_timeout_s = inf",
       "mem.toml:12:21: error: 'compile_timeout_s' in [search] must "
       "be a positive number of seconds, got inf"},
      {"compile_timeout_s = nan",
       "mem.toml:12:21: error: 'compile_timeout_s' in [search] must "
       "be a positive number of seconds, got nan"},
      // The CLI's range for --timeout and --budget: a week at most (a larger number would
      // overflow the millisecond waits), a millisecond at least.
      {"compile_timeout_s = 1e7",
       "mem.toml:12:21: error: 'compile_timeout_s' in [search] must be a number of seconds in "
       "(0, 604800] (one week at most), at least 0.001 when not 0, got 1e+07; for no practical "
       "limit write 604800"},
      {"timeout_s = 1e12",
       "mem.toml:12:13: error: 'timeout_s' in [search] must be a number of seconds in (0, "
       "604800]"},
      {"budget_s = 604801",
       "mem.toml:12:12: error: 'budget_s' in [search] must be a number of "
       "seconds in (0, 604800]"},
      {"timeout_s = 0.0001",
       "mem.toml:12:13: error: 'timeout_s' in [search] must be a number of seconds in (0, "
       "604800] (one week at most), at least 0.001 when not 0, got 0.0001"},
      // A misspelt key is named with the right one.
      {"prior_topk = 8", "mem.toml:12:1: error: unknown key 'prior_topk' in [search]"},
  };
  for (const Bad& b : bad) {
    const std::string got = parse_error(b.search);
    EXPECT_EQ(got.substr(0, b.error.size()), b.error) << b.search;
  }
  // [bench]'s times in milliseconds: the same week at most.
  EXPECT_EQ(parse_error("seed = 1\n[bench]\nrep_ms = 1e12"),
            "mem.toml:14:10: error: 'rep_ms' in [bench] must be a number of milliseconds in (0, "
            "6.048e+08] (one week at most), got 1e+12; for no practical limit write 6.048e+08");
  EXPECT_EQ(parse_error("seed = 1\n[bench]\nwarmup_ms = 0\nrep_ms = 0.5"), "parsed");
  // The range's ends are accepted.
  EXPECT_EQ(parse_error("timeout_s = 604800\nbudget_s = 0.001\ncompile_timeout_s = 604800"),
            "parsed");
  EXPECT_NE(parse_error("prior_topk = 8").find("did you mean 'prior_top_k'?"), std::string::npos);
  EXPECT_NE(parse_error("retune_minnew = 8").find("did you mean 'retune_min_new'?"),
            std::string::npos);
}

}  // namespace
}  // namespace tune
