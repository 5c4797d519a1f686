// The runoff hook and the soft incumbent of the Autotuner (docs/search.md "The steps",
// docs/measurement.md "The paired runoff"), against a fake objective with scripted medians and
// runoffs.
#include <tuner/core/search/autotuner.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_dir.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;

/// Scripted objective: each config's sequential median, and for the runoff a per-config
/// paired time (or a setup failure), recording which finalists it was asked about.
class RunoffObjective : public Objective {
 public:
  explicit RunoffObjective(std::vector<int> values) {
    for (int v : values)
      configs_.push_back(Config{{"BN", v}});
  }
  const std::vector<Config>& configs() override { return configs_; }
  Trial measure(std::size_t index) override {
    const std::string id = configs_.at(index).id();
    measured.push_back(id);
    if (auto it = failures.find(id); it != failures.end()) return Trial::invalid(it->second);
    auto it = medians.find(id);
    const double median = it != medians.end() ? it->second : 10.0;
    return Trial::measured(median, median * 0.9, 20);
  }
  std::optional<RunoffPairs> runoff(std::size_t incumbent, std::size_t challenger) override {
    if (!has_runoff) return std::nullopt;
    const std::string inc = configs_.at(incumbent).id();
    const std::string ch = configs_.at(challenger).id();
    runoffs.emplace_back(inc, ch);
    RunoffPairs p;
    if (auto it = setup_failures.find(inc); it != setup_failures.end())
      p.incumbent_failure = it->second;
    if (auto it = setup_failures.find(ch); it != setup_failures.end())
      p.challenger_failure = it->second;
    if (p.incumbent_failure || p.challenger_failure) return p;
    if (!bench_failure.empty()) {
      p.failure = bench_failure;
      return p;
    }
    for (int i = 0; i < 20; ++i) {
      // A small alternating jitter, so that the sign test sees every pair.
      const double jitter = (i % 2 ? 1.0 : -1.0) * 1e-4;
      p.incumbent_ms.push_back(paired.at(inc) + jitter);
      p.challenger_ms.push_back(paired.at(ch) - jitter);
    }
    p.device = "Fake GPU";
    if (auto it = alone.find(inc); it != alone.end()) p.incumbent_alone_ms = it->second;
    if (auto it = alone.find(ch); it != alone.end()) p.challenger_alone_ms = it->second;
    return p;
  }

  std::vector<Config> configs_;
  std::map<std::string, double> medians;
  std::map<std::string, std::string> failures;
  std::map<std::string, double> paired;  // the runoff's time per config
  std::map<std::string, double> alone;   // timed alone before the pairs, when set
  std::map<std::string, std::string> setup_failures;
  std::string bench_failure;
  bool has_runoff = true;
  std::vector<std::string> measured;
  std::vector<std::pair<std::string, std::string>> runoffs;  // (incumbent, challenger)
};

std::string id(int bn) {
  return Config{{"BN", bn}}.id();
}

/// The log's runoff lines, as JSON.
std::vector<nlohmann::json> runoff_lines(const fs::path& log) {
  std::ifstream in(log);
  std::vector<nlohmann::json> out;
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["phase"] == "runoff") out.push_back(j);
  }
  return out;
}

class AutotunerRunoffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_test_dir("autotuner_runoff_test");
    log_ = dir_ / "k.trials.jsonl";
  }
  void TearDown() override { fs::remove_all(dir_); }

  Autotuner tuner() { return std::move(Autotuner("k/b").arch("sm_90").log(log_)); }

  fs::path dir_;
  fs::path log_;
};

TEST_F(AutotunerRunoffTest, ObjectiveWithoutRunoffKeepsTheSequentialBest) {
  RunoffObjective obj({1, 2, 3});
  obj.has_runoff = false;
  obj.medians = {{id(1), 3.0}, {id(2), 1.0}, {id(3), 2.0}};
  result<Output> out = tuner().run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_EQ(out->best->id(), id(2));
  EXPECT_FALSE(out->runoff.has_value());
  EXPECT_TRUE(out->runoff_trials.empty());
  EXPECT_TRUE(obj.runoffs.empty());
}

TEST_F(AutotunerRunoffTest, ChallengerThatIsFasterInTheRunoffWins) {
  RunoffObjective obj({1, 2, 3});
  obj.medians = {{id(1), 3.0}, {id(2), 1.0}, {id(3), 1.01}};
  obj.paired = {{id(2), 1.0}, {id(3), 0.9}};
  result<Output> out = tuner().run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  ASSERT_EQ(obj.runoffs.size(), 1u);
  EXPECT_EQ(obj.runoffs[0], std::make_pair(id(2), id(3)));  // the sequential leader defends
  ASSERT_TRUE(out->runoff);
  EXPECT_EQ(out->runoff->outcome, RunoffOutcome::challenger_wins);
  EXPECT_EQ(out->runoff->winner, id(3));
  EXPECT_EQ(out->best->id(), id(3));
  EXPECT_EQ(out->trials[*out->best_index].id(), id(3));
  ASSERT_EQ(out->runoff_trials.size(), 2u);
  EXPECT_EQ(out->runoff_trials[0].id(), id(2));
  EXPECT_EQ(out->runoff_trials[1].id(), id(3));
  for (const Trial& t : out->runoff_trials) {
    EXPECT_EQ(t.phase, Phase::runoff);
    EXPECT_EQ(t.runoff["winner"], id(3));
    EXPECT_EQ(t.runoff["pairs"], 20);
    EXPECT_EQ(t.device, std::optional<std::string>("Fake GPU"));
  }
  EXPECT_NEAR(out->runoff_trials[1].state.measured()->median_ms, 0.9, 1e-3);

  // Both runoff trials are in the log, with their statistics.
  std::vector<nlohmann::json> logged = runoff_lines(log_);
  ASSERT_EQ(logged.size(), 2u);
  EXPECT_EQ(logged[0]["config_id"], id(2));
  EXPECT_EQ(logged[0]["runoff"]["outcome"], "challenger_wins");
  EXPECT_EQ(logged[1]["config_id"], id(3));
}

TEST_F(AutotunerRunoffTest, RunoffMedianFarFromTheSequentialOneIsAWarning) {
  // Equal sequentially; the runoff times BN=3 11% slower than its own sequential median (the
  // artefact of a timing mode), BN=2 as sequentially.
  RunoffObjective obj({1, 2, 3});
  obj.medians = {{id(1), 3.0}, {id(2), 1.0}, {id(3), 1.001}};
  obj.paired = {{id(2), 1.0}, {id(3), 1.11}};
  std::vector<std::string> warned;
  result<Output> out =
      tuner().on_warning([&](const std::string& w) { warned.push_back(w); }).run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  ASSERT_TRUE(out->runoff);
  ASSERT_EQ(out->runoff->warnings.size(), 1u);
  const std::string& w = out->runoff->warnings[0];
  EXPECT_NE(w.find("the runoff timed " + id(3) +
                   " at 1.11 ms, +10.9% from its sequential "
                   "median 1.001 ms (more than 3%)"),
            std::string::npos)
      << w;
  EXPECT_EQ(warned, out->runoff->warnings);
  // In the log: in the runoff statistics of both lines, and among the trials' warnings.
  std::vector<nlohmann::json> logged = runoff_lines(log_);
  ASSERT_EQ(logged.size(), 2u);
  for (const nlohmann::json& j : logged) {
    EXPECT_EQ(j["runoff"]["warnings"], nlohmann::json::array({w}));
    EXPECT_EQ(j["warnings"], nlohmann::json::array({w}));
  }
}

TEST_F(AutotunerRunoffTest, FinalistTimedAloneTellsDriftFromADisagreementOfTheModes) {
  // BN=3 was 1.001 ms in the search, is 1.11 ms alone and paired now: its time moved (drift),
  // the modes agree. BN=2 is 1.0 ms alone and 1.05 paired: the modes disagree.
  RunoffObjective obj({1, 2, 3});
  obj.medians = {{id(1), 3.0}, {id(2), 1.0}, {id(3), 1.001}};
  obj.paired = {{id(2), 1.05}, {id(3), 1.11}};
  obj.alone = {{id(2), 1.0}, {id(3), 1.11}};
  result<Output> out = tuner().run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  ASSERT_EQ(out->runoff->warnings.size(), 2u);
  EXPECT_NE(out->runoff->warnings[0].find("the runoff timed " + id(2) +
                                          " at 1.05 ms paired, +5.0% from 1 ms timed alone"),
            std::string::npos)
      << out->runoff->warnings[0];
  EXPECT_NE(out->runoff->warnings[1].find(id(3) + " timed 1.11 ms alone before the runoff, "
                                                  "+10.9% from its search median 1.001 ms"),
            std::string::npos)
      << out->runoff->warnings[1];
  EXPECT_DOUBLE_EQ(out->runoff->incumbent_alone_ms, 1.0);
  EXPECT_DOUBLE_EQ(out->runoff->challenger_alone_ms, 1.11);
  const nlohmann::json logged = runoff_lines(log_).at(0)["runoff"];
  EXPECT_DOUBLE_EQ(logged["challenger_alone_ms"].get<double>(), 1.11);
}

TEST_F(AutotunerRunoffTest, RunoffThatAgreesWithTheSequentialMediansWarnsNothing) {
  RunoffObjective obj({1, 2, 3});
  obj.medians = {{id(1), 3.0}, {id(2), 1.0}, {id(3), 1.01}};
  obj.paired = {{id(2), 1.02}, {id(3), 0.985}};  // within 3% of each sequential median
  result<Output> out = tuner().run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_TRUE(out->runoff->warnings.empty());
  for (const nlohmann::json& j : runoff_lines(log_)) {
    EXPECT_FALSE(j["runoff"].contains("warnings")) << j;
    EXPECT_EQ(j["warnings"], nlohmann::json::array());
  }
}

TEST_F(AutotunerRunoffTest, TieGoesToTheRequiredConfig) {
  RunoffObjective obj({1, 2, 3});
  obj.medians = {{id(1), 1.0}, {id(2), 1.005}, {id(3), 5.0}};
  obj.paired = {{id(1), 1.0}, {id(2), 1.002}};
  // BN=2 is required; BN=1 leads sequentially. Inside the margin: a tie, the required one wins.
  result<Output> out = tuner().require({Config{{"BN", 2}}}).run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  ASSERT_EQ(obj.runoffs.size(), 1u);
  EXPECT_EQ(obj.runoffs[0], std::make_pair(id(2), id(1)));
  EXPECT_EQ(out->runoff->outcome, RunoffOutcome::tie);
  EXPECT_EQ(out->runoff->winner, id(2));
  EXPECT_EQ(out->best->id(), id(2));
}

TEST_F(AutotunerRunoffTest, SoftIncumbentIsMeasuredFirstAndDefendsTheRunoff) {
  RunoffObjective obj({1, 2, 3, 4});
  obj.medians = {{id(1), 5.0}, {id(2), 1.0}, {id(3), 1.001}, {id(4), 5.0}};
  obj.paired = {{id(2), 1.0}, {id(3), 1.001}};
  result<Output> out =
      tuner().require({Config{{"BN", 4}}}).soft_incumbent(Config{{"BN", 3}}).run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_EQ(obj.measured, (std::vector<std::string>{id(4), id(3), id(1), id(2)}));
  ASSERT_EQ(obj.runoffs.size(), 1u);
  EXPECT_EQ(obj.runoffs[0], std::make_pair(id(3), id(2)));
  EXPECT_EQ(out->runoff->outcome, RunoffOutcome::tie);
  EXPECT_EQ(out->best->id(), id(3));
  EXPECT_TRUE(out->warnings.empty());
}

TEST_F(AutotunerRunoffTest, SoftIncumbentWinsATieOfSequentialMedians) {
  RunoffObjective obj({1, 2, 3});
  obj.has_runoff = false;
  obj.medians = {{id(1), 1.0}, {id(2), 2.0}, {id(3), 1.0}};
  result<Output> out = tuner().soft_incumbent(Config{{"BN", 3}}).run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_EQ(out->best->id(), id(3));
}

TEST_F(AutotunerRunoffTest, SoftIncumbentNotInTheSpaceIsDroppedWithAWarning) {
  RunoffObjective obj({1, 2});
  obj.paired = {{id(1), 10.0}, {id(2), 10.0}};  // as the search timed them (10 ms by default)
  std::vector<std::string> seen;
  result<Output> out = tuner()
                           .soft_incumbent(Config{{"BN", 7}})
                           .on_warning([&](const std::string& w) { seen.push_back(w); })
                           .run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_EQ(out->warnings,
            (std::vector<std::string>{"committed winner BN=7 is no longer in the space; dropped"}));
  EXPECT_EQ(seen, out->warnings);
  EXPECT_EQ(obj.measured, (std::vector<std::string>{id(1), id(2)}));
  EXPECT_TRUE(out->best.has_value());
}

TEST_F(AutotunerRunoffTest, FailingSoftIncumbentIsDroppedAndTheSearchGoesOn) {
  RunoffObjective obj({1, 2, 3});
  obj.medians = {{id(1), 2.0}, {id(3), 1.0}};
  obj.failures = {{id(2), "check failed"}};
  obj.paired = {{id(1), 2.0}, {id(3), 1.0}};
  result<Output> out = tuner().soft_incumbent(Config{{"BN", 2}}).run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_FALSE(out->incumbent_failure.has_value());
  EXPECT_EQ(out->warnings,
            (std::vector<std::string>{"committed winner BN=2 failed: check failed; dropped"}));
  EXPECT_EQ(obj.measured, (std::vector<std::string>{id(2), id(1), id(3)}));
  ASSERT_EQ(obj.runoffs.size(), 1u);
  EXPECT_EQ(obj.runoffs[0], std::make_pair(id(3), id(1)));
  EXPECT_EQ(out->best->id(), id(3));
}

TEST_F(AutotunerRunoffTest, ForfeitingLeaderIsLoggedInvalidAndTheOtherWins) {
  RunoffObjective obj({1, 2, 3});
  obj.medians = {{id(1), 1.0}, {id(2), 2.0}, {id(3), 3.0}};
  obj.setup_failures = {{id(1), "'y' is wrong: relative error nan exceeds 1e-05"}};
  result<Output> out = tuner().run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_EQ(out->best->id(), id(2));
  ASSERT_TRUE(out->runoff);
  EXPECT_EQ(out->runoff->outcome, RunoffOutcome::forfeit);
  EXPECT_EQ(out->runoff->winner, id(2));
  EXPECT_EQ(out->runoff->pairs, 0);
  ASSERT_EQ(out->runoff_trials.size(), 1u);
  const Trial& t = out->runoff_trials[0];
  EXPECT_EQ(t.id(), id(1));
  EXPECT_EQ(t.phase, Phase::runoff);
  ASSERT_FALSE(t.is_measured());
  EXPECT_EQ(t.state.invalid()->reason,
            "runoff setup failed: 'y' is wrong: relative error nan exceeds 1e-05");
}

TEST_F(AutotunerRunoffTest, ForfeitingChallengerLeavesTheIncumbent) {
  RunoffObjective obj({1, 2});
  obj.medians = {{id(1), 1.0}, {id(2), 2.0}};
  obj.setup_failures = {{id(2), "out of memory"}};
  result<Output> out = tuner().run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_EQ(out->best->id(), id(1));
  ASSERT_EQ(out->runoff_trials.size(), 1u);
  EXPECT_EQ(out->runoff_trials[0].state.invalid()->reason, "runoff setup failed: out of memory");
}

TEST_F(AutotunerRunoffTest, BothFinalistsForfeitingLeavesNoWinner) {
  RunoffObjective obj({1, 2});
  obj.medians = {{id(1), 1.0}, {id(2), 2.0}};
  obj.setup_failures = {{id(1), "a"}, {id(2), "b"}};
  result<Output> out = tuner().run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_FALSE(out->best.has_value());
  EXPECT_FALSE(out->best_index.has_value());
  EXPECT_EQ(out->runoff_trials.size(), 2u);
  EXPECT_EQ(out->warnings,
            (std::vector<std::string>{
                "both finalists failed their runoff setup (BN=1 and BN=2); no winner"}));
}

TEST_F(AutotunerRunoffTest, FailedPairedBenchKeepsTheIncumbent) {
  RunoffObjective obj({1, 2});
  obj.medians = {{id(1), 2.0}, {id(2), 1.0}};
  obj.bench_failure = "bench: a rep timed nan ms, not a finite time";
  result<Output> out = tuner().require({Config{{"BN", 1}}}).run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_EQ(out->best->id(), id(1));
  EXPECT_FALSE(out->runoff.has_value());
  EXPECT_TRUE(out->runoff_trials.empty());
  EXPECT_EQ(out->warnings, (std::vector<std::string>{
                               "runoff of BN=2 against BN=1 failed: bench: a rep timed nan ms, "
                               "not a finite time; BN=1 keeps its place"}));
}

TEST_F(AutotunerRunoffTest, NoRunoffWithOneMeasuredConfigOrNoBudget) {
  {
    RunoffObjective obj({1, 2});
    obj.failures = {{id(2), "x"}};
    result<Output> out = tuner().run_objective(obj);
    ASSERT_TRUE(out) << out.error().str();
    EXPECT_EQ(out->best->id(), id(1));
    EXPECT_TRUE(obj.runoffs.empty());
  }
  fs::remove(log_);
  {
    RunoffObjective obj({1, 2});
    obj.paired = {{id(1), 1.0}, {id(2), 1.0}};
    // A zero budget: only required configs are measured, so nothing is left for a runoff.
    result<Output> out =
        tuner().require({Config{{"BN", 1}}, Config{{"BN", 2}}}).budget(0).run_objective(obj);
    ASSERT_TRUE(out) << out.error().str();
    EXPECT_EQ(obj.measured.size(), 2u);
    EXPECT_TRUE(obj.runoffs.empty());
    EXPECT_FALSE(out->budget_exhausted);  // every candidate was visited
    EXPECT_EQ(out->best->id(), id(1));
    EXPECT_EQ(out->warnings,
              (std::vector<std::string>{"no runoff: the budget is exhausted (0.0 s left, one "
                                        "round of pairs needs about 0.0 s); BN=1 wins on its "
                                        "sequential median"}));
    EXPECT_EQ(out->runoff_skipped, out->warnings.front());
  }
}

TEST_F(AutotunerRunoffTest, ResumeReRunsTheRunoffButNoCompletedTrial) {
  RunoffObjective first({1, 2, 3});
  first.medians = {{id(1), 3.0}, {id(2), 1.0}, {id(3), 1.01}};
  first.paired = {{id(2), 1.0}, {id(3), 0.9}};
  ASSERT_TRUE(tuner().run_objective(first));

  RunoffObjective again = first;
  again.measured.clear();
  again.runoffs.clear();
  result<Output> out = tuner().run_objective(again);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_TRUE(again.measured.empty());
  EXPECT_EQ(out->resumed, 3u);
  ASSERT_EQ(again.runoffs.size(), 1u);
  EXPECT_EQ(again.runoffs[0], std::make_pair(id(2), id(3)));
  EXPECT_EQ(out->best->id(), id(3));
  // The log now holds four runoff lines: two per run, none adopted as a search trial.
  EXPECT_EQ(runoff_lines(log_).size(), 4u);
}

/// Adopts a forged trial (another host's, as the remote store's SharedTrials does) for the
/// configs in `forged`, until the search asks for the config to be measured here.
class AdoptingObjective : public ForwardingObjective {
 public:
  using ForwardingObjective::ForwardingObjective;
  Trial measure(std::size_t index) override {
    if (auto it = forged.find(index); it != forged.end() && !distrusted.contains(index)) {
      Trial t = Trial::measured(it->second, it->second * 0.9, 20);
      t.remote = "evil-host";
      return t;
    }
    return inner_.measure(index);
  }
  void distrust_adopted(std::size_t index) override { distrusted.insert(index); }
  bool has_runoff() override { return runoff_follows; }  // two finalists per round when set
  std::map<std::size_t, double> forged;                  // index -> adopted median
  bool runoff_follows = false;
  std::set<std::size_t> distrusted;
};

// Issue 35: two adopted trials that give two slow configs fast times became the finalists, the
// truly fastest config never entered the runoff, and the record took the adopted median.
TEST_F(AutotunerRunoffTest, ForgedAdoptedFinalistsAreMeasuredHereAndDiscarded) {
  RunoffObjective inner({1, 2, 3, 4, 5});
  inner.medians = {{id(1), 7.8}, {id(2), 9.0}, {id(3), 2.0}, {id(4), 2.1}, {id(5), 8.0}};
  inner.paired = {{id(3), 2.0}, {id(4), 2.1}};
  AdoptingObjective obj(inner);
  obj.forged = {{0, 0.31}, {1, 0.32}};
  obj.runoff_follows = true;  // both forged finalists are checked in the first round
  std::vector<std::string> warnings;
  result<Output> out =
      tuner().on_warning([&](const std::string& w) { warnings.push_back(w); }).run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  // Both forged finalists were measured here (after the search had adopted them), then the
  // runoff ran between the two truly fastest.
  EXPECT_EQ(inner.measured, (std::vector<std::string>{id(3), id(4), id(5), id(1), id(2)}));
  ASSERT_EQ(inner.runoffs.size(), 1u);
  EXPECT_EQ(inner.runoffs[0], std::make_pair(id(3), id(4)));
  ASSERT_TRUE(out->best);
  EXPECT_EQ(out->best->id(), id(3));
  // The winner's median is this machine's.
  const Trial& best = out->trials[*out->best_index];
  EXPECT_FALSE(best.adopted());
  EXPECT_DOUBLE_EQ(best.state.measured()->median_ms, 2.0);
  ASSERT_EQ(out->discarded.size(), 2u);
  EXPECT_EQ(out->discarded[0].id(), id(1));
  EXPECT_EQ(out->checked, 2u);
  // The forged trials are replaced by the checks, which say what they checked.
  for (const Trial& t : out->trials)
    EXPECT_FALSE(t.adopted()) << t.id();
  ASSERT_GE(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("BN=1 measured 7.8 ms here, and the remote store (measured on "
                             "evil-host) said 0.31 ms (more than 3% apart): that adopted trial is "
                             "discarded"),
            std::string::npos)
      << warnings[0] << "|" << warnings[1];
  // The log keeps the adopted trial, then the check that discards it.
  std::ifstream in(log_);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(nlohmann::json::parse(line));
  std::vector<nlohmann::json> bn1;
  for (const nlohmann::json& j : lines)
    if (j.value("config_id", "") == id(1)) bn1.push_back(j);
  ASSERT_EQ(bn1.size(), 2u);
  EXPECT_EQ(bn1[0]["remote"], "evil-host");
  EXPECT_EQ(bn1[1]["checks"], (nlohmann::json{{"from", "the remote store (measured on evil-host)"},
                                              {"median_ms", 0.31},
                                              {"agreed", false}}));
  EXPECT_EQ(bn1[1]["median_ms"], 7.8);

  // Resumed, the checks stand: nothing adopted again, nothing measured, the same winner.
  RunoffObjective inner2 = inner;
  inner2.measured.clear();
  inner2.runoffs.clear();
  AdoptingObjective again(inner2);
  again.forged = obj.forged;
  result<Output> resumed = tuner().run_objective(again);
  ASSERT_TRUE(resumed) << resumed.error().str();
  EXPECT_TRUE(inner2.measured.empty());
  EXPECT_EQ(again.distrusted, (std::set<std::size_t>{0, 1}));
  EXPECT_EQ(resumed->best->id(), id(3));
  EXPECT_TRUE(resumed->discarded.empty());
}

TEST_F(AutotunerRunoffTest, AgreeingAdoptedFinalistsAreReplacedByTheMeasurementHere) {
  RunoffObjective inner({1, 2, 3});
  inner.has_runoff = false;
  inner.medians = {{id(1), 1.01}, {id(2), 5.0}, {id(3), 3.0}};
  AdoptingObjective obj(inner);
  obj.forged = {{0, 1.0}};  // honest: within the agreement threshold
  result<Output> out = tuner().run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_EQ(out->best->id(), id(1));
  EXPECT_TRUE(out->discarded.empty());
  EXPECT_EQ(out->checked, 1u);
  const Trial& best = out->trials[*out->best_index];
  EXPECT_FALSE(best.adopted());
  EXPECT_DOUBLE_EQ(best.state.measured()->median_ms, 1.01);
  ASSERT_TRUE(best.checks);
  EXPECT_TRUE(best.checks->agreed);
}

TEST_F(AutotunerRunoffTest, ManyForgedTrialsCannotExhaustTheCheck) {
  // Twenty forged fast trials from one host and the truly fastest measured here (BN=21). The
  // first disagreement distrusts the host: none of its trials is a finalist any more, and each
  // is measured here (there is no cap on the checks that a flood could exhaust).
  std::vector<int> values;
  for (int v = 1; v <= 22; ++v)
    values.push_back(v);
  RunoffObjective inner(values);
  inner.has_runoff = false;
  for (int v = 1; v <= 22; ++v)
    inner.medians[id(v)] = v == 21 ? 1.0 : 50.0 + v;
  AdoptingObjective obj(inner);
  for (std::size_t i = 0; i < 20; ++i)
    obj.forged[i] = 0.1 + 0.01 * static_cast<double>(i);
  std::vector<std::string> warnings;
  result<Output> out =
      tuner().on_warning([&](const std::string& w) { warnings.push_back(w); }).run_objective(obj);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_EQ(out->checked, 20u);
  EXPECT_EQ(out->discarded.size(), 20u);
  EXPECT_EQ(inner.measured.size(), 2u + 20u);
  EXPECT_EQ(out->best->id(), id(21));
  EXPECT_FALSE(out->trials[*out->best_index].adopted());
  std::size_t distrusts = 0;
  for (const std::string& w : warnings)
    distrusts += w.find(
                     "every other trial of the remote store (measured on evil-host) is "
                     "distrusted for the rest of this tune") != std::string::npos;
  EXPECT_EQ(distrusts, 1u);
  // The checks went best adopted median first: BN=1 (0.1 ms) first.
  EXPECT_EQ(inner.measured[2], id(1));
}

TEST_F(AutotunerRunoffTest, EarlyRejectionIgnoresAdoptedMedians) {
  // A forged 0.01 ms trial must not make every candidate measured here stop early.
  RunoffObjective inner({1, 2, 3});
  inner.has_runoff = false;
  inner.medians = {{id(1), 9.0}, {id(2), 2.0}, {id(3), 3.0}};
  AdoptingObjective obj(inner);
  obj.forged = {{0, 0.01}};
  struct Rules : ForwardingObjective {
    using ForwardingObjective::ForwardingObjective;
    void reject_above(std::optional<EarlyReject> rule) override {
      if (rule) thresholds.push_back(rule->above_ms);
    }
    std::vector<double> thresholds;
  } rules(obj);
  result<Output> out = tuner().early_reject(5.0).run_objective(rules);
  ASSERT_TRUE(out) << out.error().str();
  // BN=2 is measured under no rule (nothing measured here yet), BN=3 under BN=2's 2 ms + 5%.
  ASSERT_EQ(rules.thresholds.size(), 1u);
  EXPECT_DOUBLE_EQ(rules.thresholds[0], 2.0 * 1.05);
  EXPECT_EQ(out->best->id(), id(2));
}

}  // namespace
}  // namespace tune
