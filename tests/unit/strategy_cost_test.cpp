// The compile cost (docs/search.md "Compile cost"): the cost model predicts what configs will
// take to compile from what those told took; a weighted `bayes` (`cost_weight`, or a
// compile-bound search) spends less compile time per evaluation and still finds an optimum that
// is dear to compile; without the weight, costs change nothing; the setting is in the log's
// identity only when it is set. Compile-bound, `random` and `anneal` take the cheaper of equally
// good configs first and a complete `grid` the dearest first.
#include <tuner/core/search/cost_model.hpp>
#include <tuner/core/search/strategy.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tune {
namespace {

constexpr int side = 24;

// A in 0..23, B in 0..23: 576 configs.
std::vector<Config> square() {
  std::vector<Config> out;
  for (int a = 0; a < side; ++a)
    for (int b = 0; b < side; ++b)
      out.push_back(Config{{"A", a}, {"B", b}});
  return out;
}

// Compile seconds: 0.3 s at B = 0 to 12 s at B = 23 (40x), a little more with A.
double compile_s(const Config& c) {
  const double a = static_cast<double>(*c.int_param("A"));
  const double b = static_cast<double>(*c.int_param("B"));
  return 0.3 * std::pow(40.0, b / (side - 1)) * (1 + a / (2 * side));
}

// A rippled log time (local optima all over) with its optimum at (A, B) = (a0, b0).
double value(const Config& c, int a0, int b0) {
  const double a = static_cast<double>(*c.int_param("A") - a0);
  const double b = static_cast<double>(*c.int_param("B") - b0);
  return 0.002 * a * a + 0.003 * b * b + 0.08 * (1 - std::cos(1.1 * a) * std::cos(0.9 * b));
}

SearchSettings bayes(std::uint64_t seed, double weight) {
  SearchSettings s;
  s.strategy = "bayes";
  s.seed = seed;
  if (weight > 0) s.options["cost_weight"] = weight;
  return s;
}

struct Walk {
  std::vector<std::size_t> order;
  double compile_s_to_optimum = 0;  // the compile seconds told until the optimum, it included
  std::size_t evaluations_to_optimum = 0;
  double compile_s_first_100 = 0;  // the compile seconds of the first 100 evaluations
};

// Proposes in batches of 4, tells each outcome with its compile seconds (unless `costs` is
// false), until the optimum (a0, b0) is told or `limit` evaluations.
Walk walk(const SearchSettings& s, int a0, int b0, bool costs = true, std::size_t limit = 576) {
  const std::vector<Config> configs = square();
  SpaceIndex index(configs);
  std::unique_ptr<Strategy> strategy = make_strategy(s, index);
  Walk w;
  bool found = false;
  while (w.order.size() < limit) {
    const std::vector<std::size_t> batch = strategy->propose(4);
    if (batch.empty()) break;
    for (std::size_t k : batch) {
      w.order.push_back(k);
      if (w.order.size() <= 100) w.compile_s_first_100 += compile_s(configs[k]);
      if (!found) {
        w.compile_s_to_optimum += compile_s(configs[k]);
        ++w.evaluations_to_optimum;
      }
      if (costs) strategy->tell_cost(k, compile_s(configs[k]));
      strategy->tell(k, value(configs[k], a0, b0));
      found = found || (*configs[k].int_param("A") == a0 && *configs[k].int_param("B") == b0);
    }
    if (found && w.order.size() >= 80) break;
  }
  return w;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

TEST(StrategyCostTest, TheModelPredictsWhatIsDearToCompile) {
  const std::vector<Config> configs = square();
  SpaceIndex index(configs);
  CostModel model(index);
  EXPECT_FALSE(model.ready());
  EXPECT_EQ(model.relative(0), 1.0);
  // Nine compiles (fewer than twice the five coefficients): not ready yet.
  for (std::size_t k = 0; k < 9; ++k)
    model.add(k * 53 % configs.size(), compile_s(configs[k * 53 % configs.size()]));
  EXPECT_FALSE(model.ready());
  for (std::size_t k = 9; k < 30; ++k)
    model.add(k * 53 % configs.size(), compile_s(configs[k * 53 % configs.size()]));
  ASSERT_TRUE(model.ready());
  // (A, B) = (0, 0) compiles in 0.3 s, (0, 23) in 12 s; the median of the sample is near the
  // middle (about 2 s).
  const std::size_t cheap = *index.find({0, 0});
  const std::size_t dear = *index.find({0, side - 1});
  EXPECT_LT(model.relative(cheap), 0.4);
  EXPECT_GT(model.relative(dear), 2.5);
  EXPECT_NEAR(model.relative(dear) / model.relative(cheap), 40, 10);
  // A second observation of a config, a zero, a NaN: ignored.
  const std::size_t before = model.observations();
  model.add(0, 100);
  model.add(1, 0);
  model.add(2, std::nan(""));
  EXPECT_EQ(model.observations(), before);
}

TEST(StrategyCostTest, AllCostsAlikeLeaveTheModelUnready) {
  std::vector<Config> configs;
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 5; ++b)
      for (const char* c : {"x", "y", "z", "w"})
        configs.push_back(Config{{"A", a}, {"B", b}, {"C", c}});
  SpaceIndex index(configs);
  CostModel model(index);
  for (std::size_t k = 0; k < 100; ++k)
    model.add(k, 1.0 + 0.5 * static_cast<double>(k % 2));  // 1 s or 1.5 s: under 2x apart
  EXPECT_FALSE(model.ready());
  EXPECT_EQ(model.relative(5), 1.0);
}

TEST(StrategyCostTest, WithoutTheWeightCostsChangeNothing) {
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    const Walk told = walk(bayes(seed, 0), 16, 4, true, 120);
    const Walk untold = walk(bayes(seed, 0), 16, 4, false, 120);
    EXPECT_EQ(told.order, untold.order) << "seed " << seed;
  }
}

TEST(StrategyCostTest, TheSameCallsGiveTheSameProposals) {
  EXPECT_EQ(walk(bayes(3, 1), 16, 4, true, 150).order, walk(bayes(3, 1), 16, 4, true, 150).order);
  // And the weight does change them.
  EXPECT_NE(walk(bayes(3, 1), 16, 4, true, 150).order, walk(bayes(3, 0), 16, 4, true, 150).order);
}

TEST(StrategyCostTest, AWeightedSearchSpendsLessCompileTimePerEvaluation) {
  // The optimum at B = 4 (0.6 s to compile); the median over twenty seeds of the compile seconds
  // of the first 100 evaluations: 310 s plain, 240 s weighted (docs/search.md "Compile cost"),
  // and the optimum no later in compile seconds (75 s both).
  std::vector<double> plain, weighted, plain_to, weighted_to;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const Walk p = walk(bayes(seed, 0), 16, 4);
    const Walk w = walk(bayes(seed, 1), 16, 4);
    plain.push_back(p.compile_s_first_100);
    weighted.push_back(w.compile_s_first_100);
    plain_to.push_back(p.compile_s_to_optimum);
    weighted_to.push_back(w.compile_s_to_optimum);
  }
  EXPECT_LT(median(weighted), 0.85 * median(plain))
      << "weighted " << median(weighted) << " s, plain " << median(plain) << " s";
  EXPECT_LE(median(weighted_to), 1.05 * median(plain_to))
      << "weighted " << median(weighted_to) << " s, plain " << median(plain_to) << " s";
}

TEST(StrategyCostTest, AWeightedSearchStillFindsADearOptimum) {
  // The optimum at B = 20 (8 s to compile): found within a third of the space in every seed.
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const Walk w = walk(bayes(seed, 1), 9, 20, true, 192);
    EXPECT_LT(w.evaluations_to_optimum, 192u) << "seed " << seed;
  }
}

TEST(StrategyCostTest, TheWeightIsInTheIdentityOnlyWhenSet) {
  const nlohmann::json plain = bayes(1, 0).identity();
  EXPECT_FALSE(plain.contains("cost_weight")) << plain.dump();
  const nlohmann::json weighted = bayes(1, 0.5).identity();
  EXPECT_EQ(weighted.at("cost_weight"), 0.5) << weighted.dump();
  EXPECT_EQ(bayes(1, 0).option("cost_weight"), 0.0);
}

// Proposes one config at a time with `context`, telling each its compile seconds (costs) and
// value, and returns the compile seconds of the first `n` proposals.
double first_compile_s(const SearchSettings& s, const StrategyContext& context, std::size_t n) {
  const std::vector<Config> configs = square();
  SpaceIndex index(configs);
  std::unique_ptr<Strategy> strategy = make_strategy(s, index, {}, context);
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::optional<std::size_t> k = strategy->next();
    if (!k) break;
    total += compile_s(configs[*k]);
    strategy->tell_cost(*k, compile_s(configs[*k]));
    strategy->tell(*k, value(configs[*k], 16, 4));
  }
  return total;
}

SearchSettings named(const std::string& strategy, std::uint64_t seed) {
  SearchSettings s;
  s.strategy = strategy;
  s.seed = seed;
  return s;
}

TEST(StrategyCostTest, CompileBoundRandomAndAnnealTakeCheaperConfigsFirst) {
  StrategyContext bound;
  bound.compile_bound = true;
  for (const char* name : {"random", "anneal"}) {
    std::vector<double> plain, weighed;
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      plain.push_back(first_compile_s(named(name, seed), {}, 200));
      weighed.push_back(first_compile_s(named(name, seed), bound, 200));
    }
    EXPECT_LT(median(weighed), 0.9 * median(plain))
        << name << ": compile-bound " << median(weighed) << " s, plain " << median(plain) << " s";
  }
}

TEST(StrategyCostTest, ACompleteCompileBoundGridProposesTheDearestFirst) {
  const std::vector<Config> configs = square();
  SpaceIndex index(configs);
  StrategyContext context;
  context.compile_bound = true;
  context.complete = true;
  std::unique_ptr<Strategy> grid = make_strategy(named("grid", 0), index, {}, context);
  // Enumeration order until the model predicts (the first 24 are A = 0, every B).
  std::vector<std::size_t> first;
  for (std::size_t i = 0; i < 40; ++i) {
    const std::size_t k = *grid->next();
    first.push_back(k);
    grid->tell_cost(k, compile_s(configs[k]));
    grid->tell(k, 0.0);
  }
  EXPECT_EQ(first.front(), 0u);
  // Then the dearest predicted: B near 23, the 12 s compiles.
  for (int i = 0; i < 5; ++i) {
    const std::size_t k = *grid->next();
    EXPECT_GE(*configs[k].int_param("B"), side - 4) << configs[k].id();
    grid->tell(k, 0.0);
  }
  // Every config once all the same.
  std::set<std::size_t> seen(first.begin(), first.end());
  for (std::optional<std::size_t> k = grid->next(); k; k = grid->next()) {
    EXPECT_TRUE(seen.insert(*k).second);
    grid->tell(*k, 0.0);
  }
  EXPECT_EQ(seen.size() + 5, configs.size());
  // Not complete (a budget may stop it): enumeration order throughout.
  context.complete = false;
  std::unique_ptr<Strategy> budgeted = make_strategy(named("grid", 0), index, {}, context);
  for (std::size_t i = 0; i < 60; ++i) {
    const std::size_t k = *budgeted->next();
    EXPECT_EQ(k, i);
    budgeted->tell_cost(k, compile_s(configs[k]));
    budgeted->tell(k, 0.0);
  }
}

TEST(StrategyCostTest, ACompileBoundBayesWeighsCostsUnlessTheSpaceSaysNot) {
  StrategyContext bound;
  bound.compile_bound = true;
  EXPECT_LT(first_compile_s(named("bayes", 1), bound, 120),
            0.9 * first_compile_s(named("bayes", 1), {}, 120));
  // cost_weight = 0 in the space: off, compile-bound or not.
  SearchSettings off = named("bayes", 1);
  off.options["cost_weight"] = 0;
  EXPECT_EQ(first_compile_s(off, bound, 120), first_compile_s(named("bayes", 1), {}, 120));
}

TEST(StrategyCostTest, CostWeightZeroTurnsTheCheaperFirstChoiceOffForRandomAndAnneal) {
  StrategyContext bound;
  bound.compile_bound = true;
  for (const char* name : {"random", "anneal"}) {
    SearchSettings off = named(name, 3);
    off.options["cost_weight"] = 0;
    EXPECT_EQ(first_compile_s(off, bound, 200), first_compile_s(named(name, 3), {}, 200)) << name;
    EXPECT_NE(first_compile_s(named(name, 3), bound, 200), first_compile_s(named(name, 3), {}, 200))
        << name;
  }
}

}  // namespace
}  // namespace tune
