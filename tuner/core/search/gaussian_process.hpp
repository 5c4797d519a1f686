// Internal to tune_core (not installed): the Gaussian process of the `bayes` strategy
// (strategy_bayes.cpp), kept up to date as observations come and go rather than fitted again
// for every proposal.
//
// The model is a Gaussian process over a fixed set of points (each config's positions in its
// params' value lists, scaled to [0, 1]) with a Matern 5/2 kernel of unit prior variance and a
// fixed noise. It keeps:
// - the training set (point indices) and, for each length scale of its grid, the Cholesky
//   factor L of K(train, train) + noise: adding a point appends a row to each (O(m^2) per
//   length), removing one is a rank-one update of the rows below it (Givens rotations), and the
//   marginal likelihood of each length is then a triangular solve away;
// - a pool of points whose predictions it serves, as the columns of V = L^-1 K(train, pool)
//   for the current length: the predicted means are V^T L^-1 y and the variances
//   1 - |V column|^2, and an added or removed training point changes V by one row (O(m * pool));
// - pending points of the pool, on which the variances are also conditioned (the kriging
//   believer of a batch: believing that a pending point gives the predicted mean leaves the
//   means as they are and shrinks the variance around it), one row each, conditioned on the
//   rows before it in the order they were added.
//
// Only a new length scale or a new pool recomputes V from scratch (O(m^2 * pool)).
#pragma once

#include <cstddef>
#include <vector>

#include <Eigen/Core>

namespace tune {

class GaussianProcess {
 public:
  /// A model over the rows of `points` (one per config), which must outlive it, with the
  /// length scales `lengths` (chosen among by the marginal likelihood) and the noise variance
  /// `noise` (in the standardized units of the values).
  GaussianProcess(const Eigen::MatrixXd& points, std::vector<double> lengths, double noise);

  // --- the training set

  /// Fits from scratch on the points `train` (their order is the values' order from now on): a
  /// factor per length, the current length kept unless it gives none (choose_length follows).
  /// The pool and the pending points stay. False when no length gives a factor.
  bool fit(std::vector<std::size_t> train);
  /// Appends point `k` to the training set. False when the current length's factor would lose
  /// its precision (fit again); a factor of another length that would is no longer chosen.
  bool add(std::size_t k);
  /// Removes the training set's `i`-th point.
  void remove(std::size_t i);
  /// The training set's points, in the order of the values.
  const std::vector<std::size_t>& train() const noexcept { return train_; }

  // --- the length scale

  /// The current length scale, an index of the grid.
  std::size_t length() const noexcept { return length_; }
  /// Makes the length scale the one of the highest marginal likelihood for the values `y` (of
  /// the training set, in order; the shorter on a tie).
  bool choose_length(const Eigen::VectorXd& y);
  /// The log marginal likelihood of `y` under length `g`, up to a constant; -infinity when
  /// that length's factor lost its precision.
  double marginal_likelihood(std::size_t g, const Eigen::VectorXd& y) const;

  // --- the pool

  /// Replaces the pool by `pool` (points); the pending points must be in it.
  void set_pool(std::vector<std::size_t> pool);
  /// Adds point `k` to the pool (nothing when it is there).
  void add_to_pool(std::size_t k);
  const std::vector<std::size_t>& pool() const noexcept { return pool_; }
  /// Point `k`'s place in the pool, or -1.
  int column(std::size_t k) const { return column_[k]; }

  // --- pending points

  /// Conditions the variances on point `k` as well, after the pending points before it. It
  /// must be in the pool by the next variances().
  void add_pending(std::size_t k);
  /// No longer conditions on point `k` (nothing when it is not pending).
  void remove_pending(std::size_t k);
  const std::vector<std::size_t>& pending() const noexcept { return pending_; }

  // --- predictions, over the pool in its order

  /// The predicted means for the training set's values `y` (in order).
  Eigen::VectorXd means(const Eigen::VectorXd& y);
  /// The predicted variances given the training set and the pending points.
  Eigen::VectorXd variances();
  /// Counts the changes that move the means for given values (the training set, the length,
  /// the pool), so that a caller may keep them.
  std::size_t version() const noexcept { return version_; }

  // --- the kernel alone

  /// The Matern 5/2 kernel between the rows of `a` and those of `b`, of unit variance.
  static Eigen::MatrixXd matern(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, double length);
  /// The log marginal likelihood of `y` at the rows of `x` (a model fitted from scratch, for
  /// choosing among scalings of the points), up to a constant; -infinity when the kernel matrix
  /// is not positive definite.
  static double likelihood(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, double length,
                           double noise);

 private:
  using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  Eigen::MatrixXd kernel(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, double length) const {
    return matern(a, b, length);
  }
  Eigen::MatrixXd gather(const std::vector<std::size_t>& points) const;
  auto factor() const;
  void ensure_columns();
  void account(const Eigen::RowVectorXd& z, double sign);
  Eigen::RowVectorXd prior_row(int c) const;
  void condition_row(std::size_t i);

  const Eigen::MatrixXd& points_;
  std::vector<double> lengths_;
  double noise_;
  std::vector<std::size_t> train_;
  std::vector<Eigen::MatrixXd> factors_;  // per length: top-left train_.size() square
  std::vector<bool> usable_;              // per length: its factor kept its precision
  std::size_t length_ = 0;
  std::vector<std::size_t> pool_;
  std::vector<int> column_;   // per point
  Eigen::MatrixXd pool_x_;    // the pool's points
  bool columns_ = false;      // v_, var_real_ and known_ are up to date
  RowMatrix v_;               // L^-1 K(train, pool): train_.size() rows
  Eigen::VectorXd var_real_;  // the pool's variances given the training set
  std::vector<std::size_t> pending_;
  RowMatrix known_;  // per pending point (known_rows_ of them): K(it, pool) - V_it^T V
  std::size_t known_rows_ = 0;
  RowMatrix w_;  // the pending rows conditioned in order (conditioned_ of them)
  std::size_t conditioned_ = 0;
  Eigen::VectorXd var_;  // the pool's variances given the training set and the pending points
  std::size_t version_ = 0;
};

}  // namespace tune
