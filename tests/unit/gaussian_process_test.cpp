// The Gaussian process of the `bayes` strategy (tuner/core/search/gaussian_process.hpp), kept
// up to date through additions, removals, a pool and pending points, predicts what the same
// model fitted from scratch predicts, and chooses the length of the highest marginal
// likelihood; and the pure parts of the strategy around it (bayes_model.hpp): the start's
// farthest pick and the training set.
#include <tuner/core/search/gaussian_process.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <Eigen/Cholesky>

#include <tuner/core/search/bayes_model.hpp>
#include <tuner/core/search/strategy.hpp>

namespace tune {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr double noise = 1e-3;
const std::vector<double> lengths = {0.2, 0.5, 1.2};

// 80 points of a 3-D grid of positions in [0, 1] (5 x 4 x 4).
MatrixXd grid_points() {
  MatrixXd p(80, 3);
  int i = 0;
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 4; ++c)
        p.row(i++) << a / 4.0, b / 3.0, c / 3.0;
  return p;
}

double matern(const MatrixXd& p, std::size_t i, std::size_t j, double length) {
  const double s =
      std::sqrt(5.0) *
      (p.row(static_cast<Eigen::Index>(i)) - p.row(static_cast<Eigen::Index>(j))).norm() / length;
  return (1 + s + s * s / 3) * std::exp(-s);
}

MatrixXd kernel(const MatrixXd& p, const std::vector<std::size_t>& a,
                const std::vector<std::size_t>& b, double length) {
  MatrixXd k(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j)
      k(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = matern(p, a[i], b[j], length);
  return k;
}

// Values for the training set, a smooth function of the points.
VectorXd values(const MatrixXd& p, const std::vector<std::size_t>& train) {
  VectorXd y(train.size());
  for (std::size_t i = 0; i < train.size(); ++i) {
    const auto r = p.row(static_cast<Eigen::Index>(train[i]));
    y(static_cast<Eigen::Index>(i)) = std::sin(3 * r(0)) + r(1) * r(2) - 0.5;
  }
  return y;
}

// The textbook predictions: means given the training set, variances given the training set
// and the pending points, each factorized from scratch.
void expect_predictions(GaussianProcess& gp, const MatrixXd& p) {
  const double length = lengths[gp.length()];
  const std::vector<std::size_t>& train = gp.train();
  const std::vector<std::size_t>& pool = gp.pool();
  const VectorXd y = values(p, train);
  MatrixXd ktt = kernel(p, train, train, length);
  ktt.diagonal().array() += noise;
  const VectorXd mean = kernel(p, pool, train, length) * ktt.llt().solve(y);
  std::vector<std::size_t> both = train;
  both.insert(both.end(), gp.pending().begin(), gp.pending().end());
  MatrixXd kbb = kernel(p, both, both, length);
  kbb.diagonal().array() += noise;
  const MatrixXd kbp = kernel(p, both, pool, length);
  const VectorXd var =
      1.0 - (kbp.array() * kbb.llt().solve(kbp).array()).colwise().sum().transpose();
  const VectorXd got_mean = gp.means(y);
  const VectorXd got_var = gp.variances();
  ASSERT_EQ(got_mean.size(), static_cast<Eigen::Index>(pool.size()));
  ASSERT_EQ(got_var.size(), static_cast<Eigen::Index>(pool.size()));
  for (Eigen::Index j = 0; j < got_mean.size(); ++j) {
    EXPECT_NEAR(got_mean(j), mean(j), 1e-9) << "mean of pool point " << j;
    EXPECT_NEAR(got_var(j), var(j), 1e-9) << "variance of pool point " << j;
  }
}

TEST(GaussianProcessTest, FollowsAdditionsRemovalsAndPendingPoints) {
  const MatrixXd p = grid_points();
  GaussianProcess gp(p, lengths, noise);
  ASSERT_TRUE(gp.fit({3, 17, 29, 41, 55, 60, 72}));
  gp.set_pool({0, 1, 2, 4, 10, 20, 30, 40, 50, 61, 70, 79});
  expect_predictions(gp, p);
  // Outcomes come in.
  for (std::size_t k : {8, 33, 47, 66})
    ASSERT_TRUE(gp.add(k));
  expect_predictions(gp, p);
  // Pending points, one of them conditioned at once, then a pool point more.
  gp.add_pending(10);
  gp.add_pending(40);
  expect_predictions(gp, p);
  gp.add_pending(61);
  gp.add_to_pool(77);
  expect_predictions(gp, p);
  // An outcome for a pending point, a withdrawal, observations leaving the training set
  // (first, middle, last).
  gp.remove_pending(40);
  ASSERT_TRUE(gp.add(40));
  gp.remove_pending(10);
  expect_predictions(gp, p);
  gp.remove(0);
  gp.remove(4);
  gp.remove(gp.train().size() - 1);
  expect_predictions(gp, p);
  EXPECT_EQ(gp.train(), (std::vector<std::size_t>{17, 29, 41, 55, 72, 8, 33, 47, 66}));
  // Another pool, and points added to the training set and the pool while the columns are
  // computed again.
  gp.set_pool({5, 6, 7, 61, 62, 63, 64});
  ASSERT_TRUE(gp.add(12));
  gp.add_to_pool(13);
  expect_predictions(gp, p);
}

TEST(GaussianProcessTest, ChoosesTheLengthOfTheHighestMarginalLikelihood) {
  const MatrixXd p = grid_points();
  GaussianProcess gp(p, lengths, noise);
  std::vector<std::size_t> train;
  for (std::size_t k = 0; k < 80; k += 3)
    train.push_back(k);
  ASSERT_TRUE(gp.fit({train.begin(), train.begin() + 10}));
  for (std::size_t i = 10; i < train.size(); ++i)
    ASSERT_TRUE(gp.add(train[i]));
  gp.remove(2);
  train.erase(train.begin() + 2);
  const VectorXd y = values(p, train);
  std::size_t best = 0;
  double best_ml = -INFINITY;
  for (std::size_t g = 0; g < lengths.size(); ++g) {
    MatrixXd k = kernel(p, train, train, lengths[g]);
    k.diagonal().array() += noise;
    const Eigen::LLT<MatrixXd> llt(k);
    const MatrixXd l = llt.matrixL();
    const double ml = -0.5 * y.dot(llt.solve(y)) - l.diagonal().array().log().sum();
    EXPECT_NEAR(gp.marginal_likelihood(g, y), ml, 1e-8 * std::abs(ml));
    if (ml > best_ml) {
      best_ml = ml;
      best = g;
    }
  }
  gp.set_pool({1, 2, 4, 5});
  gp.choose_length(y);
  EXPECT_EQ(gp.length(), best);
  expect_predictions(gp, p);
}

TEST(BayesModelTest, TheStartPicksTheCandidateFarthestFromWhatItHas) {
  // Points on a line at 0, 1, ..., 9: with 0 and 4 seen, 9 is 5 from its nearest, 7 only 3.
  MatrixXd line(10, 1);
  for (int i = 0; i < 10; ++i)
    line(i, 0) = i;
  EXPECT_EQ(detail::farthest(line, {7, 9, 2}, {0, 4}), 9u);
  EXPECT_EQ(detail::farthest(line, {2, 6}, {0, 4}), 2u);  // both 2 away: the first
  EXPECT_EQ(detail::farthest(line, {}, {0}), std::nullopt);
  EXPECT_EQ(detail::farthest(line, {3, 8}, {}), 3u);
}

TEST(BayesModelTest, ATradeOffMovesOneOrderedParamUpAndAnotherDown) {
  // A and B ordered (5 and 3 values), F ordered with two, C categorical.
  std::vector<Config> configs;
  for (int a = 1; a <= 5; ++a)
    for (int b : {1, 2, 4})
      for (int f : {0, 1})
        for (const char* c : {"x", "y", "z"})
          configs.push_back(Config{{"A", a}, {"B", b}, {"C", c}, {"F", f}});
  const SpaceIndex space(configs);
  auto at = [&](int a, int b, const char* c, int f) {
    const Config want{{"A", a}, {"B", b}, {"C", c}, {"F", f}};
    return static_cast<std::size_t>(std::find(configs.begin(), configs.end(), want) -
                                    configs.begin());
  };
  const std::size_t from = at(3, 2, "y", 0);
  EXPECT_TRUE(detail::trade_off(space, from, at(4, 1, "y", 0)));   // A up, B down
  EXPECT_TRUE(detail::trade_off(space, from, at(1, 4, "y", 0)));   // A two down, B up
  EXPECT_FALSE(detail::trade_off(space, from, at(4, 4, "y", 0)));  // both up
  EXPECT_FALSE(detail::trade_off(space, from, at(2, 1, "y", 0)));  // both down
  EXPECT_FALSE(detail::trade_off(space, from, at(4, 2, "x", 0)));  // a category
  EXPECT_FALSE(detail::trade_off(space, from, at(4, 2, "y", 1)));  // a two-valued param
  EXPECT_FALSE(detail::trade_off(space, from, at(4, 2, "y", 0)));  // one param
  EXPECT_FALSE(detail::trade_off(space, from, at(4, 1, "x", 0)));  // three params
  EXPECT_FALSE(detail::trade_off(space, from, from));
}

TEST(BayesModelTest, TheTrainingSetKeepsTheBestHalfAndTheMostRecent) {
  // Ten outcomes of configs 100..109, told in that order; 103 invalid.
  std::vector<std::pair<std::size_t, std::optional<double>>> observed;
  const double values[] = {5, 1, 7, 0, 2, 9, 8, 3, 6, 4};
  for (std::size_t i = 0; i < 10; ++i)
    observed.emplace_back(100 + i, i == 3 ? std::nullopt : std::optional<double>(values[i]));
  const std::vector<std::size_t> all = detail::training_set(observed, 10);
  EXPECT_EQ(all.size(), 10u);
  EXPECT_EQ(all.front(), 100u);
  // A cap of 4: the best two (101: 1, 104: 2), then the most recent (109, 108), in told order.
  EXPECT_EQ(detail::training_set(observed, 4), (std::vector<std::size_t>{101, 104, 108, 109}));
}

}  // namespace
}  // namespace tune
