// The `bayes` strategy as it was before batch proposals and incremental model updates, frozen
// (bayes_before.hpp). The code is the old tuner/core/search/strategy_bayes.cpp unchanged but for
// its names: a fit from scratch and 2048 candidates scored per proposal.
#include "bayes_before.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <set>

#include <Eigen/Cholesky>
#include <Eigen/Core>

namespace tune::bench {

using tune::Random;
using tune::SearchSettings;
using tune::SpaceIndex;

namespace {

constexpr double noise_variance = 1e-3;  // in standardized units
constexpr double invalid_penalty = 1.0;  // log-time units above the worst valid config
constexpr std::size_t max_observations = 400;
constexpr int refit_every = 8;
constexpr double length_grid[] = {0.05, 0.1, 0.2, 0.35, 0.6, 1.0};

double matern52(double r, double length) {
  const double s = std::sqrt(5.0) * r / length;
  return (1 + s + s * s / 3) * std::exp(-s);
}

double normal_pdf(double z) {
  return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
}

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

class BayesBefore final : public OneAtATime {
 public:
  BayesBefore(const SpaceIndex& space, const SearchSettings& s)
      : space_(space),
        rng_(s.seed),
        order_(space.size()),
        told_(space.size(), false),
        initial_(static_cast<std::size_t>(s.option("initial"))),
        exploration_(s.option("exploration")),
        candidates_(static_cast<std::size_t>(s.option("candidates"))) {
    points_.resize(static_cast<Eigen::Index>(space.size()),
                   static_cast<Eigen::Index>(space.dims()));
    for (std::size_t k = 0; k < space.size(); ++k)
      for (std::size_t d = 0; d < space.dims(); ++d) {
        const int c = space.coords(k)[d];
        const std::size_t levels = space.levels(d);
        points_(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(d)) =
            c < 0 || levels < 2 ? 0.5 : static_cast<double>(c) / static_cast<double>(levels - 1);
      }
    std::iota(order_.begin(), order_.end(), std::size_t{0});
  }

  std::optional<std::size_t> next() override {
    if (told_count_ == space_.size()) return std::nullopt;
    const std::size_t valid = static_cast<std::size_t>(
        std::count_if(observed_.begin(), observed_.end(), [](const auto& o) { return o.second; }));
    if (told_count_ < initial_ || valid < 2) return random_untold();
    fit();
    return best_candidate();
  }

  void tell(std::size_t k, std::optional<double> value) override {
    if (told_[k]) return;
    told_[k] = true;
    ++told_count_;
    observed_.emplace_back(k, value);
  }

 private:
  std::optional<std::size_t> random_untold() {
    // A lazy Fisher-Yates over every config, skipping those told.
    while (drawn_ < order_.size()) {
      const std::size_t j = drawn_ + rng_.below(order_.size() - drawn_);
      std::swap(order_[drawn_], order_[j]);
      const std::size_t k = order_[drawn_++];
      if (!told_[k]) return k;
    }
    for (std::size_t k = 0; k < told_.size(); ++k)
      if (!told_[k]) return k;
    return std::nullopt;
  }

  // The observations the model is fitted to: every one while few, else the best half and the
  // most recent half of the cap.
  std::vector<std::size_t> training_set() const {
    std::vector<std::size_t> all(observed_.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    if (all.size() <= max_observations) return all;
    std::vector<std::size_t> by_value = all;
    auto key = [&](std::size_t i) {
      const auto& v = observed_[i].second;
      return v ? *v : std::numeric_limits<double>::infinity();
    };
    std::stable_sort(by_value.begin(), by_value.end(),
                     [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
    std::set<std::size_t> keep(by_value.begin(), by_value.begin() + max_observations / 2);
    for (std::size_t i = all.size(); i-- > 0 && keep.size() < max_observations;)
      keep.insert(i);
    return {keep.begin(), keep.end()};
  }

  Eigen::MatrixXd kernel(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, double length) const {
    Eigen::MatrixXd k(a.rows(), b.rows());
    for (Eigen::Index i = 0; i < a.rows(); ++i)
      for (Eigen::Index j = 0; j < b.rows(); ++j)
        k(i, j) = matern52((a.row(i) - b.row(j)).norm(), length);
    return k;
  }

  void fit() {
    const std::vector<std::size_t> train = training_set();
    const auto n = static_cast<Eigen::Index>(train.size());
    double worst = -std::numeric_limits<double>::infinity();
    for (const auto& [k, v] : observed_)
      if (v) worst = std::max(worst, *v);
    x_.resize(n, points_.cols());
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const auto& [k, v] = observed_[train[static_cast<std::size_t>(i)]];
      x_.row(i) = points_.row(static_cast<Eigen::Index>(k));
      y(i) = v ? *v : worst + invalid_penalty;
    }
    mean_ = y.mean();
    const double var = (y.array() - mean_).square().mean();
    scale_ = var > 1e-12 ? std::sqrt(var) : 1.0;
    y_ = (y.array() - mean_) / scale_;
    best_y_ = y_.minCoeff();
    const double d = std::max<double>(1.0, static_cast<double>(points_.cols()));
    if (fits_++ % refit_every == 0) {
      double best_ml = -std::numeric_limits<double>::infinity();
      for (double g : length_grid) {
        const double ml = marginal_likelihood(g * std::sqrt(d));
        if (ml > best_ml) {
          best_ml = ml;
          length_ = g * std::sqrt(d);
        }
      }
    }
    factor(length_);
  }

  bool factor(double length) {
    Eigen::MatrixXd k = kernel(x_, x_, length);
    k.diagonal().array() += noise_variance;
    llt_.compute(k);
    if (llt_.info() != Eigen::Success) return false;
    alpha_ = llt_.solve(y_);
    return true;
  }

  double marginal_likelihood(double length) {
    if (!factor(length)) return -std::numeric_limits<double>::infinity();
    const Eigen::MatrixXd l = llt_.matrixL();
    return -0.5 * y_.dot(alpha_) - l.diagonal().array().log().sum();
  }

  // The unmeasured configs to score: all, or the neighbours of the best five and a sample.
  std::vector<std::size_t> candidates() {
    std::vector<std::size_t> out;
    const std::size_t untold = space_.size() - told_count_;
    if (untold <= candidates_) {
      for (std::size_t k = 0; k < told_.size(); ++k)
        if (!told_[k]) out.push_back(k);
      return out;
    }
    std::set<std::size_t> chosen;
    std::vector<std::pair<double, std::size_t>> best;
    for (const auto& [k, v] : observed_)
      if (v) best.emplace_back(*v, k);
    std::sort(best.begin(), best.end());
    for (std::size_t b = 0; b < std::min<std::size_t>(5, best.size()); ++b)
      for (std::size_t d = 0; d < space_.dims(); ++d)
        for (int step : {-1, 1}) {
          std::vector<int> c = space_.coords(best[b].second);
          c[d] += step;
          if (std::optional<std::size_t> k = space_.find(c); k && !told_[*k]) chosen.insert(*k);
        }
    for (std::size_t tries = 0; chosen.size() < candidates_ && tries < 8 * candidates_; ++tries) {
      const std::size_t k = rng_.below(space_.size());
      if (!told_[k]) chosen.insert(k);
    }
    return {chosen.begin(), chosen.end()};
  }

  std::optional<std::size_t> best_candidate() {
    const std::vector<std::size_t> cands = candidates();
    if (cands.empty()) return random_untold();
    Eigen::MatrixXd xs(static_cast<Eigen::Index>(cands.size()), points_.cols());
    for (std::size_t i = 0; i < cands.size(); ++i)
      xs.row(static_cast<Eigen::Index>(i)) = points_.row(static_cast<Eigen::Index>(cands[i]));
    const Eigen::MatrixXd ks = kernel(xs, x_, length_);              // m x n
    const Eigen::VectorXd mu = ks * alpha_;                          // predictive means
    const Eigen::MatrixXd v = llt_.matrixL().solve(ks.transpose());  // n x m
    const Eigen::VectorXd var =
        (1.0 - v.colwise().squaredNorm().array()).max(1e-12).matrix().transpose();
    std::optional<std::size_t> pick;
    double best_ei = -1;
    for (std::size_t i = 0; i < cands.size(); ++i) {
      const auto ii = static_cast<Eigen::Index>(i);
      const double sigma = std::sqrt(var(ii));
      const double gain = best_y_ - mu(ii) - exploration_;
      const double z = gain / sigma;
      const double ei = gain * normal_cdf(z) + sigma * normal_pdf(z);
      if (ei > best_ei) {
        best_ei = ei;
        pick = cands[i];
      }
    }
    return pick;
  }

  const SpaceIndex& space_;
  Random rng_;
  std::vector<std::size_t> order_;
  std::size_t drawn_ = 0;
  std::vector<bool> told_;
  std::size_t told_count_ = 0;
  std::vector<std::pair<std::size_t, std::optional<double>>> observed_;
  std::size_t initial_;
  double exploration_;
  std::size_t candidates_;
  Eigen::MatrixXd points_;
  Eigen::MatrixXd x_;
  Eigen::VectorXd y_;
  Eigen::VectorXd alpha_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  double mean_ = 0;
  double scale_ = 1;
  double best_y_ = 0;
  double length_ = 0.35;
  int fits_ = 0;
};

}  // namespace

std::unique_ptr<OneAtATime> make_bayes_before(const SpaceIndex& space,
                                              const SearchSettings& settings) {
  return std::make_unique<BayesBefore>(space, settings);
}

}  // namespace tune::bench
