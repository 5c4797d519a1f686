// Search strategies (tuner/core/search/strategy.hpp) on their own, and through the search: each
// proposes every config at most once, follows its seed, finds the optimum of smooth spaces
// early, in batches too (configs pending, outcomes told out of order, withdrawals), and a search
// resumed from its log follows the same sequence as one never interrupted.
#include <tuner/core/search/strategy.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <tuner/core/search/autotuner.hpp>
#include <tuner/core/search/bayes_model.hpp>

#include "test_dir.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;

// A 3-parameter space with holes (a prune): A in 1..16, B in 1..16, C in {x, y, z}, A*B <= 128.
std::vector<Config> holey_space() {
  std::vector<Config> out;
  for (int a = 1; a <= 16; ++a)
    for (int b = 1; b <= 16; ++b)
      for (const char* c : {"x", "y", "z"})
        if (a * b <= 128) out.push_back(Config{{"A", a}, {"B", b}, {"C", c}});
  return out;
}

// A smooth objective (log time) with one optimum at A=11, B=5, C=y; C=z is invalid where A > 12.
std::optional<double> objective(const Config& c) {
  const double a = static_cast<double>(*c.int_param("A"));
  const double b = static_cast<double>(*c.int_param("B"));
  const std::optional<std::string> s = c.string_param("C");
  if (!s || (*s == "z" && a > 12)) return std::nullopt;
  const double penalty = *s == "y" ? 0.0 : *s == "x" ? 0.15 : 0.3;
  return 0.01 * (a - 11) * (a - 11) + 0.02 * (b - 5) * (b - 5) + penalty;
}

SearchSettings settings(std::string strategy, std::uint64_t seed = 0) {
  SearchSettings s;
  s.strategy = std::move(strategy);
  s.seed = seed;
  return s;
}

// Runs a strategy to the end of the space (or `limit` evaluations); the order of proposals.
std::vector<std::size_t> run(const std::vector<Config>& configs, const SearchSettings& s,
                             std::size_t limit = SIZE_MAX) {
  SpaceIndex index(configs);
  std::unique_ptr<Strategy> strategy = make_strategy(s, index);
  std::vector<std::size_t> order;
  while (order.size() < limit) {
    std::optional<std::size_t> k = strategy->next();
    if (!k) break;
    order.push_back(*k);
    strategy->tell(*k, objective(configs[*k]));
  }
  return order;
}

std::size_t optimum(const std::vector<Config>& configs) {
  std::size_t best = 0;
  for (std::size_t k = 0; k < configs.size(); ++k)
    if (objective(configs[k]) &&
        (!objective(configs[best]) || *objective(configs[k]) < *objective(configs[best])))
      best = k;
  return best;
}

TEST(StrategyTest, SpaceIndexOrdersValuesAndFindsNeighbours) {
  const std::vector<Config> configs = holey_space();
  SpaceIndex index(configs);
  EXPECT_EQ(index.dims(), 3u);
  EXPECT_EQ(index.names(), (std::vector<std::string>{"A", "B", "C"}));
  EXPECT_EQ(index.levels(0), 16u);
  EXPECT_EQ(index.levels(2), 3u);
  const std::size_t k = *index.find({10, 4, 1});  // A=11, B=5, C=y
  EXPECT_EQ(configs[k].id(), R"(A=11,B=5,C="y")");
  EXPECT_EQ(index.coords(k), (std::vector<int>{10, 4, 1}));
  EXPECT_FALSE(index.find({15, 15, 0}));  // A=16, B=16: pruned
}

TEST(StrategyTest, EveryStrategyProposesEachConfigOnceAndExhaustsTheSpace) {
  const std::vector<Config> configs = holey_space();
  for (const char* name : {"grid", "random", "anneal", "bayes"}) {
    SearchSettings s = settings(name, 7);
    s.options["candidates"] = 64;  // bayes: keep the test quick
    if (std::string(name) != "bayes") s.options.clear();
    const std::vector<std::size_t> order = run(configs, s);
    EXPECT_EQ(order.size(), configs.size()) << name;
    EXPECT_EQ(std::set<std::size_t>(order.begin(), order.end()).size(), configs.size()) << name;
  }
}

TEST(StrategyTest, GridIsEnumerationOrderAndSkipsWhatItWasTold) {
  const std::vector<Config> configs = holey_space();
  SpaceIndex index(configs);
  auto grid = make_strategy(settings("grid"), index);
  grid->tell(0, 1.0);
  grid->tell(2, std::nullopt);
  EXPECT_EQ(grid->next(), 1u);
  grid->tell(1, 1.0);
  EXPECT_EQ(grid->next(), 3u);
}

TEST(StrategyTest, TheSeedDecidesTheSequence) {
  const std::vector<Config> configs = holey_space();
  for (const char* name : {"random", "anneal", "bayes"}) {
    SearchSettings s = settings(name, 1);
    if (std::string(name) == "bayes") s.options["candidates"] = 64;
    EXPECT_EQ(run(configs, s, 60), run(configs, s, 60)) << name;
    SearchSettings other = s;
    other.seed = 2;
    EXPECT_NE(run(configs, s, 60), run(configs, other, 60)) << name;
  }
}

TEST(StrategyTest, ModelAndWalkFindTheOptimumOfASmoothSpaceEarly) {
  // Within a fifth of the space, for each of five seeds; random needs about half on average.
  const std::vector<Config> configs = holey_space();
  const std::size_t best = optimum(configs);
  for (const char* name : {"anneal", "bayes"}) {
    for (std::uint64_t seed = 0; seed < 5; ++seed) {
      const std::vector<std::size_t> order = run(configs, settings(name, seed), configs.size() / 5);
      EXPECT_NE(std::find(order.begin(), order.end(), best), order.end())
          << name << " seed " << seed;
    }
  }
}

TEST(StrategyTest, IdentityNamesWhatShapesTheSequence) {
  EXPECT_EQ(settings("grid").identity().dump(), R"({"strategy":"grid"})");
  SearchSettings s = settings("anneal", 3);
  s.max_evals = 10;  // a stop rule: not part of the identity
  s.options["cooling"] = 0.9;
  EXPECT_EQ(s.identity().dump(),
            R"({"cooling":0.9,"restart_after":50.0,"seed":3,"strategy":"anneal",)"
            R"("temperature":0.05})");
  EXPECT_EQ(s.option("temperature"), 0.05);
  EXPECT_THROW(s.option("initial"), error);
}

TEST(StrategyTest, RandomDrawsAreDefinedHere) {
  // The first draws of seed 42 never change: a log written on one machine resumes on another.
  Random r(42);
  std::vector<std::size_t> draws;
  for (int i = 0; i < 5; ++i)
    draws.push_back(r.below(1000));
  Random again(42);
  for (std::size_t d : draws)
    EXPECT_EQ(again.below(1000), d);
  const double u = Random(7).unit();
  EXPECT_GE(u, 0.0);
  EXPECT_LT(u, 1.0);
}

// --- batches ----------------------------------------------------------------------------------

const char* const all_strategies[] = {"grid", "random", "anneal", "bayes"};

SearchSettings quick(const char* name, std::uint64_t seed = 3) {
  SearchSettings s = settings(name, seed);
  if (std::string(name) == "bayes") s.options["candidates"] = 64;
  return s;
}

// Drives a strategy as a pipelined search would: `batch` configs pending, outcomes told in a
// shuffled order (drawn from `order_seed`), checking each proposal against what was told and
// what is pending. The order of outcomes.
std::vector<std::size_t> drive(Strategy& s, const std::vector<Config>& configs, std::size_t batch,
                               std::uint64_t order_seed, std::size_t limit = SIZE_MAX) {
  std::vector<std::size_t> told_order;
  std::set<std::size_t> told, pending;
  Random order(order_seed);
  while (told_order.size() < limit) {
    const std::size_t open = configs.size() - told.size() - pending.size();
    const std::vector<std::size_t> more = s.propose(batch - pending.size());
    EXPECT_EQ(more.size(), std::min(batch - pending.size(), open));
    for (std::size_t k : more) {
      EXPECT_FALSE(told.contains(k)) << k << " was told";
      EXPECT_TRUE(pending.insert(k).second) << k << " is pending";
    }
    if (pending.empty()) break;
    auto it = pending.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(order.below(pending.size())));
    const std::size_t k = *it;
    pending.erase(it);
    s.tell(k, objective(configs[k]));
    told.insert(k);
    told_order.push_back(k);
  }
  return told_order;
}

TEST(StrategyTest, BatchesNeverRepeatAPendingOrAToldConfig) {
  // Outcomes told out of order, to the end of the space: every config told exactly once.
  const std::vector<Config> configs = holey_space();
  for (const char* name : all_strategies) {
    SpaceIndex index(configs);
    std::unique_ptr<Strategy> s = make_strategy(quick(name), index);
    const std::vector<std::size_t> order = drive(*s, configs, 7, 11);
    EXPECT_EQ(order.size(), configs.size()) << name;
    EXPECT_EQ(std::set<std::size_t>(order.begin(), order.end()).size(), configs.size()) << name;
    EXPECT_TRUE(s->propose(4).empty()) << name;
  }
}

TEST(StrategyTest, AWithdrawnConfigMayBeProposedAgain) {
  const std::vector<Config> configs = holey_space();
  for (const char* name : all_strategies) {
    SpaceIndex index(configs);
    std::unique_ptr<Strategy> s = make_strategy(quick(name), index);
    s->tell(0, objective(configs[0]));
    for (std::size_t k = 1; k < 12; ++k)  // enough for bayes' model to choose
      s->tell(k, objective(configs[k]));
    const std::vector<std::size_t> batch = s->propose(5);
    ASSERT_EQ(batch.size(), 5u) << name;
    s->withdraw(batch[2]);
    s->withdraw(batch[2]);  // not pending any more: ignored
    // Everything open is proposed, the withdrawn config included, the pending ones not.
    const std::vector<std::size_t> rest = s->propose(configs.size());
    EXPECT_EQ(rest.size(), configs.size() - 12 - 4) << name;
    EXPECT_NE(std::find(rest.begin(), rest.end(), batch[2]), rest.end()) << name;
    for (std::size_t i : {0, 1, 3, 4})
      EXPECT_EQ(std::find(rest.begin(), rest.end(), batch[i]), rest.end()) << name;
  }
}

TEST(StrategyTest, GridProposesAWithdrawnConfigFirst) {
  const std::vector<Config> configs = holey_space();
  SpaceIndex index(configs);
  auto grid = make_strategy(settings("grid"), index);
  EXPECT_EQ(grid->propose(4), (std::vector<std::size_t>{0, 1, 2, 3}));
  grid->tell(2, 1.0);
  grid->withdraw(1);
  EXPECT_EQ(grid->propose(3), (std::vector<std::size_t>{1, 4, 5}));
}

TEST(StrategyTest, TheSeedAndTheCallsDecideTheBatches) {
  const std::vector<Config> configs = holey_space();
  for (const char* name : {"random", "anneal", "bayes"}) {
    auto run_once = [&](std::uint64_t seed) {
      SpaceIndex index(configs);
      std::unique_ptr<Strategy> s = make_strategy(quick(name, seed), index);
      std::vector<std::size_t> out = drive(*s, configs, 6, 5, 80);
      // A withdrawal is one of the calls.
      const std::vector<std::size_t> batch = s->propose(3);
      s->withdraw(batch[0]);
      for (std::size_t k : s->propose(3))
        out.push_back(k);
      return out;
    };
    EXPECT_EQ(run_once(1), run_once(1)) << name;
    EXPECT_NE(run_once(1), run_once(2)) << name;
  }
}

TEST(StrategyTest, ProposingInPiecesProposesWhatOneCallWould) {
  const std::vector<Config> configs = holey_space();
  for (const char* name : all_strategies) {
    auto batches = [&](const std::vector<std::size_t>& sizes) {
      SpaceIndex index(configs);
      std::unique_ptr<Strategy> s = make_strategy(quick(name), index);
      drive(*s, configs, 4, 9, 30);  // a model to choose with, and 3 configs still pending
      std::vector<std::size_t> out;
      for (std::size_t n : sizes) {
        EXPECT_TRUE(s->propose(0).empty());
        for (std::size_t k : s->propose(n))
          out.push_back(k);
      }
      return out;
    };
    EXPECT_EQ(batches({3, 1, 4}), batches({8})) << name;
  }
}

TEST(StrategyTest, MisusedCallsAreIgnoredOrRefused) {
  const std::vector<Config> configs = holey_space();
  for (const char* name : all_strategies) {
    SpaceIndex index(configs);
    std::unique_ptr<Strategy> s = make_strategy(quick(name), index);
    s->tell(5, 1.0);
    s->tell(5, 2.0);  // told once: ignored
    s->withdraw(6);   // not pending: ignored
    EXPECT_THROW(s->tell(configs.size(), 1.0), error) << name;
    EXPECT_THROW(s->withdraw(configs.size() + 3), error) << name;
    const std::vector<std::size_t> all = s->propose(configs.size());
    EXPECT_EQ(all.size(), configs.size() - 1) << name;
    EXPECT_EQ(std::find(all.begin(), all.end(), 5u), all.end()) << name;
  }
}

TEST(StrategyTest, ModelAndWalkFindTheOptimumEarlyInBatches) {
  // As above, with 8 configs pending and the outcomes told out of order.
  const std::vector<Config> configs = holey_space();
  const std::size_t best = optimum(configs);
  for (const char* name : {"anneal", "bayes"}) {
    for (std::uint64_t seed = 0; seed < 5; ++seed) {
      SpaceIndex index(configs);
      std::unique_ptr<Strategy> s = make_strategy(settings(name, seed), index);
      const std::vector<std::size_t> order = drive(*s, configs, 8, seed, configs.size() / 5);
      EXPECT_NE(std::find(order.begin(), order.end(), best), order.end())
          << name << " seed " << seed;
    }
  }
}

TEST(StrategyTest, BayesSpreadsABatchOverWhatItDoesNotKnow) {
  // A line of 60 configs measured alike everywhere but in two equal gaps: the first pick goes
  // into one gap, and believing it (its variance gone) sends the second into the other one,
  // where picking by expected improvement alone would take its neighbour.
  std::vector<Config> line;
  for (int a = 0; a < 60; ++a)
    line.push_back(Config{{"A", a}});
  SpaceIndex index(line);
  auto bayes = make_strategy(settings("bayes", 1), index);
  for (std::size_t a : {0, 3, 6, 24, 27, 30, 33, 36, 54, 57, 59})
    bayes->tell(a, 0.1);
  const std::vector<std::size_t> batch = bayes->propose(2);
  ASSERT_EQ(batch.size(), 2u);
  auto gap = [](std::size_t a) { return a > 6 && a < 24 ? 1 : a > 36 && a < 54 ? 2 : 0; };
  EXPECT_NE(gap(batch[0]), 0) << batch[0];
  EXPECT_NE(gap(batch[1]), 0) << batch[1];
  EXPECT_NE(gap(batch[0]), gap(batch[1])) << batch[0] << " " << batch[1];
}

TEST(StrategyTest, BayesStartsSpreadOverTheSpace) {
  // A 24 x 24 grid: ten random configs almost always hold two within 4 steps of each other (each
  // pair about 9% likely, 45 pairs); the start's design keeps every pair farther apart.
  std::vector<Config> grid;
  for (int a = 0; a < 24; ++a)
    for (int b = 0; b < 24; ++b)
      grid.push_back(Config{{"A", a}, {"B", b}});
  SpaceIndex index(grid);
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    auto bayes = make_strategy(settings("bayes", seed), index);
    std::vector<std::size_t> start;
    for (int i = 0; i < 10; ++i) {
      const std::optional<std::size_t> k = bayes->next();
      ASSERT_TRUE(k);
      start.push_back(*k);
      bayes->tell(*k, 0.1);
    }
    double nearest = 1e9;
    for (std::size_t i = 0; i < start.size(); ++i)
      for (std::size_t j = i + 1; j < start.size(); ++j) {
        const double da = index.coords(start[i])[0] - index.coords(start[j])[0];
        const double db = index.coords(start[i])[1] - index.coords(start[j])[1];
        nearest = std::min(nearest, std::sqrt(da * da + db * db));
      }
    EXPECT_GE(nearest, 4.0) << "seed " << seed;
  }
}

// --- through the search -------------------------------------------------------------------

class Scripted : public Objective {
 public:
  explicit Scripted(std::vector<Config> configs) : configs_(std::move(configs)) {}
  const std::vector<Config>& configs() override { return configs_; }
  Trial measure(std::size_t index) override {
    measured.push_back(configs_[index].id());
    if (stop_after && measured.size() > *stop_after) throw std::runtime_error("killed");
    const std::optional<double> v = objective(configs_[index]);
    return v ? Trial::measured(std::exp(*v), std::exp(*v), 10) : Trial::invalid("too big");
  }
  std::vector<Config> configs_;
  std::vector<std::string> measured;
  std::optional<std::size_t> stop_after;
};

TEST(StrategyTest, AResumedSearchFollowsTheSameSequence) {
  const fs::path dir = test::fresh_test_dir("strategy_test");
  for (const char* name : {"random", "anneal", "bayes"}) {
    SearchSettings s = settings(name, 5);
    s.max_evals = 40;
    // One run, never interrupted.
    Scripted whole(holey_space());
    ASSERT_TRUE(Autotuner("k/b")
                    .log(dir / (std::string(name) + ".a.jsonl"))
                    .search(s)
                    .run_objective(whole));
    // The same search killed after 17 measurements, then resumed from its log.
    const fs::path log = dir / (std::string(name) + ".b.jsonl");
    Scripted first(holey_space());
    first.stop_after = 17;
    EXPECT_THROW(Autotuner("k/b").log(log).search(s).run_objective(first), std::runtime_error);
    Scripted second(holey_space());
    result<Output> out = Autotuner("k/b").log(log).search(s).run_objective(second);
    ASSERT_TRUE(out) << out.error().str();
    // The resumed run visits the configs in the same order: it adopts the logged measured
    // trials and measures the rest, the candidate in flight at the kill and the invalid trials
    // included (invalid trials are retried by design).
    std::set<std::string> logged_valid;
    for (std::size_t i = 0; i < 17; ++i) {
      const Config c = *std::find_if(whole.configs_.begin(), whole.configs_.end(),
                                     [&](const Config& x) { return x.id() == first.measured[i]; });
      if (objective(c)) logged_valid.insert(first.measured[i]);
    }
    std::vector<std::string> expected;
    for (const std::string& id : whole.measured)
      if (!logged_valid.contains(id)) expected.push_back(id);
    EXPECT_EQ(std::vector<std::string>(first.measured.begin(), first.measured.begin() + 17),
              std::vector<std::string>(whole.measured.begin(), whole.measured.begin() + 17))
        << name;
    EXPECT_EQ(second.measured, expected) << name;
    EXPECT_EQ(out->stopped_by, "max_evals");
  }
}

TEST(StrategyTest, ALogOfAnotherStrategyOrSeedIsRefused) {
  const fs::path dir = test::fresh_test_dir("strategy_test");
  const fs::path log = dir / "k.trials.jsonl";
  SearchSettings s = settings("random", 1);
  s.max_evals = 3;
  Scripted a(holey_space());
  ASSERT_TRUE(Autotuner("k/b").log(log).search(s).run_objective(a));
  SearchSettings other = s;
  other.seed = 2;
  Scripted b(holey_space());
  result<Output> refused = Autotuner("k/b").log(log).search(other).run_objective(b);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find(R"(search '{"seed":1,"strategy":"random"}' (log) vs )"
                                         R"('{"seed":2,"strategy":"random"}' (this run))"),
            std::string::npos)
      << refused.error().message;
  EXPECT_TRUE(b.measured.empty());
}

TEST(StrategyTest, AnnealStartsABatchFromTheBestOfItsJumps) {
  // A batch proposed before any outcome is all jumps (random configs). The walk starts where the
  // first told landed; each later jump's outcome is a Metropolis step from there, as a
  // neighbour's is: the walk moves to a better one, and not to one far worse. So the next
  // proposals are one-param moves of the best jump, not of whichever jump was told last.
  const std::vector<Config> configs = holey_space();
  const SpaceIndex index(configs);
  for (const std::size_t better : {0u, 1u}) {
    std::unique_ptr<Strategy> anneal = make_strategy(settings("anneal", 5), index);
    const std::vector<std::size_t> jumps = anneal->propose(16);
    ASSERT_EQ(jumps.size(), 16u);
    for (std::size_t i = 0; i < jumps.size(); ++i)
      anneal->tell(jumps[i], i == better ? 0.0 : i < 2 ? 1.0 : 10.0);
    const std::vector<std::size_t> next = anneal->propose(8);
    ASSERT_EQ(next.size(), 8u);
    const std::vector<std::size_t> moves = detail::moves(index, jumps[better], 1);
    for (std::size_t k : next)
      EXPECT_TRUE(std::find(moves.begin(), moves.end(), k) != moves.end())
          << configs[k].id() << " is no one-param move of the best jump "
          << configs[jumps[better]].id() << " (the last told: " << configs[jumps.back()].id()
          << ")";
  }
}

TEST(StrategyTest, BayesTakesTurnsBetweenTradeOffsAndOtherTwoParamMoves) {
  // A 7x7 grid whose best config, the centre, is told with its twelve one-param moves: bayes's
  // local picks are then the centre's two-param moves. Away from the centre the time falls
  // towards A=1, B=1, so the model ranks the moves down both params first; the trade-offs
  // (one param up, the other down) take every other local region all the same.
  std::vector<Config> configs;
  for (int a = 1; a <= 7; ++a)
    for (int b = 1; b <= 7; ++b)
      configs.push_back(Config{{"A", a}, {"B", b}});
  const SpaceIndex index(configs);
  auto value = [&](std::size_t k) {
    const auto a = *configs[k].int_param("A");
    const auto b = *configs[k].int_param("B");
    return a == 4 && b == 4 ? 0.0 : 1 + 0.1 * static_cast<double>(a + b);
  };
  const std::size_t centre = *index.find({3, 3});
  std::unique_ptr<Strategy> bayes = make_strategy(settings("bayes", 1), index);
  bayes->tell(centre, value(centre));
  for (std::size_t k : detail::moves(index, centre, 1))
    bayes->tell(k, value(k));
  std::size_t trade_offs = 0;
  std::size_t both_ways = 0;
  for (int i = 0; i < 6; ++i) {
    const std::vector<std::size_t> k = bayes->propose(1);
    ASSERT_EQ(k.size(), 1u);
    if (detail::trade_off(index, centre, k[0])) ++trade_offs;
    const auto da = *configs[k[0]].int_param("A") - 4;
    const auto db = *configs[k[0]].int_param("B") - 4;
    if (da * db > 0) ++both_ways;
    bayes->tell(k[0], value(k[0]));
  }
  // Six proposals: four local (two trade-offs, two of the others), two global.
  EXPECT_EQ(trade_offs, 2u);
  EXPECT_GE(both_ways, 2u);
}

TEST(StrategyTest, StopRules) {
  SearchSettings s = settings("anneal", 0);
  s.patience = 10;
  Scripted o(holey_space());
  result<Output> out = Autotuner("k/b").search(s).run_objective(o);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->stopped_by, "patience");
  EXPECT_LT(out->trials.size(), holey_space().size());
  EXPECT_EQ(out->unvisited, holey_space().size() - out->trials.size());

  SearchSettings grid;
  Scripted all(holey_space());
  out = Autotuner("k/b").search(grid).run_objective(all);
  ASSERT_TRUE(out);
  EXPECT_FALSE(out->stopped_by);
  EXPECT_EQ(out->unvisited, 0u);
}

TEST(StrategyTest, IncumbentsSeedTheStrategy) {
  // The required config is measured first and told: a walk starts from it.
  const std::vector<Config> configs = holey_space();
  SearchSettings s = settings("anneal", 0);
  s.max_evals = 5;
  Scripted o(configs);
  result<Output> out = Autotuner("k/b")
                           .require({Config{{"A", 10}, {"B", 5}, {"C", "y"}}})
                           .search(s)
                           .run_objective(o);
  ASSERT_TRUE(out);
  EXPECT_EQ(o.measured.front(), R"(A=10,B=5,C="y")");
  EXPECT_EQ(out->trials.front().phase, Phase::required);
}

}  // namespace
}  // namespace tune
