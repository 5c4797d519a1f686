#include <tuner/core/search/gaussian_process.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Cholesky>

namespace tune {

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::RowVectorXd;
using Eigen::VectorXd;

Index ix(std::size_t i) {
  return static_cast<Index>(i);
}

// Grows `m` to hold at least `rows` x `cols`, keeping its contents (doubling, so that appends
// cost amortized constant time).
template <typename M>
void reserve(M& m, std::size_t rows, std::size_t cols) {
  const Index r = m.rows() >= ix(rows) ? m.rows() : std::max(ix(rows), 2 * m.rows());
  const Index c = m.cols() >= ix(cols) ? m.cols() : std::max(ix(cols), 2 * m.cols());
  if (r != m.rows() || c != m.cols()) m.conservativeResize(r, c);
}

void reserve(VectorXd& v, std::size_t n) {
  if (v.size() < ix(n)) v.conservativeResize(std::max(ix(n), 2 * v.size()));
}

// Appends row m to the Cholesky factor `l` (m x m in its top-left corner) of a kernel matrix of
// unit diagonal plus `noise`: [lm^T, sqrt(1 + noise - |lm|^2)], where lm = L^-1 k(new point).
// False when the new diagonal is too small to divide by.
bool append_row(MatrixXd& l, std::size_t m, const VectorXd& lm, double noise) {
  const double d2 = 1.0 + noise - lm.squaredNorm();
  if (!(d2 > 1e-9)) return false;
  reserve(l, m + 1, m + 1);
  l.row(ix(m)).head(ix(m)) = lm.transpose();
  l(ix(m), ix(m)) = std::sqrt(d2);
  return true;
}

// Removes row and column i from the Cholesky factor `l` (m x m in its top-left corner): the
// rows below move up, and the trailing block takes the removed column's part by a rank-one
// update (Givens rotations). With `v` (m rows of `cols`: L^-1 times some K), its rows are
// rotated alike, so that it stays L'^-1 K' for K less its row i, and what the rotations leave
// over of row i is returned: V'^T V' = V^T V - z^T z.
template <typename RowMatrix>
RowVectorXd remove_row(MatrixXd& l, std::size_t m, std::size_t i, RowMatrix* v, std::size_t cols) {
  const Index n = ix(m - i - 1);  // the trailing block's size
  VectorXd x = l.col(ix(i)).segment(ix(i + 1), n);
  if (i > 0) l.block(ix(i), 0, n, ix(i)) = l.block(ix(i + 1), 0, n, ix(i)).eval();
  for (Index c = 0; c < n; ++c)
    l.col(ix(i) + c).segment(ix(i) + c, n - c) = l.col(ix(i + 1) + c).segment(ix(i + 1) + c, n - c);
  RowVectorXd z;
  if (v != nullptr) {
    z = v->row(ix(i)).head(ix(cols));
    if (n > 0)
      v->middleRows(ix(i), n).leftCols(ix(cols)) =
          v->middleRows(ix(i + 1), n).leftCols(ix(cols)).eval();
  }
  for (Index k = 0; k < n; ++k) {
    const Index kk = ix(i) + k;
    const double lkk = l(kk, kk);
    const double r = std::hypot(lkk, x(k));
    const double c = lkk / r;
    const double s = x(k) / r;
    l(kk, kk) = r;
    const Index below = n - k - 1;
    if (below > 0) {
      auto lk = l.col(kk).segment(kk + 1, below);
      auto xk = x.segment(k + 1, below);
      const VectorXd lk_new = c * lk + s * xk;
      xk = -s * lk + c * xk;
      lk = lk_new;
    }
    if (v != nullptr) {
      auto vk = v->row(kk).head(ix(cols));
      const RowVectorXd vk_new = c * vk + s * z;
      z = -s * vk + c * z;
      vk = vk_new;
    }
  }
  return z;
}

}  // namespace

GaussianProcess::GaussianProcess(const MatrixXd& points, std::vector<double> lengths, double noise)
    : points_(points),
      lengths_(std::move(lengths)),
      noise_(noise),
      factors_(lengths_.size()),
      usable_(lengths_.size(), false),
      column_(static_cast<std::size_t>(points.rows()), -1) {}

MatrixXd GaussianProcess::matern(const MatrixXd& a, const MatrixXd& b, double length) {
  // Distances by |a|^2 + |b|^2 - 2 a.b (a product, so that many pairs cost little), then
  // Matern 5/2: (1 + s + s^2 / 3) exp(-s), s = sqrt(5) r / length.
  MatrixXd d2 = -2.0 * (a * b.transpose());
  d2.colwise() += a.rowwise().squaredNorm();
  d2.rowwise() += b.rowwise().squaredNorm().transpose();
  const Eigen::ArrayXXd s = d2.array().max(0.0).sqrt() * (std::sqrt(5.0) / length);
  return ((1.0 + s + s.square() / 3.0) * (-s).exp()).matrix();
}

double GaussianProcess::likelihood(const MatrixXd& x, const VectorXd& y, double length,
                                   double noise) {
  MatrixXd k = matern(x, x, length);
  k.diagonal().array() += noise;
  Eigen::LLT<MatrixXd> llt(k);
  if (llt.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
  const auto l = llt.matrixL();
  return -0.5 * l.solve(y).squaredNorm() - llt.matrixLLT().diagonal().array().log().sum();
}

MatrixXd GaussianProcess::gather(const std::vector<std::size_t>& points) const {
  MatrixXd x(ix(points.size()), points_.cols());
  for (std::size_t i = 0; i < points.size(); ++i)
    x.row(ix(i)) = points_.row(ix(points[i]));
  return x;
}

auto GaussianProcess::factor() const {
  return factors_[length_].topLeftCorner(ix(train_.size()), ix(train_.size()));
}

bool GaussianProcess::fit(std::vector<std::size_t> train) {
  train_ = std::move(train);
  const std::size_t m = train_.size();
  const MatrixXd x = gather(train_);
  for (std::size_t g = 0; g < lengths_.size(); ++g) {
    MatrixXd k = kernel(x, x, lengths_[g]);
    k.diagonal().array() += noise_;
    Eigen::LLT<MatrixXd> llt(k);
    usable_[g] = llt.info() == Eigen::Success;
    if (!usable_[g]) continue;
    factors_[g].resize(ix(m + 64), ix(m + 64));
    factors_[g].topLeftCorner(ix(m), ix(m)) = llt.matrixL();
  }
  columns_ = false;
  ++version_;
  if (!usable_[length_]) {
    auto first = std::find(usable_.begin(), usable_.end(), true);
    if (first == usable_.end()) return false;
    length_ = static_cast<std::size_t>(first - usable_.begin());
  }
  return true;
}

bool GaussianProcess::add(std::size_t k) {
  const std::size_t m = train_.size();
  const std::size_t np = pool_.size();
  const MatrixXd xk = points_.row(ix(k));
  const MatrixXd x = gather(train_);
  for (std::size_t g = 0; g < lengths_.size(); ++g) {
    if (g == length_ || !usable_[g]) continue;
    const VectorXd lg = factors_[g]
                            .topLeftCorner(ix(m), ix(m))
                            .triangularView<Eigen::Lower>()
                            .solve(kernel(x, xk, lengths_[g]));
    usable_[g] = append_row(factors_[g], m, lg, noise_);
  }
  // The current length's row: L^-1 k(x, new point) is the point's column of V when it is in
  // the pool.
  const int c = column_[k];
  const VectorXd l = columns_ && c >= 0 ? VectorXd(v_.col(c).head(ix(m)))
                                        : VectorXd(factor().triangularView<Eigen::Lower>().solve(
                                              kernel(x, xk, lengths_[length_])));
  if (!append_row(factors_[length_], m, l, noise_)) {
    usable_[length_] = false;
    return false;
  }
  train_.push_back(k);
  ++version_;
  if (!columns_) return true;
  const double d = factors_[length_](ix(m), ix(m));
  reserve(v_, m + 1, np);
  const RowVectorXd kp = kernel(xk, pool_x_.topRows(ix(np)), lengths_[length_]).row(0);
  v_.row(ix(m)).head(ix(np)) = (kp - l.transpose() * v_.topLeftCorner(ix(m), ix(np))) / d;
  account(v_.row(ix(m)).head(ix(np)), -1.0);
  return true;
}

void GaussianProcess::remove(std::size_t i) {
  const std::size_t m = train_.size();
  for (std::size_t g = 0; g < lengths_.size(); ++g)
    if (g != length_ && usable_[g]) remove_row<RowMatrix>(factors_[g], m, i, nullptr, 0);
  const RowVectorXd z = remove_row(factors_[length_], m, i, columns_ ? &v_ : nullptr, pool_.size());
  train_.erase(train_.begin() + static_cast<std::ptrdiff_t>(i));
  ++version_;
  if (columns_) account(z, 1.0);
}

// A row `z` added to V (sign -1) or taken out of it (+1): the pool's variances and the
// pending points' prior rows change by z^T z.
void GaussianProcess::account(const RowVectorXd& z, double sign) {
  const std::size_t np = pool_.size();
  var_real_.head(ix(np)).array() += sign * z.head(ix(np)).array().square().transpose();
  for (std::size_t i = 0; i < known_rows_; ++i) {
    const int c = column_[pending_[i]];
    known_.row(ix(i)).head(ix(np)) += sign * z(c) * z.head(ix(np));
  }
  conditioned_ = 0;
}

double GaussianProcess::marginal_likelihood(std::size_t g, const VectorXd& y) const {
  if (!usable_[g]) return -std::numeric_limits<double>::infinity();
  const auto l = factors_[g].topLeftCorner(y.size(), y.size());
  return -0.5 * l.triangularView<Eigen::Lower>().solve(y).squaredNorm() -
         l.diagonal().array().log().sum();
}

bool GaussianProcess::choose_length(const VectorXd& y) {
  std::size_t best = length_;
  double best_ml = -std::numeric_limits<double>::infinity();
  for (std::size_t g = 0; g < lengths_.size(); ++g) {
    const double ml = marginal_likelihood(g, y);
    if (ml > best_ml) {
      best_ml = ml;
      best = g;
    }
  }
  if (best == length_) return false;
  length_ = best;
  columns_ = false;
  ++version_;
  return true;
}

void GaussianProcess::set_pool(std::vector<std::size_t> pool) {
  for (std::size_t k : pool_)
    column_[k] = -1;
  pool_ = std::move(pool);
  for (std::size_t j = 0; j < pool_.size(); ++j)
    column_[pool_[j]] = static_cast<int>(j);
  pool_x_ = gather(pool_);
  columns_ = false;
  ++version_;
}

void GaussianProcess::add_to_pool(std::size_t k) {
  if (column_[k] >= 0) return;
  const std::size_t j = pool_.size();
  pool_.push_back(k);
  column_[k] = static_cast<int>(j);
  reserve(pool_x_, j + 1, static_cast<std::size_t>(points_.cols()));
  pool_x_.row(ix(j)) = points_.row(ix(k));
  ++version_;
  if (!columns_) return;
  const std::size_t m = train_.size();
  const double length = lengths_[length_];
  const MatrixXd xk = points_.row(ix(k));
  reserve(v_, static_cast<std::size_t>(v_.rows()), j + 1);
  v_.col(ix(j)).head(ix(m)) =
      factor().triangularView<Eigen::Lower>().solve(kernel(gather(train_), xk, length));
  reserve(var_real_, j + 1);
  var_real_(ix(j)) = 1.0 - v_.col(ix(j)).head(ix(m)).squaredNorm();
  // The pending points' prior rows gain the column.
  reserve(known_, static_cast<std::size_t>(known_.rows()), j + 1);
  for (std::size_t i = 0; i < known_rows_; ++i) {
    const int c = column_[pending_[i]];
    known_(ix(i), ix(j)) = kernel(pool_x_.row(c), xk, length)(0, 0) -
                           v_.col(c).head(ix(m)).dot(v_.col(ix(j)).head(ix(m)));
  }
  conditioned_ = 0;
}

// The pool's columns of V and their variances from scratch, and the pending points' prior rows.
void GaussianProcess::ensure_columns() {
  if (columns_) return;
  const std::size_t m = train_.size();
  const std::size_t np = pool_.size();
  MatrixXd kx = kernel(gather(train_), pool_x_.topRows(ix(np)), lengths_[length_]);
  factor().triangularView<Eigen::Lower>().solveInPlace(kx);
  v_.resize(ix(m + 64), ix(np));
  v_.topRows(ix(m)) = kx;
  reserve(var_real_, np);
  var_real_.head(ix(np)) = (1.0 - kx.colwise().squaredNorm().array()).matrix().transpose();
  known_rows_ = 0;
  conditioned_ = 0;
  columns_ = true;
}

void GaussianProcess::add_pending(std::size_t k) {
  pending_.push_back(k);
  // While the conditioning is up to date, this one follows at once (else variances() does it).
  const std::size_t i = pending_.size() - 1;
  if (!columns_ || column_[k] < 0 || known_rows_ != i || conditioned_ != i) return;
  reserve(known_, i + 1, pool_.size());
  known_.row(ix(i)).head(ix(pool_.size())) = prior_row(column_[k]);
  known_rows_ = i + 1;
  condition_row(i);
}

void GaussianProcess::remove_pending(std::size_t k) {
  auto it = std::find(pending_.begin(), pending_.end(), k);
  if (it == pending_.end()) return;
  const std::size_t p = static_cast<std::size_t>(it - pending_.begin());
  pending_.erase(it);
  if (p < known_rows_) {
    // The rows after it move up one.
    const Index rows = ix(known_rows_ - p - 1);
    if (rows > 0) known_.middleRows(ix(p), rows) = known_.middleRows(ix(p + 1), rows).eval();
    --known_rows_;
  }
  conditioned_ = 0;
}

// The prior covariance of pool column `c` with every pool column given the training set:
// K(c, pool) - V_c^T V.
RowVectorXd GaussianProcess::prior_row(int c) const {
  const std::size_t m = train_.size();
  const std::size_t np = pool_.size();
  const RowVectorXd kc = kernel(pool_x_.row(c), pool_x_.topRows(ix(np)), lengths_[length_]).row(0);
  return kc - v_.col(c).head(ix(m)).transpose() * v_.topLeftCorner(ix(m), ix(np));
}

// Conditions on pending point i (rows 0..i-1 done): w_i = (prior_i - W_<i,c^T W_<i) / d, d the
// point's standard deviation given what comes before it, noise included.
void GaussianProcess::condition_row(std::size_t i) {
  const std::size_t np = pool_.size();
  const int c = column_[pending_[i]];
  reserve(w_, i + 1, np);
  const double d = std::sqrt(std::max(var_(c), 0.0) + noise_);
  w_.row(ix(i)).head(ix(np)) =
      (known_.row(ix(i)).head(ix(np)) -
       w_.col(c).head(ix(i)).transpose() * w_.topLeftCorner(ix(i), ix(np))) /
      d;
  var_.head(ix(np)).array() -= w_.row(ix(i)).head(ix(np)).array().square().transpose();
  conditioned_ = i + 1;
}

VectorXd GaussianProcess::means(const VectorXd& y) {
  ensure_columns();
  const VectorXd w = factor().triangularView<Eigen::Lower>().solve(y);
  return v_.topLeftCorner(ix(train_.size()), ix(pool_.size())).transpose() * w;
}

VectorXd GaussianProcess::variances() {
  ensure_columns();
  const std::size_t np = pool_.size();
  reserve(known_, pending_.size(), np);
  for (; known_rows_ < pending_.size(); ++known_rows_)
    known_.row(ix(known_rows_)).head(ix(np)) = prior_row(column_[pending_[known_rows_]]);
  if (conditioned_ == 0) {
    reserve(var_, np);
    var_.head(ix(np)) = var_real_.head(ix(np));
  }
  for (std::size_t i = conditioned_; i < pending_.size(); ++i)
    condition_row(i);
  return var_.head(ix(np));
}

}  // namespace tune
