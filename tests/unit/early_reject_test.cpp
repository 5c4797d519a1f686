// Early rejection of the search's losers (docs/measurement.md "Early rejection"): the order
// statistic test, the search's rule (who may stop, against which best), the logged trial, the
// protocol, the [bench] keys and the summary line. The measurer is faked: it draws each
// candidate's reps around a scripted median and applies the real test at the real looks.
#include <tuner/core/search/early_reject.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tuner/core/search/autotuner.hpp>
#include <tuner/core/search/overhead.hpp>
#include <tuner/core/search/trial.hpp>
#include <tuner/core/search/worker_protocol.hpp>
#include <tuner/core/space/space.hpp>

#include "test_dir.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;

// P(Binomial(n, 1/2) <= k), exactly enough for the small n here.
double binomial_cdf(int n, int k) {
  double sum = 0;
  for (int i = 0; i <= k; ++i)
    sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) -
                    n * std::log(2.0));
  return sum;
}

TEST(EarlyRejectTest, TheRankIsTheLargestWithinTheLevel) {
  // Values checked against Python's exact binomial sums.
  EXPECT_EQ(median_lower_bound_rank(10, 1e-3), 1);
  EXPECT_EQ(median_lower_bound_rank(10, 1e-4), 0);  // 2^-10 > 1e-4: ten samples prove nothing
  EXPECT_EQ(median_lower_bound_rank(20, 1e-3), 3);
  EXPECT_EQ(median_lower_bound_rank(20, 0.01), 5);
  EXPECT_EQ(median_lower_bound_rank(100, 1e-3), 35);
  EXPECT_EQ(median_lower_bound_rank(0, 0.5), 0);
  for (int n : {10, 25, 60, 400}) {
    const int r = median_lower_bound_rank(n, 1e-3);
    ASSERT_GT(r, 0) << n;
    EXPECT_LE(binomial_cdf(n, r - 1), 1e-3) << n;
    EXPECT_GT(binomial_cdf(n, r), 1e-3) << n;
  }
}

TEST(EarlyRejectTest, LooksDoubleFromTenAndStayUnderTheReps) {
  EXPECT_EQ(early_reject_looks(250), (std::vector<int>{10, 20, 40, 80, 160}));
  EXPECT_EQ(early_reject_looks(40), (std::vector<int>{10, 20}));
  EXPECT_TRUE(early_reject_looks(10).empty());
  EXPECT_TRUE(early_reject_looks(5).empty());
}

TEST(EarlyRejectTest, OnlyAClearlySlowerMedianStops) {
  const EarlyReject rule{1.1, 0.01};
  // Ten reps, all above the threshold: the smallest is a bound at 2^-10 < 0.01 / 5.
  std::vector<double> slow(10, 3.0);
  EXPECT_TRUE(clearly_slower(slow, rule, 5));
  // One rep under the threshold is enough to keep ten reps going.
  slow[7] = 1.0;
  EXPECT_FALSE(clearly_slower(slow, rule, 5));
  // Twenty reps with two fast outliers: the third smallest is the bound at 0.01 / 5.
  std::vector<double> twenty(20, 3.0);
  twenty[3] = twenty[11] = 0.5;
  EXPECT_TRUE(clearly_slower(twenty, rule, 5));
  // A median just above the threshold is no proof with a spread around it.
  std::vector<double> close;
  for (int i = 0; i < 20; ++i)
    close.push_back(1.15 + (i % 2 ? 0.1 : -0.1));
  EXPECT_FALSE(clearly_slower(close, rule, 5));
  EXPECT_FALSE(clearly_slower({}, rule, 1));
}

TEST(EarlyRejectTest, FalseRejectionsStayUnderTheLevel) {
  // A candidate exactly at the threshold, reps from a skewed distribution: over many
  // candidates, the share stopped at some look stays under alpha.
  const EarlyReject rule{1.0, 0.05};
  const std::vector<int> looks = early_reject_looks(320);
  std::uint64_t state = 12345;
  auto uniform = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / 9007199254740992.0;
  };
  int stopped = 0;
  const int candidates = 2000;
  for (int c = 0; c < candidates; ++c) {
    std::vector<double> samples;
    for (int look : looks) {
      while (static_cast<int>(samples.size()) < look)
        samples.push_back(1.0 - std::log(2.0) + -std::log(1 - uniform()));  // median 1.0
      if (clearly_slower(samples, rule, static_cast<int>(looks.size()))) {
        ++stopped;
        break;
      }
    }
  }
  EXPECT_LT(stopped, candidates * 0.05);
}

// A measurer with scripted medians: the reps of a candidate are its median with a small
// alternating jitter, read at the real looks under the rule the search gave.
class FakeMeasurer : public Objective {
 public:
  explicit FakeMeasurer(std::vector<double> medians) : medians_(std::move(medians)) {
    for (std::size_t i = 0; i < medians_.size(); ++i)
      configs_.push_back(Config{{"X", static_cast<std::int64_t>(i)}});
  }
  const std::vector<Config>& configs() override { return configs_; }
  void reject_above(std::optional<EarlyReject> rule) override { rule_ = rule; }
  Trial measure(std::size_t index) override {
    rules.push_back(rule_);
    const double median = medians_.at(index);
    std::vector<double> samples;
    auto take_to = [&](int n) {
      while (static_cast<int>(samples.size()) < n)
        samples.push_back(median * (samples.size() % 2 ? 1.01 : 0.99));
    };
    if (rule_) {
      const std::vector<int> looks = early_reject_looks(planned_reps);
      for (int look : looks) {
        take_to(look);
        if (clearly_slower(samples, *rule_, static_cast<int>(looks.size()))) {
          Trial t = Trial::measured(median, median * 0.99, look);
          t.rejected_early = true;
          t.times = TrialTimes{};
          t.times->timed_ms = look * median;
          t.times->saved_ms = (planned_reps - look) * median;
          return t;
        }
      }
    }
    take_to(planned_reps);
    Trial t = Trial::measured(median, median * 0.99, planned_reps);
    t.times = TrialTimes{};
    t.times->timed_ms = planned_reps * median;
    return t;
  }
  std::optional<RunoffPairs> runoff(std::size_t incumbent, std::size_t challenger) override {
    runoffs.emplace_back(incumbent, challenger);
    RunoffPairs p;
    for (int i = 0; i < 20; ++i) {
      p.incumbent_ms.push_back(medians_.at(incumbent) * (i % 2 ? 1.001 : 0.999));
      p.challenger_ms.push_back(medians_.at(challenger) * (i % 2 ? 0.999 : 1.001));
    }
    return p;
  }

  int planned_reps = 100;
  std::vector<std::optional<EarlyReject>> rules;  // per measure call, in order
  std::vector<std::pair<std::size_t, std::size_t>> runoffs;

 private:
  std::vector<double> medians_;
  std::vector<Config> configs_;
  std::optional<EarlyReject> rule_;
};

class EarlyRejectSearchTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::fresh_test_dir("early_reject_test"); }
  void TearDown() override { fs::remove_all(dir_.parent_path()); }
  fs::path dir_;
};

TEST_F(EarlyRejectSearchTest, LosersStopAndNeverReachTheRunoff) {
  // 0: 1.0 (first: nothing to compare with), 1: 3.0 (3x slower: stops), 2: 0.9 (a new best),
  // 3: 0.95 (within the margin: measured in full), 4: 1.2 (over 0.9 * 1.1: stops).
  FakeMeasurer m({1.0, 3.0, 0.9, 0.95, 1.2});
  result<Output> out =
      Autotuner("k/b").early_reject(10.0).log(dir_ / "k.trials.jsonl").run_objective(m);
  ASSERT_TRUE(out) << out.error().str();
  ASSERT_EQ(m.rules.size(), 5u);
  EXPECT_FALSE(m.rules[0]);  // no best yet
  ASSERT_TRUE(m.rules[1]);
  EXPECT_DOUBLE_EQ(m.rules[1]->above_ms, 1.1);
  EXPECT_DOUBLE_EQ(m.rules[1]->alpha, 0.01);
  // The rejected 3.0 never becomes the reference; the new best 0.9 does.
  EXPECT_DOUBLE_EQ(m.rules[2]->above_ms, 1.1);
  EXPECT_DOUBLE_EQ(m.rules[3]->above_ms, 0.9 * 1.1);
  std::vector<bool> rejected;
  for (const Trial& t : out->trials)
    rejected.push_back(t.rejected_early);
  EXPECT_EQ(rejected, (std::vector<bool>{false, true, false, false, true}));
  EXPECT_EQ(out->trials[1].state.measured()->reps, 10);
  EXPECT_EQ(out->rejected_early, 2u);
  EXPECT_DOUBLE_EQ(out->saved_ms, 90 * 3.0 + 90 * 1.2);
  // The finalists are the two best measured in full.
  ASSERT_EQ(m.runoffs.size(), 1u);
  EXPECT_EQ(m.runoffs[0], (std::pair<std::size_t, std::size_t>{2, 3}));
  EXPECT_EQ(out->best, Config({{"X", 2}}));

  // The log keeps the flag: a resumed run adopts the trials, and a rejected one stays out of
  // the runoff.
  FakeMeasurer again({1.0, 3.0, 0.9, 0.95, 1.2});
  result<Output> resumed =
      Autotuner("k/b").early_reject(10.0).log(dir_ / "k.trials.jsonl").run_objective(again);
  ASSERT_TRUE(resumed) << resumed.error().str();
  EXPECT_TRUE(again.rules.empty());  // nothing measured again
  EXPECT_TRUE(resumed->trials[1].rejected_early);
  EXPECT_EQ(resumed->rejected_early, 2u);
  ASSERT_EQ(again.runoffs.size(), 1u);
  EXPECT_EQ(again.runoffs[0], (std::pair<std::size_t, std::size_t>{2, 3}));
}

TEST_F(EarlyRejectSearchTest, IncumbentsAndTheCommittedWinnerMeasureInFull) {
  // The slow config 1 is required, the slow config 3 the committed winner: both in full.
  FakeMeasurer m({1.0, 5.0, 0.5, 4.0});
  result<Output> out = Autotuner("k/b")
                           .early_reject(10.0)
                           .require({Config{{"X", 0}}, Config{{"X", 1}}})
                           .soft_incumbent(Config{{"X", 3}})
                           .run_objective(m);
  ASSERT_TRUE(out) << out.error().str();
  ASSERT_EQ(m.rules.size(), 4u);
  EXPECT_FALSE(m.rules[0]);
  EXPECT_FALSE(m.rules[1]);
  EXPECT_FALSE(m.rules[2]);  // the committed winner
  EXPECT_TRUE(m.rules[3]);   // the search's candidate 2, which wins
  for (const Trial& t : out->trials)
    EXPECT_FALSE(t.rejected_early) << t.id();
  EXPECT_EQ(out->best, Config({{"X", 2}}));
}

TEST_F(EarlyRejectSearchTest, OffMeasuresEveryCandidateInFull) {
  FakeMeasurer m({1.0, 3.0, 0.9});
  result<Output> out = Autotuner("k/b").run_objective(m);
  ASSERT_TRUE(out);
  for (const auto& rule : m.rules)
    EXPECT_FALSE(rule);
  EXPECT_EQ(out->rejected_early, 0u);
  // Not when maximizing either: a score has no "slower".
  FakeMeasurer max({1.0, 3.0, 0.9});
  ASSERT_TRUE(Autotuner("k/b").early_reject(10.0).maximize().run_objective(max));
  for (const auto& rule : max.rules)
    EXPECT_FALSE(rule);
}

TEST_F(EarlyRejectSearchTest, AFlagWithoutARuleOrUnderItsThresholdIsIgnored) {
  // An incumbent's measurement can never have stopped early, whatever the objective says; nor
  // can a candidate whose median is under the threshold it was sent (docs/trust.md: a worker
  // that flags every answer must not keep the fastest config out).
  class Liar : public FakeMeasurer {
   public:
    using FakeMeasurer::FakeMeasurer;
    Trial measure(std::size_t index) override {
      Trial t = FakeMeasurer::measure(index);
      t.rejected_early = true;
      return t;
    }
  } m({1.0, 2.0});
  result<Output> out =
      Autotuner("k/b").early_reject(10.0).require({Config{{"X", 1}}}).run_objective(m);
  ASSERT_TRUE(out);
  EXPECT_FALSE(out->trials[0].rejected_early);  // required: no rule given
  EXPECT_FALSE(out->trials[1].rejected_early);  // 1.0 ms, under the threshold of 2.2 ms
  EXPECT_EQ(out->best, Config({{"X", 0}}));
  // Above its threshold the flag stands.
  Liar slow({4.0, 2.0});
  out = Autotuner("k/b").early_reject(10.0).require({Config{{"X", 1}}}).run_objective(slow);
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->trials[1].rejected_early);
  EXPECT_EQ(out->best, Config({{"X", 1}}));
}

TEST(EarlyRejectTrialTest, TheLogLineCarriesTheFlagAndTheSavedTime) {
  Trial t = Trial::measured(3.0, 2.9, 10);
  t.config = Config{{"X", 1}};
  t.rejected_early = true;
  t.times = TrialTimes{};
  t.times->saved_ms = 270;
  const nlohmann::json j = to_json(t);
  EXPECT_EQ(j.at("rejected_early"), true);
  EXPECT_EQ(j.at("times").at("saved_ms"), 270);
  result<Trial> back = trial_from_json(j);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, t);
  // A trial measured in full writes neither.
  Trial full = Trial::measured(1.0, 0.9, 100);
  full.config = Config{{"X", 2}};
  full.times = TrialTimes{};
  EXPECT_FALSE(to_json(full).contains("rejected_early"));
  EXPECT_FALSE(to_json(full).at("times").contains("saved_ms"));
  // Bad values are named.
  nlohmann::json bad = j;
  bad["rejected_early"] = "yes";
  EXPECT_EQ(trial_from_json(bad).error().message, "'rejected_early' must be true or false");
  nlohmann::json invalid = to_json([] {
    Trial i = Trial::invalid("boom");
    i.config = Config{{"X", 3}};
    return i;
  }());
  invalid["rejected_early"] = true;
  EXPECT_EQ(trial_from_json(invalid).error().message,
            "'rejected_early' is set on an invalid trial (only a measured one stops early)");
}

TEST(EarlyRejectProtocolTest, TheRuleGoesOutAndTheFlagComesBack) {
  MeasureRequest request{{Config{{"X", 1}}, "aa"}, EarlyReject{1.5, 0.01}};
  result<WorkerRequest> decoded = decode_request(encode(WorkerRequest{request}));
  ASSERT_TRUE(decoded);
  const auto& m = std::get<MeasureRequest>(*decoded);
  ASSERT_TRUE(m.reject);
  EXPECT_EQ(*m.reject, (EarlyReject{1.5, 0.01}));
  // Without a rule the request is as before.
  MeasureRequest plain{{Config{{"X", 1}}, "aa"}, std::nullopt};
  EXPECT_EQ(encode(WorkerRequest{plain}), R"({"config":{"X":1},"key":"aa","op":"measure"})");
  EXPECT_FALSE(std::get<MeasureRequest>(*decode_request(encode(WorkerRequest{plain}))).reject);
  EXPECT_FALSE(decode_request(R"({"config":{"X":1},"key":"aa","op":"measure",)"
                              R"("reject_above_ms":1,"reject_alpha":2})"));

  MeasureAnswer a;
  a.state.value = MeasuredState{3.0, 2.9, 10};
  a.rejected_early = true;
  a.times = TrialTimes{};
  a.times->saved_ms = 270;
  auto back = decode_measure_answer(encode(a));
  ASSERT_TRUE(back);
  const Trial t = std::get<MeasureAnswer>(*back).to_trial();
  EXPECT_TRUE(t.rejected_early);
  EXPECT_DOUBLE_EQ(t.times->saved_ms, 270);
}

TEST(EarlyRejectSettingsTest, BenchKeysParseAndAreChecked) {
  const std::string head =
      "schema = 1\nkernel = \"k\"\n[params]\nX = [1, 2]\n[[buckets]]\nname = \"all\"\n"
      "shape = {N = 1}\n[bench]\n";
  result<Space> defaults = Space::parse(head, "mem.toml");
  ASSERT_TRUE(defaults) << defaults.error().str();
  EXPECT_TRUE(defaults->bench().early_reject);
  EXPECT_DOUBLE_EQ(defaults->bench().reject_margin_pct, 10);
  result<Space> set =
      Space::parse(head + "early_reject = false\nreject_margin_pct = 25\n", "mem.toml");
  ASSERT_TRUE(set) << set.error().str();
  EXPECT_FALSE(set->bench().early_reject);
  EXPECT_DOUBLE_EQ(set->bench().reject_margin_pct, 25);
  // Not in the space's hash: it never changes a candidate measured in full.
  EXPECT_EQ(set->space_hash(), defaults->space_hash());
  EXPECT_EQ(Space::parse(head + "early_reject = 1\n", "mem.toml").error().str(),
            "mem.toml:9:16: error: 'early_reject' in [bench] must be true or false, got an int");
  EXPECT_EQ(Space::parse(head + "reject_margin_pct = -1\n", "mem.toml").error().str(),
            "mem.toml:9:21: error: 'reject_margin_pct' in [bench] must be a non-negative number "
            "of percent, got -1");
  EXPECT_EQ(Space::parse(head + "reject_margin_pct = 5000\n", "mem.toml").error().str(),
            "mem.toml:9:21: error: 'reject_margin_pct' in [bench] must be at most 1000 (percent "
            "above the best so far), got 5000");
}

TEST(EarlyRejectSummaryTest, TheSummarySaysWhatItSaved) {
  std::vector<Trial> trials(3);
  for (Trial& t : trials)
    t.times = TrialTimes{};
  trials[1].rejected_early = true;
  trials[1].times->saved_ms = 1500;
  trials[2].rejected_early = true;
  trials[2].times->saved_ms = 2000;
  std::optional<OverheadSummary> s = summarize_overhead(trials);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->rejected_early, 2u);
  const std::string text = describe_overhead(*s);
  EXPECT_NE(text.find("\nearly rejection: 2 of 3 candidates stopped early, 3.5 s of timed reps "
                      "saved"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace tune
