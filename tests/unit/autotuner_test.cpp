// The search's behaviours (docs/search.md "The steps"), on the objective path, against a fake
// objective with scripted results.
#include <tuner/core/search/autotuner.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <tuner/core/space/space.hpp>

#include "test_dir.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;

/// Scripted objective: each config's median (or failure), a budget that shrinks as it
/// measures, and a record of what it measured.
class FakeObjective : public Objective {
 public:
  explicit FakeObjective(std::vector<Config> configs) : configs_(std::move(configs)) {}

  const std::vector<Config>& configs() override { return configs_; }
  Trial measure(std::size_t index) override {
    const std::string id = configs_.at(index).id();
    measured.push_back(id);
    if (throw_on == id) throw std::runtime_error("interrupted");
    if (budget) *budget -= cost_s;
    if (auto it = failures.find(id); it != failures.end()) return Trial::invalid(it->second);
    auto it = medians.find(id);
    double median = it != medians.end() ? it->second : 10.0;
    return Trial::measured(median, median * 0.9, 20);
  }
  std::optional<double> budget_remaining() override { return budget; }
  std::optional<std::string> cache_key(std::size_t index) override {
    if (keys.empty()) return std::nullopt;
    return keys.at(index);
  }

  std::vector<Config> configs_;
  std::map<std::string, double> medians;
  std::map<std::string, std::string> failures;
  std::vector<std::optional<std::string>> keys;
  std::optional<double> budget;  // seconds left; each measurement costs cost_s
  double cost_s = 1.0;
  std::string throw_on;
  std::vector<std::string> measured;  // config ids, in measuring order
};

std::vector<Config> space_of(std::initializer_list<int> values) {
  std::vector<Config> out;
  for (int v : values)
    out.push_back(Config{{"BN", v}});
  return out;
}

std::string id(int bn) {
  return Config{{"BN", bn}}.id();
}

std::vector<std::string> ids(const Output& out) {
  std::vector<std::string> v;
  for (const Trial& t : out.trials)
    v.push_back(t.id());
  return v;
}

class AutotunerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_test_dir("autotuner_test");
    log_ = dir_ / "fmha.trials.jsonl";
  }
  void TearDown() override { fs::remove_all(dir_.parent_path()); }

  Output run(Autotuner& tuner, Objective& objective) {
    result<Output> out = tuner.run_objective(objective);
    if (!out.has_value()) throw std::runtime_error(out.error().str());
    return std::move(*out);
  }
  std::vector<std::string> log_lines() const {
    std::ifstream in(log_);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
      lines.push_back(line);
    return lines;
  }

  fs::path dir_;
  fs::path log_;
};

TEST_F(AutotunerTest, GridVisitsEveryConfigInOrderAndTheLowestMedianWins) {
  FakeObjective obj(space_of({16, 32, 64, 128}));
  obj.medians = {{id(16), 4.0}, {id(32), 2.0}, {id(64), 3.0}, {id(128), 5.0}};
  Autotuner tuner("fmha_decode");
  Output out = run(tuner, obj);
  EXPECT_EQ(obj.measured, (std::vector<std::string>{id(16), id(32), id(64), id(128)}));
  EXPECT_EQ(ids(out), obj.measured);
  EXPECT_EQ(out.best, Config({{"BN", 32}}));
  EXPECT_EQ(out.best_index, 1u);
  for (const Trial& t : out.trials) {
    EXPECT_EQ(t.phase, Phase::search);
    EXPECT_FALSE(t.time.empty());
  }
  EXPECT_EQ(out.resumed, 0u);
  EXPECT_FALSE(out.budget_exhausted);
  EXPECT_FALSE(out.incumbent_failure);
}

TEST_F(AutotunerTest, MaximizeTakesTheHighestScore) {
  FakeObjective obj(space_of({16, 32, 64}));
  obj.medians = {{id(16), 400.0}, {id(32), 900.0}, {id(64), 300.0}};
  Autotuner tuner("engine");
  tuner.maximize();
  EXPECT_EQ(run(tuner, obj).best, Config({{"BN", 32}}));
}

TEST_F(AutotunerTest, PruneDropsConfigsBeforeAnythingElse) {
  FakeObjective obj(space_of({16, 32, 64, 128}));
  obj.medians = {{id(128), 0.5}};
  Autotuner tuner("fmha_decode");
  tuner.prune([](const Config& c) { return *c.int_param("BN") <= 64; });
  Output out = run(tuner, obj);
  EXPECT_EQ(obj.measured, (std::vector<std::string>{id(16), id(32), id(64)}));
  EXPECT_EQ(out.trials.size(), 3u);
}

TEST_F(AutotunerTest, IncumbentsAreMeasuredFirstOnceAndAsRequired) {
  FakeObjective obj(space_of({16, 32, 64, 128}));
  obj.medians = {{id(16), 1.0}};
  Autotuner tuner("fmha_decode");
  tuner.require({Config{{"BN", 64}}, Config{{"BN", 32}}, Config{{"BN", 64}}});
  Output out = run(tuner, obj);
  EXPECT_EQ(obj.measured, (std::vector<std::string>{id(64), id(32), id(16), id(128)}));
  EXPECT_EQ(out.trials[0].phase, Phase::required);
  EXPECT_EQ(out.trials[1].phase, Phase::required);
  EXPECT_EQ(out.trials[2].phase, Phase::search);
  EXPECT_EQ(out.best, Config({{"BN", 16}}));
}

TEST_F(AutotunerTest, IncumbentWinsATie) {
  FakeObjective obj(space_of({16, 32}));
  obj.medians = {{id(16), 2.0}, {id(32), 2.0}};
  Autotuner tuner("fmha_decode");
  tuner.require({Config{{"BN", 32}}});
  EXPECT_EQ(run(tuner, obj).best, Config({{"BN", 32}}));
}

TEST_F(AutotunerTest, MissingIncumbentIsAnErrorBeforeAnythingIsMeasured) {
  FakeObjective obj(space_of({16, 32, 64, 128}));
  Autotuner tuner("fmha_decode");
  tuner.log(log_).prune([](const Config& c) { return *c.int_param("BN") <= 64; });
  tuner.require({Config{{"BN", 16}}, Config{{"BN", 128}}});
  result<Output> out = tuner.run_objective(obj);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().str(), "error: required config 'BN=128' is not in the space after pruning");
  EXPECT_TRUE(obj.measured.empty());
  EXPECT_EQ(log_lines().size(), 1u);  // the log was opened (and headed) first

  Autotuner plain("fmha_decode");
  plain.require({Config{{"BM", 16}}});
  out = plain.run_objective(obj);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().str(), "error: required config 'BM=16' is not in the space");
}

TEST_F(AutotunerTest, FailingIncumbentStopsTheRunBeforeTheSearch) {
  FakeObjective obj(space_of({16, 32, 64}));
  obj.failures = {{id(32), "exit status 3: out of memory"}};
  Autotuner tuner("fmha_decode");
  tuner.log(log_).require({Config{{"BN", 64}}, Config{{"BN", 32}}});
  Output out = run(tuner, obj);
  EXPECT_EQ(out.incumbent_failure,
            "incumbent BN=32 failed: exit status 3: out of memory; cannot guarantee the winner "
            "beat it");
  EXPECT_EQ(obj.measured, (std::vector<std::string>{id(64), id(32)}));
  EXPECT_EQ(out.best, std::nullopt);
  EXPECT_EQ(out.trials.size(), 2u);
  EXPECT_EQ(log_lines().size(), 3u);  // header + both incumbents
}

TEST_F(AutotunerTest, FailingCandidateIsLoggedInvalidAndTheSearchGoesOn) {
  FakeObjective obj(space_of({16, 32, 64}));
  obj.failures = {{id(16), "killed by signal SIGSEGV: bad"}};
  obj.medians = {{id(32), 3.0}, {id(64), 2.0}};
  Autotuner tuner("fmha_decode");
  tuner.log(log_);
  Output out = run(tuner, obj);
  EXPECT_EQ(obj.measured.size(), 3u);
  ASSERT_NE(out.trials[0].state.invalid(), nullptr);
  EXPECT_EQ(out.trials[0].state.invalid()->reason, "killed by signal SIGSEGV: bad");
  EXPECT_EQ(out.best, Config({{"BN", 64}}));
  auto lines = log_lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[1].find(R"("reason":"killed by signal SIGSEGV: bad")"), std::string::npos);
}

TEST_F(AutotunerTest, NothingValidMeansNoBest) {
  FakeObjective obj(space_of({16, 32}));
  obj.failures = {{id(16), "a"}, {id(32), "b"}};
  Autotuner tuner("fmha_decode");
  Output out = run(tuner, obj);
  EXPECT_EQ(out.best, std::nullopt);
  EXPECT_EQ(out.best_index, std::nullopt);
  EXPECT_EQ(out.trials.size(), 2u);
}

TEST_F(AutotunerTest, ZeroBudgetMeasuresOnlyTheIncumbents) {
  FakeObjective obj(space_of({16, 32, 64}));
  Autotuner tuner("fmha_decode");
  tuner.budget(0).require({Config{{"BN", 32}}});
  Output out = run(tuner, obj);
  EXPECT_EQ(obj.measured, std::vector<std::string>{id(32)});
  EXPECT_TRUE(out.budget_exhausted);
  EXPECT_EQ(out.best, Config({{"BN", 32}}));
}

TEST_F(AutotunerTest, ObjectiveBudgetIsCheckedBetweenCandidates) {
  FakeObjective obj(space_of({16, 32, 64, 128, 256}));
  obj.budget = 2.5;  // each measurement costs 1 s: three fit (2.5 -> 1.5 -> 0.5 -> -0.5)
  Autotuner tuner("fmha_decode");
  tuner.require({Config{{"BN", 256}}});
  Output out = run(tuner, obj);
  EXPECT_EQ(obj.measured, (std::vector<std::string>{id(256), id(16), id(32)}));
  EXPECT_TRUE(out.budget_exhausted);

  // Incumbents are measured whatever the budget.
  FakeObjective spent(space_of({16, 32, 64}));
  spent.budget = 0;
  Autotuner again("fmha_decode");
  again.require({Config{{"BN", 64}}, Config{{"BN", 16}}});
  run(again, spent);
  EXPECT_EQ(spent.measured, (std::vector<std::string>{id(64), id(16)}));
}

TEST_F(AutotunerTest, ResumeMeasuresNoCompletedTrialTwiceAndRetriesInvalidOnes) {
  FakeObjective first(space_of({16, 32, 64}));
  first.failures = {{id(32), "flaky"}};
  first.medians = {{id(16), 3.0}, {id(64), 2.0}};
  Autotuner tuner("fmha_decode");
  tuner.log(log_).require({Config{{"BN", 64}}});
  run(tuner, first);
  EXPECT_EQ(first.measured.size(), 3u);

  FakeObjective second(space_of({16, 32, 64}));
  second.medians = {{id(32), 1.0}};
  Output out = run(tuner, second);
  EXPECT_EQ(second.measured, std::vector<std::string>{id(32)});
  EXPECT_EQ(out.resumed, 2u);
  EXPECT_EQ(ids(out), (std::vector<std::string>{id(64), id(16), id(32)}));
  EXPECT_EQ(out.trials[0].phase, Phase::required);
  EXPECT_EQ(out.best, Config({{"BN", 32}}));

  FakeObjective third(space_of({16, 32, 64}));
  out = run(tuner, third);
  EXPECT_TRUE(third.measured.empty());
  EXPECT_EQ(out.resumed, 3u);
  EXPECT_EQ(out.best, Config({{"BN", 32}}));
  EXPECT_EQ(log_lines().size(), 5u);  // header + 3 + the retried one
}

TEST_F(AutotunerTest, ResumeIsFreeWhateverTheBudget) {
  FakeObjective first(space_of({16, 32, 64}));
  Autotuner tuner("fmha_decode");
  tuner.log(log_);
  run(tuner, first);
  FakeObjective second(space_of({16, 32, 64, 128}));
  Autotuner zero("fmha_decode");
  zero.log(log_).budget(0).space_hash(Space::pruned_space_hash(space_of({16, 32, 64})));
  Output out = run(zero, second);
  EXPECT_TRUE(second.measured.empty());
  EXPECT_EQ(out.resumed, 3u);
  EXPECT_TRUE(out.budget_exhausted);
}

TEST_F(AutotunerTest, ResumeAdoptsOnlyTrialsWithTheCurrentCacheKey) {
  FakeObjective first(space_of({16, 32, 64}));
  first.keys = {"k16", "k32", "k64"};
  Autotuner tuner("fmha_decode");
  tuner.log(log_);
  Output out = run(tuner, first);
  EXPECT_EQ(out.trials[1].cache_key, "k32");

  FakeObjective second(space_of({16, 32, 64}));
  second.keys = {"k16", "k32-edited", "k64"};  // a header edit changed one candidate
  out = run(tuner, second);
  EXPECT_EQ(second.measured, std::vector<std::string>{id(32)});
  EXPECT_EQ(out.trials[1].cache_key, "k32-edited");
}

TEST_F(AutotunerTest, LogOfAnotherSearchIsRefusedBeforeAnythingIsMeasured) {
  FakeObjective first(space_of({16, 32}));
  Autotuner tuner("fmha_decode");
  tuner.log(log_).arch("sm_90");
  run(tuner, first);
  auto before = log_lines();

  FakeObjective second(space_of({16, 32, 64}));
  Autotuner other("fmha_decode");
  other.log(log_).arch("sm_100");
  result<Output> out = other.run_objective(second);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().str(),
            fmt::format("{}:1: error: log belongs to another search: space_hash '{}' (log) vs "
                        "'{}' (this run), arch 'sm_90' (log) vs 'sm_100' (this run); it was left "
                        "untouched: move it away or use another log path",
                        log_.string(), Space::pruned_space_hash(space_of({16, 32})),
                        Space::pruned_space_hash(space_of({16, 32, 64}))));
  EXPECT_TRUE(second.measured.empty());
  EXPECT_EQ(log_lines(), before);
}

TEST_F(AutotunerTest, AnExceptionFromMeasureLeavesAResumableLog) {
  FakeObjective first(space_of({16, 32, 64}));
  first.throw_on = id(32);
  Autotuner tuner("fmha_decode");
  tuner.log(log_);
  EXPECT_THROW(tuner.run_objective(first), std::runtime_error);
  EXPECT_EQ(log_lines().size(), 2u);  // header + BN=16; nothing for the interrupted one

  FakeObjective second(space_of({16, 32, 64}));
  Output out = run(tuner, second);
  EXPECT_EQ(second.measured, (std::vector<std::string>{id(32), id(64)}));
  EXPECT_EQ(out.trials.size(), 3u);
}

TEST_F(AutotunerTest, ProgressAndWarningsAreReported) {
  { std::ofstream(log_) << ""; }
  FakeObjective first(space_of({16, 32}));
  Autotuner tuner("fmha_decode");
  tuner.log(log_);
  run(tuner, first);
  std::ofstream(log_, std::ios::app) << "garbage\n";

  FakeObjective second(space_of({16, 32, 64}));
  Autotuner again("fmha_decode");
  again.log(log_).space_hash(Space::pruned_space_hash(space_of({16, 32})));
  std::vector<std::string> steps;
  std::vector<std::string> warnings;
  again.on_progress([&](const Progress& p) {
    steps.push_back(fmt::format("{}/{} {} {}", p.done, p.total, p.trial.id(),
                                p.resumed ? "resumed" : "measured"));
  });
  again.on_warning([&](const std::string& w) { warnings.push_back(w); });
  Output out = run(again, second);
  EXPECT_EQ(steps, (std::vector<std::string>{"1/3 BN=16 resumed", "2/3 BN=32 resumed",
                                             "3/3 BN=64 measured"}));
  std::vector<std::string> expected{log_.string() +
                                    ":4: warning: skipped a line that is not valid JSON"};
  EXPECT_EQ(warnings, expected);
  EXPECT_EQ(out.warnings, expected);
}

}  // namespace
}  // namespace tune
