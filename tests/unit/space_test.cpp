#include <tuner/core/space/space.hpp>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tune {
namespace {

Space parse_ok(std::string_view text) {
  auto s = Space::parse(text, "mem.toml");
  if (!s) ADD_FAILURE() << s.error().str();
  return std::move(s).value();
}

std::string parse_error(std::string_view text) {
  auto s = Space::parse(text, "mem.toml");
  return s ? std::string("parsed") : s.error().str();
}

std::vector<std::string> ids(const std::vector<Config>& configs) {
  std::vector<std::string> out;
  for (const auto& c : configs)
    out.push_back(c.id());
  return out;
}

std::vector<std::string> bucket_ids(const Space& s, std::string_view bucket) {
  return ids(s.configs(*s.bucket(bucket)).value());
}

constexpr std::string_view gemm = R"toml(# a comment
schema = 1
kernel = "gemm"
prune = ["BM * BN <= 32768", "LAYOUT == 'row' || STAGES < 4", "BN <= N"]
require = [{ BM = 128, BN = 128, STAGES = 3, LAYOUT = "row" }]

[params]
BM = [64, 128, 256]
BN = [64, 128, 256]
STAGES = [2, 3, 4]
LAYOUT = ["row", "col"]

[[configs]]
BM = 32
BN = 64
STAGES = 2
LAYOUT = "row"

[[buckets]]
name = "m<=512"
when = "M <= 512"
shape = { M = 512, N = 4096, K = 4096 }

[[buckets]]
name = "large"
shape = { M = 8192, N = 128, K = 4096 }

[search]
strategy = "grid"
budget_s = 600
timeout_s = 30

[bench]
warmup_ms = 25
rep_ms = 100
min_reps = 5
max_reps = 1000
clear_l2 = true
)toml";

TEST(SpaceTest, ReadsEverySection) {
  Space s = parse_ok(gemm);
  EXPECT_EQ(s.schema(), 1);
  EXPECT_EQ(s.kernel(), "gemm");
  EXPECT_EQ(s.path(), "mem.toml");
  ASSERT_EQ(s.params().size(), 4u);
  EXPECT_EQ(s.params()[0].name, "BM");
  EXPECT_EQ(s.params()[3].name, "LAYOUT");
  EXPECT_EQ(s.params()[3].values, (std::vector<ParamValue>{"row", "col"}));
  EXPECT_EQ(s.params()[2].pos.line, 10);
  EXPECT_EQ(s.params()[2].pos.column, 1);
  EXPECT_EQ(s.prune().size(), 3u);
  EXPECT_EQ(s.prune()[1], "LAYOUT == 'row' || STAGES < 4");
  ASSERT_EQ(s.require().size(), 1u);
  EXPECT_EQ(s.require()[0].id(), R"(BM=128,BN=128,LAYOUT="row",STAGES=3)");
  ASSERT_EQ(s.buckets().size(), 2u);
  EXPECT_EQ(s.buckets()[0].name, "m<=512");
  EXPECT_EQ(s.buckets()[0].when, "M <= 512");
  EXPECT_EQ(s.buckets()[1].when, std::nullopt);
  EXPECT_EQ(s.buckets()[0].shape,
            (Shape{{"M", ParamValue(512)}, {"N", ParamValue(4096)}, {"K", ParamValue(4096)}}));
  EXPECT_EQ(*s.buckets()[1].shape_value("N"), ParamValue(128));
  EXPECT_EQ(s.buckets()[1].shape_value("Q"), nullptr);
  EXPECT_EQ(s.search().strategy, "grid");
  EXPECT_TRUE(s.search().strategy_given);
  EXPECT_EQ(s.search().budget_s, 600.0);
  EXPECT_EQ(s.search().timeout_s, 30.0);
  EXPECT_EQ(s.search().compile_timeout_s, std::nullopt);  // the default applies
  EXPECT_EQ(s.bench().min_reps, 5);
  EXPECT_EQ(s.bench().max_reps, 1000);
  EXPECT_TRUE(s.bench().clear_l2);
  EXPECT_EQ(s.params_as(), ParamsAs::defines);
  EXPECT_EQ(s.explicit_configs().size(), 1u);
  EXPECT_EQ(s.all_configs().size(), 3u * 3 * 3 * 2 + 1);
  EXPECT_EQ(s.bucket("large"), &s.buckets()[1]);
  EXPECT_EQ(s.bucket("nope"), nullptr);
  EXPECT_EQ(s.space_hash().size(), 64u);
}

TEST(SpaceTest, DefaultsWithoutOptionalSections) {
  Space s = parse_ok("schema = 1\nkernel = \"k\"\n[params]\nA = [1]\n");
  EXPECT_EQ(s.search().strategy, "auto");
  EXPECT_FALSE(s.search().strategy_given);
  EXPECT_EQ(s.search().budget_s, std::nullopt);
  EXPECT_EQ(s.bench().warmup_ms, 25);
  EXPECT_EQ(s.bench().rep_ms, 100);
  EXPECT_EQ(s.bench().min_reps, 5);
  EXPECT_EQ(s.bench().max_reps, 1000);
  EXPECT_TRUE(s.prune().empty());
  EXPECT_TRUE(s.require().empty());
  // Without [[buckets]] there is one implicit bucket "default" with an empty shape.
  ASSERT_EQ(s.buckets().size(), 1u);
  EXPECT_EQ(s.buckets()[0].name, "default");
  EXPECT_TRUE(s.buckets()[0].shape.empty());
  EXPECT_EQ(s.buckets()[0].when, std::nullopt);
  EXPECT_EQ(bucket_ids(s, "default"), (std::vector<std::string>{"A=1"}));
}

TEST(SpaceTest, ParamsAsConstexpr) {
  Space s = parse_ok("schema = 1\nkernel = \"k\"\nparams_as = \"constexpr\"\n[params]\nA = [1]\n");
  EXPECT_EQ(s.params_as(), ParamsAs::constexpr_header);
}

TEST(SpaceTest, EnumerationFollowsDeclarationOrder) {
  // Declared Z, then A, then M: not alphabetical; the first declared varies slowest.
  Space s = parse_ok(R"toml(schema = 1
kernel = "k"
[params]
Z = [2, 1]
A = ["y", "x"]
M = [0]
[[configs]]
A = "q"
M = 7
Z = 9
[[configs]]
Z = 1
A = "x"
M = 0
[[configs]]
M = 7
A = "q"
Z = 9
)toml");
  EXPECT_EQ(ids(s.all_configs()),
            (std::vector<std::string>{
                R"(A="y",M=0,Z=2)", R"(A="x",M=0,Z=2)", R"(A="y",M=0,Z=1)", R"(A="x",M=0,Z=1)",
                R"(A="q",M=7,Z=9)",  // explicit; the duplicates once
            }));
  EXPECT_EQ(s.params()[0].name, "Z");
  EXPECT_EQ(s.params()[1].name, "A");
  EXPECT_EQ(s.params()[2].name, "M");
}

TEST(SpaceTest, PruningPerBucketUsesShapeNames) {
  Space s = parse_ok(gemm);
  auto small = bucket_ids(s, "m<=512");
  auto large = bucket_ids(s, "large");
  // BM * BN <= 32768 and (row or STAGES < 4); large has N = 128 so BN <= 128 there.
  EXPECT_EQ(small.size(), 41u);
  EXPECT_EQ(large.size(), 31u);
  EXPECT_EQ(small.front(), R"(BM=64,BN=64,LAYOUT="row",STAGES=2)");
  EXPECT_EQ(small[1], R"(BM=64,BN=64,LAYOUT="col",STAGES=2)");
  EXPECT_EQ(small.back(), R"(BM=32,BN=64,LAYOUT="row",STAGES=2)");  // explicit, last
  for (const auto& id : large)
    EXPECT_EQ(id.find("BN=256"), std::string::npos) << id;
  const Config wide{{"BM", 64}, {"BN", 256}, {"STAGES", 2}, {"LAYOUT", "row"}};
  EXPECT_TRUE(s.keeps(wide, *s.bucket("m<=512")).value());
  EXPECT_FALSE(s.keeps(wide, *s.bucket("large")).value());
  const Config deep_col{{"BM", 64}, {"BN", 64}, {"STAGES", 4}, {"LAYOUT", "col"}};
  EXPECT_FALSE(s.keeps(deep_col, *s.bucket("m<=512")).value());
}

TEST(SpaceTest, DivisionByZeroWhilePruningNamesTheExpression) {
  Space s = parse_ok(R"toml(schema = 1
kernel = "k"
prune = ["A / (B - 2) >= 0"]
[params]
A = [1, 2]
B = [1, 2]
)toml");
  auto r = s.configs(s.buckets()[0]);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().str(),
            "mem.toml:3:13: error: division by zero in 'A / (B - 2) >= 0', for config A=1,B=2 in "
            "bucket 'default'");
  // keeps() evaluates one config: A=1,B=1 gives -1 >= 0, no division by zero.
  EXPECT_FALSE(s.keeps(Config{{"A", 1}, {"B", 1}}, s.buckets()[0]).value());
}

TEST(SpaceTest, RequireIsDeduplicatedAndChecked) {
  Space s = parse_ok(R"toml(schema = 1
kernel = "k"
require = [{ A = 2 }, { A = 1 }, { A = 2 }]
[params]
A = [1, 2]
)toml");
  EXPECT_EQ(ids(s.require()), (std::vector<std::string>{"A=2", "A=1"}));
  // An explicit config outside the product may be an incumbent.
  parse_ok(
      "schema = 1\nkernel = \"k\"\nrequire = [{ A = 9 }]\n[params]\nA = [1]\n"
      "[[configs]]\nA = 9\n");
  EXPECT_EQ(parse_error("schema = 1\nkernel = \"k\"\nrequire = [{ A = 9 }]\n[params]\nA = [1]\n"),
            "mem.toml:3:12: error: incumbent 'A=9' is not in the space (neither in the [params] "
            "product nor a [[configs]] entry)");
  EXPECT_EQ(parse_error(R"toml(schema = 1
kernel = "k"
prune = ["A < 2", "A <= LIMIT"]
require = [{ A = 1 }]
[params]
A = [1, 2]
[[buckets]]
name = "ok"
shape = { LIMIT = 1 }
[[buckets]]
name = "tight"
shape = { LIMIT = 0 }
)toml"),
            "mem.toml:4:12: error: incumbent 'A=1' is pruned from bucket 'tight' by 'A <= LIMIT'");
}

TEST(SpaceTest, SelectTakesTheFirstMatchingBucket) {
  Space s = parse_ok(gemm);
  auto pick = [&](std::int64_t m) {
    const Bucket* b =
        s.select(Shape{{"M", ParamValue(m)}, {"N", ParamValue(1)}, {"K", ParamValue(1)}}).value();
    return b == nullptr ? std::string("none") : b->name;
  };
  EXPECT_EQ(pick(1), "m<=512");
  EXPECT_EQ(pick(512), "m<=512");
  EXPECT_EQ(pick(513), "large");  // no when: takes the rest
  auto missing = s.select(Shape{{"N", ParamValue(1)}});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().str(),
            "mem.toml:21:9: error: the runtime shape (N=1) has no value for 'M', which the when "
            "of bucket 'm<=512' reads");
  Space only = parse_ok(R"toml(schema = 1
kernel = "k"
[params]
A = [1]
[[buckets]]
name = "small"
when = "M < 10"
shape = { M = 1 }
)toml");
  EXPECT_EQ(only.select(Shape{{"M", ParamValue(100)}}).value(), nullptr);
  auto wrong_kind = only.select(Shape{{"M", ParamValue("x")}});
  ASSERT_FALSE(wrong_kind);
  EXPECT_EQ(wrong_kind.error().str(),
            "mem.toml:7:11: error: '<' needs ints, got a string and an int, for the runtime shape "
            "(M=\"x\") in the when of bucket 'small'");
}

TEST(SpaceTest, PrunedSpaceHashIsTheReferenceFnv) {
  // Values computed independently (FNV-1a 64 over the sorted ids, each followed by NUL).
  EXPECT_EQ(Space::pruned_space_hash({}), "cbf29ce484222325");
  EXPECT_EQ(Space::pruned_space_hash({Config{{"A", 1}}, Config{{"A", 2}}}), "a9b263652fe74dee");
  // Order does not matter; duplicates do.
  EXPECT_EQ(Space::pruned_space_hash({Config{{"A", 2}}, Config{{"A", 1}}}), "a9b263652fe74dee");
  EXPECT_EQ(Space::pruned_space_hash({Config{{"A", 1}}, Config{{"A", 1}}}), "a9aefd652fe46ac5");
}

// The same meaning as `gemm`, written differently: other comments, whitespace, quotes, key
// order inside tables, inline vs. standard tables, expression spacing, ints as floats in
// [search], defaults spelled out or left out.
constexpr std::string_view gemm_reformatted = R"toml(
schema=1
kernel='gemm'
# prune with other spacing and quotes
prune = [ "BM*BN<=32768", "(LAYOUT == \"row\") || (STAGES < 4)", 'BN <= N' ]
require = [ { LAYOUT = 'row', STAGES = 3, BN = 128, BM = 128 } ]
[params]
BM = [ 64, 128, 256 ]
BN = [64,128,256]
STAGES = [2,
          3,
          4]
LAYOUT = ['row', 'col']
[[configs]]
LAYOUT = "row"
STAGES = 2
BN = 64
BM = 32
[[buckets]]
shape.M = 512
shape.N = 4096
shape.K = 4096
when = "M<=512"
name = "m<=512"
[[buckets]]
name = "large"
shape = {M=8192,N=128,K=4096}
[bench]
clear_l2 = true
min_reps = 5
[search]
timeout_s = 30.0
budget_s = 600.0
)toml";

TEST(SpaceTest, SpaceHashIgnoresFormatting) {
  EXPECT_EQ(parse_ok(gemm).space_hash(), parse_ok(gemm_reformatted).space_hash());
}

std::string replaced(std::string_view text, std::string_view from, std::string_view to) {
  std::string s(text);
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(SpaceTest, CompileTimeoutIsAPositiveNumberOfSeconds) {
  const std::string with =
      replaced(gemm, "timeout_s = 30\n", "timeout_s = 30\ncompile_timeout_s = 90\n");
  EXPECT_EQ(parse_ok(with).search().compile_timeout_s, 90.0);
  const std::string zero =
      replaced(gemm, "timeout_s = 30\n", "timeout_s = 30\ncompile_timeout_s = 0\n");
  EXPECT_NE(parse_error(zero).find("'compile_timeout_s' in [search] must be a positive number of "
                                   "seconds, got 0"),
            std::string::npos)
      << parse_error(zero);
}

TEST(SpaceTest, AutoTakesTheSettingsOfTheStrategyItPicksForALargeBucket) {
  constexpr std::string_view text = R"toml(schema = 1
kernel = "k"
[params]
A = [1, 2, 3]
[search]
cost_weight = 0
initial = 5
)toml";
  const SearchSettings s = parse_ok(text).search();
  EXPECT_EQ(s.strategy, "auto");
  EXPECT_EQ(s.options.at("cost_weight"), 0.0);
  EXPECT_TRUE(s.compile_costs_off());
  // Where auto picks bayes, its log's identity has what differs from bayes's defaults; where it
  // picks grid, nothing.
  const nlohmann::json large = s.resolved(auto_grid_max + 1).identity();
  EXPECT_EQ(large.at("strategy"), "bayes");
  EXPECT_EQ(large.at("initial"), 5.0) << large.dump();
  EXPECT_EQ(s.resolved(3).identity(), (nlohmann::json{{"strategy", "grid"}}));
  // Another strategy's setting is refused, naming the one auto takes.
  const std::string other = replaced(text, "initial = 5", "temperature = 0.1");
  EXPECT_NE(parse_error(other).find("'temperature' in [search] is a setting of strategy "
                                    "'anneal', not of 'auto' (which takes the settings of bayes, "
                                    "the strategy it picks for a bucket of more than 256 configs)"),
            std::string::npos)
      << parse_error(other);
}

TEST(SpaceTest, SpaceHashChangesWithEveryChangeOfMeaning) {
  const std::string base = parse_ok(gemm).space_hash();
  struct Change {
    const char* what;
    std::string_view from;
    std::string_view to;
  };
  const Change changes[] = {
      {"a param value", "STAGES = [2, 3, 4]", "STAGES = [2, 3, 4, 5]"},
      {"the order of values", "STAGES = [2, 3, 4]", "STAGES = [3, 2, 4]"},
      {"the order of params", "BM = [64, 128, 256]\nBN = [64, 128, 256]",
       "BN = [64, 128, 256]\nBM = [64, 128, 256]"},
      {"a string value", "LAYOUT = [\"row\", \"col\"]", "LAYOUT = [\"row\", \"col\", \"1\"]"},
      {"an explicit config", "BM = 32\n", "BM = 16\n"},
      {"a prune expression", "BM * BN <= 32768", "BM * BN <= 65536"},
      {"a prune operator", "STAGES < 4", "STAGES <= 4"},
      {"an added prune", "\"BN <= N\"]", "\"BN <= N\", \"BM >= 64\"]"},
      {"an incumbent", "require = [{ BM = 128, BN = 128, STAGES = 3, LAYOUT = \"row\" }]",
       "require = [{ BM = 128, BN = 128, STAGES = 2, LAYOUT = \"row\" }]"},
      {"a bucket name", "name = \"large\"", "name = \"big\""},
      {"a bucket predicate", "when = \"M <= 512\"", "when = \"M < 1024\""},
      {"a shape value", "M = 8192", "M = 8193"},
      {"a shape name", "K = 4096 }\n\n[search]", "KK = 4096 }\n\n[search]"},
      {"params_as", "kernel = \"gemm\"\n", "kernel = \"gemm\"\nparams_as = \"constexpr\"\n"},
      {"the search budget", "budget_s = 600", "budget_s = 601"},
      {"the bench settings", "max_reps = 1000", "max_reps = 999"},
      {"clear_l2", "clear_l2 = true", "clear_l2 = false"},
  };
  std::set<std::string> seen{base};
  for (const auto& c : changes) {
    const std::string changed = replaced(gemm, c.from, c.to);
    auto s = Space::parse(changed, "mem.toml");
    ASSERT_TRUE(s) << c.what << ": " << s.error().str();
    EXPECT_NE(s->space_hash(), base) << c.what;
    EXPECT_TRUE(seen.insert(s->space_hash()).second) << c.what;
  }
}

TEST(SpaceTest, ExpressionColumnsMapIntoTheFile) {
  // Escapes in a basic string shift the file column against the decoded text.
  EXPECT_EQ(parse_error("schema = 1\nkernel = \"k\"\nprune = [\"L == \\\"x\\\" && Q\"]\n"
                        "[params]\nL = [\"x\"]\n"),
            "mem.toml:3:25: error: prune expression 'L == \"x\" && Q' reads 'Q', which is neither "
            "a param nor a shape name (params: L; shape names: none)");
  // A multi-line literal string: the line inside the file, the text on one line.
  EXPECT_EQ(parse_error("schema = 1\nkernel = \"k\"\nprune = ['''\nA > 1 &&\n   A < $ 3''']\n"
                        "[params]\nA = [1]\n"),
            "mem.toml:5:8: error: invalid prune expression 'A > 1 && A < $ 3': unexpected "
            "character '$'");
  // The same with CRLF line ends (TOML++ decodes each to one '\n').
  EXPECT_EQ(parse_error("schema = 1\r\nkernel = \"k\"\r\nprune = ['''\r\nA > 1 &&\r\n   A < $ 3''']"
                        "\r\n[params]\r\nA = [1]\r\n"),
            "mem.toml:5:8: error: invalid prune expression 'A > 1 && A < $ 3': unexpected "
            "character '$'");
  // Non-ASCII characters count as one column, as TOML++ counts them.
  EXPECT_EQ(parse_error("schema = 1\nkernel = \"k\"\nprune = [\"L == 'é' && Q\"]\n"
                        "[params]\nL = [\"x\"]\n"),
            "mem.toml:3:23: error: prune expression 'L == 'é' && Q' reads 'Q', which is neither "
            "a param nor a shape name (params: L; shape names: none)");
}

TEST(SpaceTest, LoadNamesTheFile) {
  auto missing = Space::load("/nonexistent/space.toml");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().str(), "/nonexistent/space.toml: error: no such file");
  auto dir = Space::load(TUNE_TEST_DATA);
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().message, "is a directory, expected a space file");
}

TEST(SpaceTest, EveryValidCorpusFileLoads) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(TUNE_TEST_DATA) / "spaces/valid")) {
    if (entry.path().extension() != ".toml") continue;
    auto s = Space::load(entry.path());
    EXPECT_TRUE(s) << s.error().str();
    if (s) {
      for (const auto& b : s->buckets())
        EXPECT_TRUE(s->configs(b)) << entry.path();
    }
    ++count;
  }
  EXPECT_GE(count, 3);
}

TEST(SpaceTest, EveryInvalidCorpusFileFails) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(TUNE_TEST_DATA) / "spaces/invalid")) {
    if (entry.path().extension() != ".toml") continue;
    auto s = Space::load(entry.path());
    bool failed = !s;
    if (s)  // some errors (division by zero) surface only when a bucket is expanded
      for (const auto& b : s->buckets())
        failed = failed || !s->configs(b);
    EXPECT_TRUE(failed) << entry.path();
    ++count;
  }
  EXPECT_GE(count, 40);
}

TEST(SpaceTest, ExpandsAHundredThousandConfigsQuickly) {
  std::string text = R"toml(schema = 1
kernel = "big"
prune = ["A * B % 7 != 3 || C < D", "E == 'x' || A > 2", "A + B + C + D <= N"]
[params]
)toml";
  for (const char* p : {"A", "B", "C", "D"}) {
    text += p;
    text += " = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n";
  }
  text += "E = [\"x\", \"y\", \"z\", \"w\", \"v\", \"u\", \"t\", \"s\", \"r\", \"q\"]\n";
  text += "[[buckets]]\nname = \"all\"\nshape = { N = 1000 }\n";
  Space s = parse_ok(text);
  ASSERT_EQ(s.all_configs().size(), 100'000u);
  const std::clock_t start = std::clock();  // CPU time: robust against a busy machine
  auto kept = s.configs(s.buckets()[0]).value();
  const double cpu_s = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  EXPECT_GT(kept.size(), 10'000u);
  EXPECT_LT(kept.size(), 100'000u);
  EXPECT_LT(cpu_s, 1.0) << "configs() took " << cpu_s << " s of CPU";
}

// `n` params P0, P1, ... of ten values each, appended to `text`. Appended piece by piece: g++ 12
// at -O2 and above gives a false -Wrestrict on `"P" + std::to_string(i)` (GCC bug 105651).
void append_ten_value_params(std::string& text, int n) {
  for (int i = 0; i < n; ++i) {
    text += 'P';
    text += std::to_string(i);
    text += " = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n";
  }
}

TEST(SpaceTest, RefusesAHugeSpaceBeforeEnumerating) {
  std::string text = "schema = 1\nkernel = \"k\"\n[params]\n";
  append_ten_value_params(text, 12);
  const std::clock_t start = std::clock();
  EXPECT_EQ(parse_error(text),
            "mem.toml:3:1: error: the space has 1000000000000 configs, over the limit of 1000000: "
            "narrow [params] or split the space");
  EXPECT_LT(static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC, 0.5);
  // 10^6 from the product plus one explicit config outside it tips it over (not enumerated).
  std::string at_limit = "schema = 1\nkernel = \"k\"\n[params]\n";
  append_ten_value_params(at_limit, 6);
  EXPECT_EQ(
      parse_error(at_limit + "[[configs]]\nP0 = 11\nP1 = 1\nP2 = 1\nP3 = 1\nP4 = 1\nP5 = 1\n"),
      "mem.toml:3:1: error: the space has 1000001 configs, over the limit of 1000000: "
      "narrow [params] or split the space");
}

}  // namespace
}  // namespace tune
