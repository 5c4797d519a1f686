#include <tuner/core/search/runoff.hpp>

#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/result.hpp>

namespace tune {
namespace {

std::vector<double> noisy(double base, int n, double spread, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist(0.0, spread);
  std::vector<double> v;
  for (int i = 0; i < n; ++i)
    v.push_back(base * (1.0 + dist(rng)));
  return v;
}

TEST(RunoffTest, SignTestTail) {
  EXPECT_DOUBLE_EQ(sign_test_upper_tail(0, 10), 1.0);
  EXPECT_NEAR(sign_test_upper_tail(10, 10), 1.0 / 1024, 1e-12);
  EXPECT_NEAR(sign_test_upper_tail(9, 10), 11.0 / 1024, 1e-12);
  EXPECT_DOUBLE_EQ(sign_test_upper_tail(11, 10), 0.0);
  EXPECT_NEAR(sign_test_upper_tail(15, 20), 0.020694732666015625, 1e-12);
}

TEST(RunoffTest, ClearlyFasterChallengerWins) {
  auto inc = noisy(1.00, 30, 0.005, 1);
  auto ch = noisy(0.96, 30, 0.005, 2);
  RunoffStats s = decide_runoff(inc, ch, {}, "A=1", "A=2");
  EXPECT_EQ(s.outcome, RunoffOutcome::challenger_wins);
  EXPECT_EQ(s.winner, "A=2");
  EXPECT_LT(s.median_diff_pct, -3.0);
  EXPECT_LT(s.p_value, 0.001);
  EXPECT_EQ(s.pairs, 30);
}

TEST(RunoffTest, SlowerChallengerLoses) {
  RunoffStats s =
      decide_runoff(noisy(1.0, 30, 0.005, 3), noisy(1.05, 30, 0.005, 4), {}, "inc", "ch");
  EXPECT_EQ(s.outcome, RunoffOutcome::incumbent_wins);
  EXPECT_EQ(s.winner, "inc");
}

TEST(RunoffTest, DifferenceInsideTheMarginIsATieAndTheIncumbentKeepsIt) {
  // 0.5% faster and significant, but inside the 1% margin.
  std::vector<double> inc(40, 1.0), ch(40, 0.995);
  RunoffStats s = decide_runoff(inc, ch, {}, "inc", "ch");
  EXPECT_EQ(s.outcome, RunoffOutcome::tie);
  EXPECT_EQ(s.winner, "inc");
}

TEST(RunoffTest, LargeButInsignificantDifferenceIsATie) {
  // Half the pairs much faster, half much slower: no consistent sign.
  std::vector<double> inc, ch;
  for (int i = 0; i < 20; ++i) {
    inc.push_back(1.0);
    ch.push_back(i % 2 == 0 ? 0.8 : 1.19);
  }
  RunoffStats s = decide_runoff(inc, ch, {}, "inc", "ch");
  EXPECT_EQ(s.outcome, RunoffOutcome::tie);
}

TEST(RunoffTest, SameConfigAgainstItselfTies) {
  int ties = 0;
  for (unsigned seed = 0; seed < 50; ++seed)
    if (decide_runoff(noisy(1.0, 30, 0.01, seed), noisy(1.0, 30, 0.01, seed + 1000), {}, "a", "b")
            .outcome == RunoffOutcome::tie)
      ++ties;
  EXPECT_GE(ties, 48);
}

TEST(RunoffTest, RejectsUnpairedTimings) {
  EXPECT_THROW(decide_runoff({1.0}, {1.0, 2.0}, {}, "a", "b"), error);
  EXPECT_THROW(decide_runoff({}, {}, {}, "a", "b"), error);
}

TEST(RunoffTest, JsonRoundTrip) {
  RunoffStats s = decide_runoff(noisy(1.0, 10, 0.01, 7), noisy(0.9, 10, 0.01, 8), {}, "a", "b");
  nlohmann::json j = s;
  RunoffStats back = j.get<RunoffStats>();
  EXPECT_EQ(nlohmann::json(back), j);
  EXPECT_EQ(j.at("outcome"), "challenger_wins");
}

TEST(RunoffTest, AgreementWarnsOnlyAboutTheFinalistThatDeparts) {
  RunoffStats s;
  s.incumbent = "A=1";
  s.challenger = "A=2";
  s.incumbent_median_ms = 0.002858;
  s.challenger_median_ms = 0.003173;
  const RunoffPolicy policy;
  std::vector<std::string> w = agreement_warnings(s, 0.002833, 0.002835, policy);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "the runoff timed A=2 at 0.003173 ms, +11.9% from its sequential median 0.002835 ms "
            "(more than 3%): the two timing modes disagree about it, so this verdict may rest on "
            "a measurement artefact");
  EXPECT_TRUE(agreement_warnings(s, 0.002833, 0.0031, policy).empty());
  EXPECT_TRUE(agreement_warnings(s, 0, 0, policy).empty());  // no sequential medians
  RunoffPolicy strict;
  strict.agreement_pct = 0.5;
  EXPECT_EQ(agreement_warnings(s, 0.002833, 0.0031, strict).size(), 2u);  // +0.9%, +2.4%
}

TEST(RunoffTest, WarningsRoundTripAndAreOmittedWhenNone) {
  RunoffStats s = decide_runoff({1.0, 1.0}, {1.0, 1.0}, {}, "a", "b");
  nlohmann::json j = s;
  EXPECT_FALSE(j.contains("warnings"));
  s.warnings = {"w"};
  j = s;
  EXPECT_EQ(j["warnings"], nlohmann::json::array({"w"}));
  EXPECT_EQ(j.get<RunoffStats>().warnings, s.warnings);
  j.erase("warnings");
  EXPECT_TRUE(j.get<RunoffStats>().warnings.empty());
}

TEST(RunoffTest, TheDecisionAsASentenceSaysWhoWasKeptAndWhy) {
  RunoffStats s;
  s.pairs = 200;
  s.challenger_faster = 117;
  s.incumbent = "A=1";
  s.challenger = "A=2";
  s.incumbent_median_ms = 0.12512345;
  s.challenger_median_ms = 0.12433333;
  s.margin_pct = 1.0;
  s.alpha = 0.05;
  const std::string pairs =
      "117 of 200 pairs favoured the challenger A=2 (0.1243 ms against 0.1251 ms for the "
      "incumbent A=1), a paired median difference of ";
  const struct {
    RunoffOutcome outcome;
    double diff_pct, p;
    std::string said;
  } cases[] = {
      {RunoffOutcome::tie, -0.6316789, 0.0132456789,
       "-0.63% (p = 0.013): within the 1% margin, a tie: the incumbent A=1 is kept"},
      {RunoffOutcome::tie, -1.5, 0.2,
       "-1.50% (p = 0.2): past the 1% margin but not significant at 0.05, a tie: the incumbent "
       "A=1 is kept"},
      {RunoffOutcome::challenger_wins, -1.5, 0.001,
       "-1.50% (p = 0.001): past the 1% margin and significant at 0.05: the challenger wins"},
      {RunoffOutcome::incumbent_wins, 2.5, 0.001,
       "+2.50% (p = 0.001): past the 1% margin and significant at 0.05: the incumbent wins"},
  };
  for (const auto& c : cases) {
    s.outcome = c.outcome;
    s.median_diff_pct = c.diff_pct;
    s.p_value = c.p;
    EXPECT_EQ(describe_runoff(s), pairs + c.said);
  }
  s.outcome = RunoffOutcome::forfeit;
  s.winner = "A=1";
  EXPECT_EQ(describe_runoff(s), "A=2 failed its setup in the runoff: A=1 wins by forfeit");
  s.winner.clear();
  EXPECT_EQ(describe_runoff(s),
            "both finalists (A=1 and A=2) failed their setup in the runoff: no winner");
}

}  // namespace
}  // namespace tune
