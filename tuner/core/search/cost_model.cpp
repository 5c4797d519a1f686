#include <tuner/core/search/cost_model.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include <Eigen/Cholesky>

namespace tune {

namespace {

constexpr double ridge = 1e-2;                  // per observation, on every slope coefficient
constexpr double clamp = 100;                   // relative costs stay in [1/clamp, clamp]
constexpr double min_spread = 0.6931471805599;  // log(2): below, the costs are all alike

}  // namespace

CostModel::CostModel(const SpaceIndex& space) : space_(space), seen_(space.size(), false) {
  for (std::size_t d = 0; d < space.dims(); ++d)
    features_ += space.categorical(d) ? static_cast<Eigen::Index>(space.levels(d)) - 1 : 2;
  xtx_ = Eigen::MatrixXd::Zero(features_, features_);
  xty_ = Eigen::VectorXd::Zero(features_);
}

Eigen::VectorXd CostModel::features(std::size_t k) const {
  Eigen::VectorXd x = Eigen::VectorXd::Zero(features_);
  x(0) = 1;
  Eigen::Index at = 1;
  const std::vector<int>& coords = space_.coords(k);
  for (std::size_t d = 0; d < space_.dims(); ++d) {
    const int c = coords[d];
    const auto levels = static_cast<int>(space_.levels(d));
    if (space_.categorical(d)) {
      if (c > 0) x(at + c - 1) = 1;  // the first category is the intercept's
      at += levels - 1;
      continue;
    }
    const double v = c < 0 || levels < 2 ? 0.5 : static_cast<double>(c) / (levels - 1);
    x(at++) = v;
    x(at++) = v * v;
  }
  return x;
}

void CostModel::add(std::size_t k, double seconds) {
  if (k >= seen_.size() || seen_[k] || !(seconds > 0) || !std::isfinite(seconds)) return;
  seen_[k] = true;
  const double y = std::log(seconds);
  const Eigen::VectorXd x = features(k);
  xtx_.noalias() += x * x.transpose();
  xty_ += y * x;
  lowest_ = logs_.empty() ? y : std::min(lowest_, y);
  highest_ = logs_.empty() ? y : std::max(highest_, y);
  logs_.push_back(y);
  solved_ = false;
}

bool CostModel::ready() const {
  const auto need = std::max<std::size_t>(8, 2 * static_cast<std::size_t>(xtx_.rows()));
  return logs_.size() >= need && highest_ - lowest_ > min_spread;
}

void CostModel::solve() {
  Eigen::MatrixXd a = xtx_;
  const double lambda = ridge * static_cast<double>(logs_.size());
  for (Eigen::Index i = 1; i < a.rows(); ++i)
    a(i, i) += lambda;
  coef_ = a.ldlt().solve(xty_);
  std::vector<double> sorted = logs_;
  const auto mid = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
  std::nth_element(sorted.begin(), mid, sorted.end());
  median_ = *mid;
  solved_ = true;
}

double CostModel::relative(std::size_t k) {
  if (!ready()) return 1;
  if (!solved_) solve();
  const double log_ratio = features(k).dot(coef_) - median_;
  if (!std::isfinite(log_ratio)) return 1;
  return std::clamp(std::exp(log_ratio), 1 / clamp, clamp);
}

}  // namespace tune
