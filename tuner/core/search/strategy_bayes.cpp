// The `bayes` strategy (strategy.hpp): Bayesian optimization over the params' value positions.
//
// Model: a Gaussian process (gaussian_process.hpp) with a Matern 5/2 kernel over each config's
// positions in its params' value lists, scaled to [0, 1] per param; the observations are the
// told values (log times), standardized, with invalid configs as a penalty one unit of log time
// (2.7x) above the worst valid one, so the model learns where configs fail. The training set is
// every observation up to 400, then the best 200 and the most recent ones. The length scale is
// chosen by the marginal likelihood over a fixed grid every 8 outcomes; the noise is fixed
// (timings repeat to about 1%). The model follows the outcomes as they come (a row more, a row
// less), so no proposal fits it again from scratch.
//
// Choice: expected improvement over a pool of unmeasured configs: all of them in smaller spaces,
// else the neighbours of the best five plus a random sample (`candidates`), drawn again every
// max(8, m / 8) outcomes (m: the training set), and the neighbours of each config that joins the
// best five. The first `initial` configs (the incumbents count) are drawn at random. Ties go to
// the lower config index, so the sequence depends only on the seed and the calls received.
//
// Batches: the kriging believer. Each pick of a batch is believed to give the model's predicted
// mean; conditioning on that leaves the predicted means where they are and shrinks the variance
// around the pick, so the next pick's expected improvement moves away from the pending configs
// (the outcomes told later replace the beliefs). The configs pending from earlier calls count
// alike.
//
// A prior (a re-tune's earlier log, PriorValues): the model's mean is the prior's value of each
// config as corrected by the outcomes (prior_guide.hpp: a common shift and an offset per param
// value), standardized with the outcomes and down-weighted (times prior_weight); the Gaussian
// process models what the outcomes differ from it. The prior's probes come first (its best
// configs with a param value no outcome has shown, which the correction needs); then the model
// picks as soon as two outcomes are valid, before that the prior's best open config as corrected
// is proposed. No config is drawn at random while the prior has an open config.
//
// Cost (`cost_weight` w > 0): each pick maximizes expected improvement over c^w, c the config's
// predicted compile seconds relative to the median told (cost_model.hpp), once the compile
// seconds told (tell_cost) are enough and spread; before that, and with w = 0, expected
// improvement alone.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <memory>
#include <numeric>
#include <set>

#include <tuner/core/search/cost_model.hpp>
#include <tuner/core/search/gaussian_process.hpp>
#include <tuner/core/search/prior_guide.hpp>
#include <tuner/core/search/strategy.hpp>

namespace tune {

namespace {

constexpr double noise_variance = 1e-3;        // in standardized units
constexpr double invalid_penalty = 1.0;        // log-time units above the worst valid config
constexpr std::size_t max_observations = 400;  // the training set's cap
constexpr std::size_t refit_every = 8;         // outcomes between choices of the length scale
constexpr std::size_t redraw_every = 8;  // outcomes between draws of a sampled pool: max(8, m/8)
constexpr std::size_t best_neighbourhoods = 5;
constexpr double length_grid[] = {0.05, 0.1, 0.2, 0.35, 0.6, 1.0};
constexpr double prior_weight = 0.75;  // the prior mean's share of its standardized value

double normal_pdf(double z) {
  return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
}

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

// Each config's positions scaled to [0, 1] per param (0.5 where it lacks the param).
Eigen::MatrixXd points_of(const SpaceIndex& space) {
  Eigen::MatrixXd points(static_cast<Eigen::Index>(space.size()),
                         static_cast<Eigen::Index>(space.dims()));
  for (std::size_t k = 0; k < space.size(); ++k)
    for (std::size_t d = 0; d < space.dims(); ++d) {
      const int c = space.coords(k)[d];
      const std::size_t levels = space.levels(d);
      points(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(d)) =
          c < 0 || levels < 2 ? 0.5 : static_cast<double>(c) / static_cast<double>(levels - 1);
    }
  return points;
}

// The grid of length scales, in units of the diagonal of the unit cube.
std::vector<double> lengths_of(const SpaceIndex& space) {
  const double scale = std::sqrt(std::max<double>(1.0, static_cast<double>(space.dims())));
  std::vector<double> out;
  for (double g : length_grid)
    out.push_back(g * scale);
  return out;
}

class BayesStrategy final : public Strategy {
 public:
  BayesStrategy(const SpaceIndex& space, const SearchSettings& s, const PriorValues& prior)
      : space_(space),
        ledger_(space.size()),
        rng_(s.seed),
        order_(space.size()),
        initial_(static_cast<std::size_t>(s.option("initial"))),
        exploration_(s.option("exploration")),
        candidates_(static_cast<std::size_t>(s.option("candidates"))),
        cost_weight_(s.option("cost_weight")),
        points_(points_of(space)),
        gp_(points_, lengths_of(space), noise_variance),
        cost_(points_),
        scored_(space.size(), false),
        guide_(space, prior) {
    std::iota(order_.begin(), order_.end(), std::size_t{0});
  }

  std::vector<std::size_t> propose(std::size_t n) override {
    std::vector<std::size_t> out;
    while (out.size() < n && ledger_.open_count() > 0) {
      std::optional<std::size_t> k = guide_.probe(ledger_);
      if (!k && (ledger_.told_count() >= initial_ || !guide_.empty()) && valid_ >= 2)
        k = model_pick();
      if (!k) k = guide_.best_open(ledger_);
      if (k && !ledger_.pending(*k)) pend(*k);
      if (!k) k = random_open();
      if (!k) break;
      out.push_back(*k);
    }
    return out;
  }

  void tell(std::size_t k, std::optional<double> value) override {
    ledger_.check(k, "tell");
    if (!ledger_.tell(k, value)) return;
    guide_.tell(k, value);
    gp_.remove_pending(k);
    observed_.emplace_back(k, value);
    if (value) {
      ++valid_;
      worst_ = std::max(worst_, *value);
    }
    if (!fitted_) return;
    if (!gp_.add(k) || !follow_the_training_set()) {
      fitted_ = false;  // a factor lost its precision: fitted again from scratch
      return;
    }
    ++since_refit_;
    if (sampled_ && ++since_draw_ >= std::max(redraw_every, gp_.train().size() / 8)) redraw_ = true;
  }

  void tell_cost(std::size_t k, double seconds) override {
    ledger_.check(k, "tell_cost");
    if (cost_weight_ > 0) cost_.add(k, seconds);
  }

  void withdraw(std::size_t k) override {
    ledger_.check(k, "withdraw");
    if (ledger_.withdraw(k)) gp_.remove_pending(k);
  }

 private:
  // An open config at random (a lazy Fisher-Yates over every config, then what was withdrawn).
  std::optional<std::size_t> random_open() {
    std::optional<std::size_t> pick;
    while (!pick && drawn_ < order_.size()) {
      const std::size_t j = drawn_ + rng_.below(order_.size() - drawn_);
      std::swap(order_[drawn_], order_[j]);
      const std::size_t k = order_[drawn_++];
      if (ledger_.open(k)) pick = k;
    }
    if (!pick) pick = ledger_.take_withdrawn();
    if (pick) pend(*pick);
    return pick;
  }

  // The pool config of highest expected improvement, pending from now; nullopt when the model
  // cannot be fitted (a random config is proposed instead).
  std::optional<std::size_t> model_pick() {
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!fitted_ && !fit()) return std::nullopt;
      if (redraw_) draw_pool();
      if (since_refit_ >= refit_every) {
        since_refit_ = 0;
        gp_.choose_length(standardized().y);
      }
      for (std::size_t k : gp_.pending())
        gp_.add_to_pool(k);  // pending from before the model, or a random pick
      const std::vector<std::size_t> scored = candidates();
      if (means_for_ != std::pair(gp_.version(), observed_.size())) {
        const Standardized st = standardized();
        means_ = gp_.means(st.y);
        for (std::size_t j = 0; j < gp_.pool().size(); ++j)
          means_(static_cast<Eigen::Index>(j)) += prior_mean(gp_.pool()[j], st);
        best_y_ = st.best;
        means_for_ = {gp_.version(), observed_.size()};
      }
      const Eigen::VectorXd var = gp_.variances();
      const std::vector<std::size_t>& pool = gp_.pool();
      std::optional<std::size_t> best;
      double best_ei = -1;
      for (std::size_t j : scored) {
        const auto jj = static_cast<Eigen::Index>(j);
        const double sigma = std::sqrt(std::max(var(jj), 1e-12));
        const double gain = best_y_ - means_(jj) - exploration_;
        const double z = gain / sigma;
        double ei = gain * normal_cdf(z) + sigma * normal_pdf(z);
        if (cost_weight_ > 0 && cost_.ready())
          ei /= std::pow(cost_.relative(pool[j]), cost_weight_);
        if (ei > best_ei || (ei == best_ei && pool[j] < pool[*best])) {
          best_ei = ei;
          best = j;
        }
      }
      if (best) {
        const std::size_t k = pool[*best];
        pend(k);
        return k;
      }
      redraw_ = true;  // every config of the pool is told or pending: draw a new pool
    }
    return std::nullopt;
  }

  // The pool columns scored for the next pick: every open config of the pool while there are at
  // most `candidates` open configs, else the open neighbours of the best five and a random
  // sample of the pool's open configs, `candidates` in all.
  std::vector<std::size_t> candidates() {
    std::vector<std::size_t> out;
    if (ledger_.open_count() <= candidates_) {
      for (std::size_t j = 0; j < gp_.pool().size(); ++j)
        if (ledger_.open(gp_.pool()[j])) out.push_back(j);
      return out;
    }
    std::vector<std::size_t> chosen;
    auto add = [&](std::size_t k) {
      if (!ledger_.open(k) || gp_.column(k) < 0 || scored_[k]) return;
      scored_[k] = true;
      chosen.push_back(k);
    };
    for (std::size_t k : best_configs())
      for (std::size_t nb : neighbours(k)) {
        if (ledger_.open(nb)) gp_.add_to_pool(nb);
        add(nb);
      }
    for (std::size_t tries = 0; chosen.size() < candidates_ && tries < 8 * candidates_; ++tries)
      add(rng_.below(space_.size()));
    for (std::size_t k : chosen) {
      scored_[k] = false;
      out.push_back(static_cast<std::size_t>(gp_.column(k)));
    }
    return out;
  }

  void pend(std::size_t k) {
    ledger_.propose(k);
    gp_.add_pending(k);
  }

  // The training set's values standardized (`mean`, `scale`), less the prior mean: what the
  // Gaussian process models; `best`: the lowest standardized value.
  struct Standardized {
    Eigen::VectorXd y;
    double best = 0;
    double mean = 0;
    double scale = 1;
  };
  Standardized standardized() const {
    const std::vector<std::size_t>& train = gp_.train();
    Standardized st;
    st.y.resize(static_cast<Eigen::Index>(train.size()));
    for (std::size_t i = 0; i < train.size(); ++i) {
      const std::optional<double>& v = ledger_.value(train[i]);
      st.y(static_cast<Eigen::Index>(i)) = v ? *v : worst_ + invalid_penalty;
    }
    st.mean = st.y.mean();
    const double var = (st.y.array() - st.mean).square().mean();
    st.scale = var > 1e-12 ? std::sqrt(var) : 1.0;
    st.y = (st.y.array() - st.mean) / st.scale;
    st.best = st.y.minCoeff();
    if (!guide_.empty()) {
      for (std::size_t i = 0; i < train.size(); ++i)
        st.y(static_cast<Eigen::Index>(i)) -= prior_mean(train[i], st);
    }
    return st;
  }

  // The prior mean of config `k` in the standardized units of `st`: 0 (the outcomes' mean)
  // where the prior has no value.
  double prior_mean(std::size_t k, const Standardized& st) const {
    const std::optional<double> corrected = guide_.corrected(k);
    if (!corrected) return 0;
    return prior_weight * (*corrected - st.mean) / st.scale;
  }

  // The training set: every observation while few, else the best half of the cap and the most
  // recent ones, in the order they were told.
  std::vector<std::size_t> training_set() const {
    std::vector<std::size_t> all(observed_.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    if (all.size() > max_observations) {
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
      all.assign(keep.begin(), keep.end());
    }
    std::vector<std::size_t> configs;
    for (std::size_t i : all)
      configs.push_back(observed_[i].first);
    return configs;
  }

  // Fits the model from scratch: the training set, the length scale, a pool.
  bool fit() {
    if (!gp_.fit(training_set())) return false;
    gp_.choose_length(standardized().y);
    since_refit_ = 0;
    fitted_ = true;
    draw_pool();
    return true;
  }

  // Over the cap, makes the model's training set the one of training_set() again: the
  // observations that left it are removed, one that came back (the best half moved) is added.
  bool follow_the_training_set() {
    if (gp_.train().size() <= max_observations) return true;
    const std::vector<std::size_t> keep = training_set();
    const std::set<std::size_t> kept(keep.begin(), keep.end());
    for (std::size_t i = gp_.train().size(); i-- > 0;)
      if (!kept.contains(gp_.train()[i])) gp_.remove(i);
    const std::set<std::size_t> have(gp_.train().begin(), gp_.train().end());
    for (std::size_t k : keep)
      if (!have.contains(k) && !gp_.add(k)) return false;
    return true;
  }

  // The pool, sorted: every untold config while there are at most twice `candidates`, else the
  // pending ones, the open neighbours of the best five and a random sample of open configs,
  // twice `candidates` of them.
  void draw_pool() {
    const std::size_t size = 2 * candidates_;
    std::set<std::size_t> chosen(gp_.pending().begin(), gp_.pending().end());
    sampled_ = ledger_.size() - ledger_.told_count() > size;
    if (!sampled_) {
      for (std::size_t k = 0; k < ledger_.size(); ++k)
        if (!ledger_.told(k)) chosen.insert(k);
    } else {
      std::size_t open = 0;
      auto add = [&](std::size_t k) {
        if (ledger_.open(k) && chosen.insert(k).second) ++open;
      };
      for (std::size_t k : best_configs())
        for (std::size_t nb : neighbours(k))
          add(nb);
      for (std::size_t tries = 0; open < size && tries < 8 * size; ++tries)
        add(rng_.below(space_.size()));
    }
    gp_.set_pool({chosen.begin(), chosen.end()});
    redraw_ = false;
    since_draw_ = 0;
  }

  // The best `best_neighbourhoods` valid configs told, best first (ties: the lower config).
  std::vector<std::size_t> best_configs() const {
    std::vector<std::pair<double, std::size_t>> valid;
    for (const auto& [k, v] : observed_)
      if (v) valid.emplace_back(*v, k);
    const std::size_t n = std::min(best_neighbourhoods, valid.size());
    std::partial_sort(valid.begin(), valid.begin() + static_cast<std::ptrdiff_t>(n), valid.end());
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < n; ++i)
      out.push_back(valid[i].second);
    return out;
  }

  // The configs one position away from `k` in one param.
  std::vector<std::size_t> neighbours(std::size_t k) const {
    std::vector<std::size_t> out;
    for (std::size_t d = 0; d < space_.dims(); ++d)
      for (int step : {-1, 1}) {
        std::vector<int> c = space_.coords(k);
        c[d] += step;
        if (std::optional<std::size_t> nb = space_.find(c)) out.push_back(*nb);
      }
    return out;
  }

  const SpaceIndex& space_;
  Ledger ledger_;
  Random rng_;
  std::vector<std::size_t> order_;  // the random draws: a lazy Fisher-Yates
  std::size_t drawn_ = 0;
  std::vector<std::pair<std::size_t, std::optional<double>>> observed_;  // in the order told
  std::size_t valid_ = 0;
  double worst_ = -std::numeric_limits<double>::infinity();
  std::size_t initial_;
  double exploration_;
  std::size_t candidates_;
  double cost_weight_;  // 0: expected improvement alone
  Eigen::MatrixXd points_;
  GaussianProcess gp_;
  CostModel cost_;  // the compile seconds told, when cost_weight_ > 0
  bool fitted_ = false;
  std::size_t since_refit_ = 0;
  bool sampled_ = false;      // the pool is a sample of the open configs
  std::vector<bool> scored_;  // per config: chosen by candidates() (false between calls)
  bool redraw_ = false;       // draw the pool again before the next pick
  std::size_t since_draw_ = 0;
  // The pool's predicted means and the best standardized value, for means_for_: the model's
  // version and the outcomes told.
  Eigen::VectorXd means_;
  double best_y_ = 0;
  std::pair<std::size_t, std::size_t> means_for_{SIZE_MAX, 0};
  PriorGuide guide_;  // the prior, corrected by the outcomes (empty: none)
};

}  // namespace

std::unique_ptr<Strategy> make_bayes_strategy(const SpaceIndex& space,
                                              const SearchSettings& settings,
                                              const PriorValues& prior) {
  return std::make_unique<BayesStrategy>(space, settings, prior);
}

}  // namespace tune
