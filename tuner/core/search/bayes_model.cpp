#include <tuner/core/search/bayes_model.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <utility>

#include <tuner/core/search/gaussian_process.hpp>

namespace tune::detail {

namespace {

constexpr double length_grid[] = {0.05, 0.1, 0.2, 0.35, 0.6, 1.0};
constexpr double relevance_bounds[] = {0.125, 8.0};

double normal_pdf(double z) {
  return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
}

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

}  // namespace

Eigen::MatrixXd encoding_of(const SpaceIndex& space, std::vector<std::size_t>& groups) {
  groups.clear();
  for (std::size_t d = 0; d < space.dims(); ++d) {
    const std::size_t columns = space.categorical(d) ? space.levels(d) : 1;
    groups.insert(groups.end(), columns, d);
  }
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(space.size()),
                                            static_cast<Eigen::Index>(groups.size()));
  for (std::size_t k = 0; k < space.size(); ++k) {
    Eigen::Index col = 0;
    for (std::size_t d = 0; d < space.dims(); ++d) {
      const int c = space.coords(k)[d];
      const std::size_t levels = space.levels(d);
      const auto row = static_cast<Eigen::Index>(k);
      if (space.categorical(d)) {
        if (c >= 0) x(row, col + c) = std::sqrt(0.5);
        col += static_cast<Eigen::Index>(levels);
      } else {
        x(row, col++) =
            c < 0 || levels < 2 ? 0.5 : static_cast<double>(c) / static_cast<double>(levels - 1);
      }
    }
  }
  return x;
}

std::vector<double> lengths_of(const SpaceIndex& space) {
  const double scale = std::sqrt(std::max<double>(1.0, static_cast<double>(space.dims())));
  std::vector<double> out;
  for (double g : length_grid)
    out.push_back(g * scale);
  return out;
}

std::vector<std::size_t> moves(const SpaceIndex& space, std::size_t k, int params) {
  std::vector<std::size_t> out;
  const std::vector<int>& at = space.coords(k);
  std::vector<int> c = at;
  for (std::size_t d = 0; d < space.dims(); ++d) {
    if (at[d] < 0) continue;
    for (int v = 0; v < static_cast<int>(space.levels(d)); ++v) {
      if (v == at[d]) continue;
      c[d] = v;
      if (params == 1) {
        if (std::optional<std::size_t> nb = space.find(c)) out.push_back(*nb);
        continue;
      }
      for (std::size_t e = d + 1; e < space.dims(); ++e) {
        if (at[e] < 0) continue;
        for (int w = 0; w < static_cast<int>(space.levels(e)); ++w) {
          if (w == at[e]) continue;
          c[e] = w;
          if (std::optional<std::size_t> nb = space.find(c)) out.push_back(*nb);
        }
        c[e] = at[e];
      }
    }
    c[d] = at[d];
  }
  return out;
}

bool trade_off(const SpaceIndex& space, std::size_t a, std::size_t b) {
  const std::vector<int>& from = space.coords(a);
  const std::vector<int>& to = space.coords(b);
  int moved = 0;
  int direction = 1;  // the product of the moves' signs
  for (std::size_t d = 0; d < space.dims(); ++d) {
    if (from[d] == to[d]) continue;
    if (space.categorical(d) || space.levels(d) < 3 || from[d] < 0 || to[d] < 0) return false;
    ++moved;
    direction *= to[d] > from[d] ? 1 : -1;
  }
  return moved == 2 && direction < 0;
}

std::optional<std::size_t> farthest(const Eigen::MatrixXd& points,
                                    const std::vector<std::size_t>& candidates,
                                    const std::vector<std::size_t>& seen) {
  std::optional<std::size_t> pick;
  double best = -1;
  for (std::size_t k : candidates) {
    double nearest = std::numeric_limits<double>::infinity();
    for (std::size_t c : seen)
      nearest = std::min(nearest, (points.row(static_cast<Eigen::Index>(k)) -
                                   points.row(static_cast<Eigen::Index>(c)))
                                      .squaredNorm());
    if (nearest > best) {
      best = nearest;
      pick = k;
    }
  }
  return pick;
}

std::vector<std::size_t> training_set(
    const std::vector<std::pair<std::size_t, std::optional<double>>>& observed, std::size_t cap) {
  std::vector<std::size_t> all(observed.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  if (all.size() > cap) {
    std::vector<std::size_t> by_value = all;
    auto key = [&](std::size_t i) {
      const auto& v = observed[i].second;
      return v ? *v : std::numeric_limits<double>::infinity();
    };
    const auto half = static_cast<std::ptrdiff_t>(cap / 2);
    std::partial_sort(by_value.begin(), by_value.begin() + half, by_value.end(),
                      [&](std::size_t a, std::size_t b) {
                        return key(a) < key(b) || (key(a) == key(b) && a < b);
                      });
    std::set<std::size_t> keep(by_value.begin(), by_value.begin() + half);
    for (std::size_t i = all.size(); i-- > 0 && keep.size() < cap;)
      keep.insert(i);
    all.assign(keep.begin(), keep.end());
  }
  std::vector<std::size_t> configs;
  for (std::size_t i : all)
    configs.push_back(observed[i].first);
  return configs;
}

double expected_improvement(double gain, double sigma) {
  const double z = gain / sigma;
  return gain * normal_cdf(z) + sigma * normal_pdf(z);
}

std::vector<double> choose_relevance(const Eigen::MatrixXd& base,
                                     const std::vector<std::size_t>& groups,
                                     const std::vector<std::size_t>& sample,
                                     const Eigen::VectorXd& y, const std::vector<double>& lengths,
                                     double noise, std::vector<double> start) {
  auto likelihood = [&](const std::vector<double>& w, double length) {
    Eigen::MatrixXd x(static_cast<Eigen::Index>(sample.size()), base.cols());
    for (std::size_t i = 0; i < sample.size(); ++i)
      for (Eigen::Index c = 0; c < base.cols(); ++c)
        x(static_cast<Eigen::Index>(i), c) =
            base(static_cast<Eigen::Index>(sample[i]), c) * w[groups[static_cast<std::size_t>(c)]];
    return GaussianProcess::likelihood(x, y, length, noise);
  };
  std::vector<double> w = std::move(start);
  std::size_t g = 0;
  double best = -std::numeric_limits<double>::infinity();
  for (std::size_t h = 0; h < lengths.size(); ++h)
    if (const double ml = likelihood(w, lengths[h]); ml > best) {
      best = ml;
      g = h;
    }
  for (int sweep = 0; sweep < 2; ++sweep) {
    bool moved = false;
    for (std::size_t d = 0; d < w.size(); ++d)
      for (double f : {0.5, 2.0}) {
        std::vector<double> t = w;
        t[d] = std::clamp(t[d] * f, relevance_bounds[0], relevance_bounds[1]);
        if (t[d] == w[d]) continue;
        if (const double ml = likelihood(t, lengths[g]); ml > best + 1e-9) {
          best = ml;
          w = std::move(t);
          moved = true;
        }
      }
    if (!moved) break;
  }
  return w;
}

}  // namespace tune::detail
