// The compile cost in `bayes` (`cost_weight`, docs/search.md "Compile cost"): the cost model
// predicts what configs will take to compile from what those told took; a weighted search spends
// less compile time before it finds an optimum that is cheap to compile and still finds one that
// is dear; without the weight, costs change nothing; the setting is in the log's identity only
// when it is set.
#include <tuner/core/search/cost_model.hpp>
#include <tuner/core/search/strategy.hpp>

#include <algorithm>
#include <cmath>
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
  Eigen::MatrixXd points(static_cast<Eigen::Index>(configs.size()), 2);
  for (std::size_t k = 0; k < configs.size(); ++k)
    for (int d = 0; d < 2; ++d)
      points(static_cast<Eigen::Index>(k), d) =
          index.coords(k)[static_cast<std::size_t>(d)] / static_cast<double>(side - 1);
  CostModel model(points);
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
  Eigen::MatrixXd points = Eigen::MatrixXd::Random(100, 3).cwiseAbs();
  CostModel model(points);
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

TEST(StrategyCostTest, AWeightedSearchSpendsLessCompileTimeOnACheapOptimum) {
  // The optimum at B = 4 (0.6 s to compile); the median over twenty seeds of the compile seconds
  // spent until it was measured: 78 s plain, 68 s weighted (docs/search.md "Compile cost").
  std::vector<double> plain, weighted;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    plain.push_back(walk(bayes(seed, 0), 16, 4).compile_s_to_optimum);
    weighted.push_back(walk(bayes(seed, 1), 16, 4).compile_s_to_optimum);
  }
  EXPECT_LT(median(weighted), 0.92 * median(plain))
      << "weighted " << median(weighted) << " s, plain " << median(plain) << " s";
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

}  // namespace
}  // namespace tune
