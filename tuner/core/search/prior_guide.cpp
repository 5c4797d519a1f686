#include <tuner/core/search/prior_guide.hpp>

#include <algorithm>

#include <fmt/core.h>

#include <tuner/core/base/result.hpp>

namespace tune {

namespace {

// The ridge on the offsets: an offset seen once moves four fifths of the way to what it saw.
constexpr double ridge = 0.25;

double median(std::vector<double> x) {
  if (x.empty()) return 0;
  const auto mid = x.begin() + static_cast<std::ptrdiff_t>(x.size() / 2);
  std::nth_element(x.begin(), mid, x.end());
  return *mid;
}

}  // namespace

PriorGuide::PriorGuide(const SpaceIndex& space, const PriorValues& prior)
    : space_(space), prior_(prior), ranked_(prior_ranking(prior)), told_(space.size(), false) {
  if (!prior_.empty() && prior_.size() != space.size())
    throw error(fmt::format("prior guide: a prior of {} configs for a space of {}", prior_.size(),
                            space.size()));
  std::size_t features = 0;
  for (std::size_t d = 0; d < space.dims(); ++d) {
    first_.push_back(features);
    features += space.levels(d);
  }
  std::vector<double> values;
  for (std::size_t k : ranked_)
    values.push_back(*prior_[k]);
  prior_median_ = median(std::move(values));
  const auto f = static_cast<Eigen::Index>(features);
  shown_.assign(features, false);
  gram_ = Eigen::MatrixXd::Zero(f, f);
  moment_ = Eigen::VectorXd::Zero(f);
  counts_ = Eigen::VectorXd::Zero(f);
  offsets_ = Eigen::VectorXd::Zero(f);
}

void PriorGuide::tell(std::size_t k, const std::optional<double>& value) {
  if (empty() || told_.at(k)) return;
  told_[k] = true;
  std::vector<Eigen::Index> on;
  for (std::size_t d = 0; d < space_.dims(); ++d)
    if (const std::optional<std::size_t> f = feature(k, d)) {
      shown_[*f] = true;
      on.push_back(static_cast<Eigen::Index>(*f));
    }
  if (!value) return;
  outcomes_.push_back(*value);
  if (prior_[k]) {
    const double r = *value - *prior_[k];
    residuals_.push_back(r);
    for (Eigen::Index i : on) {
      moment_(i) += r;
      counts_(i) += 1;
      for (Eigen::Index j : on)
        gram_(i, j) += 1;
    }
  }
  fit();
}

std::optional<std::size_t> PriorGuide::probe(const Ledger& ledger) {
  auto shows_new = [&](std::size_t k) {
    for (std::size_t d = 0; d < space_.dims(); ++d)
      if (const std::optional<std::size_t> f = feature(k, d); f && !shown_[*f]) return true;
    return false;
  };
  // What is told, or shows nothing new, stays so: the head moves past it for good.
  while (probe_head_ < ranked_.size() &&
         (told_[ranked_[probe_head_]] || ledger.told(ranked_[probe_head_]) ||
          !shows_new(ranked_[probe_head_])))
    ++probe_head_;
  for (std::size_t i = probe_head_; i < ranked_.size(); ++i) {
    const std::size_t k = ranked_[i];
    if (ledger.open(k) && shows_new(k)) return k;
  }
  return std::nullopt;
}

std::optional<std::size_t> PriorGuide::best_open(const Ledger& ledger) {
  if (empty()) return std::nullopt;
  if (!ordered_) {
    std::vector<double> key(space_.size(), 0);
    for (std::size_t k : ranked_)
      key[k] = *prior_[k] + offsets_of(k);
    order_ = ranked_;
    std::stable_sort(order_.begin(), order_.end(),
                     [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
    order_head_ = 0;
    ordered_ = true;
  }
  while (order_head_ < order_.size() && ledger.told(order_[order_head_]))
    ++order_head_;
  for (std::size_t i = order_head_; i < order_.size(); ++i)
    if (ledger.open(order_[i])) return order_[i];
  return std::nullopt;
}

std::optional<std::size_t> PriorGuide::next(const Ledger& ledger) {
  if (std::optional<std::size_t> k = probe(ledger)) return k;
  return best_open(ledger);
}

std::optional<double> PriorGuide::corrected(std::size_t k) const {
  if (empty() || !prior_.at(k)) return std::nullopt;
  return *prior_[k] + shift_ + offsets_of(k);
}

std::optional<std::size_t> PriorGuide::feature(std::size_t k, std::size_t d) const {
  const int c = space_.coords(k)[d];
  if (c < 0) return std::nullopt;
  return first_[d] + static_cast<std::size_t>(c);
}

double PriorGuide::offsets_of(std::size_t k) const {
  double sum = 0;
  for (std::size_t d = 0; d < space_.dims(); ++d)
    if (const std::optional<std::size_t> f = feature(k, d))
      sum += offsets_(static_cast<Eigen::Index>(*f));
  return sum;
}

// The shift and the offsets: a ridge regression of the residuals less the shift on the values'
// indicators.
void PriorGuide::fit() {
  if (!residuals_.empty()) {
    shift_ = median(residuals_);
    const Eigen::Index f = gram_.rows();
    const Eigen::MatrixXd lhs = gram_ + ridge * Eigen::MatrixXd::Identity(f, f);
    offsets_ = lhs.ldlt().solve(moment_ - shift_ * counts_);
  } else if (!outcomes_.empty()) {
    shift_ = median(outcomes_) - prior_median_;
  }
  ordered_ = false;
}

}  // namespace tune
