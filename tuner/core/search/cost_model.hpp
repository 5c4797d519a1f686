// Internal to tune_core (not installed): the compile-cost model every strategy uses when the
// tune is compile-bound (docs/search.md "Compile cost"): what a config will cost to compile,
// predicted from the compile seconds of the configs told so far (Strategy::tell_cost).
//
// A ridge regression of log(seconds) on each ordered param's position scaled to [0, 1] and its
// square, and on each category of a categorical param but its first (an indicator), the
// intercept unpenalized. Compile time grows about multiplicatively with unroll factors, tile
// sizes and stages, whose value lists are mostly powers of two: in log, roughly linear in their
// positions, with the square for the curvature that register pressure adds; a category (a load
// path, a layout) shifts it by its own factor. The features come from the space's coordinates
// as needed (nothing per config is stored beyond a flag), and the normal equations are kept as
// sums, so an observation costs O(p^2) and a solve O(p^3) with p the features, nothing that
// grows with the observations.
//
// Predictions are relative: the predicted seconds over the median of the observed ones, clamped
// to [1/100, 100] (a model of a few dozen compiles should not rule anything out by a factor
// beyond that).
#pragma once

#include <cstddef>
#include <vector>

#include <Eigen/Core>

#include <tuner/core/search/strategy.hpp>

namespace tune {

class CostModel {
 public:
  /// A model over the configs of `space`, which must outlive it.
  explicit CostModel(const SpaceIndex& space);

  /// Config `k` compiled in `seconds` (> 0); a second observation of a config is ignored.
  void add(std::size_t k, double seconds);
  /// Whether the model predicts: enough observations (twice the coefficients, at least 8) that
  /// differ by more than 2x between the cheapest and the dearest. Until then every config
  /// costs the same (relative() is 1).
  bool ready() const;
  /// Config `k`'s predicted compile seconds over the median observed, in [1/100, 100]; 1 when
  /// the model is not ready.
  double relative(std::size_t k);
  std::size_t observations() const noexcept { return logs_.size(); }

 private:
  Eigen::VectorXd features(std::size_t k) const;
  void solve();

  const SpaceIndex& space_;
  Eigen::Index features_ = 1;  // the intercept, then per param: 2 (ordered) or levels - 1
  Eigen::MatrixXd xtx_;
  Eigen::VectorXd xty_;
  std::vector<double> logs_;  // log seconds, in the order told
  std::vector<bool> seen_;
  double lowest_ = 0;
  double highest_ = 0;
  bool solved_ = false;  // coef_ and median_ are those of the observations so far
  Eigen::VectorXd coef_;
  double median_ = 0;
};

}  // namespace tune
