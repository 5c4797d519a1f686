// The `bayes` strategy (strategy.hpp): Bayesian optimization over the params' value positions.
//
// Model: a Gaussian process (gaussian_process.hpp) with a Matern 5/2 kernel over each config's
// coordinates (bayes_model.hpp: an ordered param's position in its value list scaled to [0, 1],
// a categorical param one-hot), each param's coordinates scaled by its relevance, chosen by the
// marginal likelihood at 16, 32, 64, ... valid outcomes (ARD); the observations are the told
// values (log times) capped at their median (what is worse than the typical config matters only
// as "not here"), standardized, with invalid configs half a unit of log time above the cap, so
// the model learns where configs fail. The training set is every observation up to 256, then the
// best half and the most recent ones. The length scale is chosen by the marginal likelihood over
// a fixed grid every max(8, m / 8) outcomes; the noise is fixed (timings repeat to about 1%). The
// model follows the outcomes as they come (a row more, a row less), so no proposal fits it again
// from scratch.
//
// Choice: expected improvement. Two picks of every three are local: among the open one-param
// moves of the best config told, or, once those are all told, its two-param moves, trade-offs
// (one ordered param up, another down) and the others by turns. The third is
// global: over a pool of unmeasured configs, all of them in smaller spaces, else the one-param
// moves of the best five plus a random sample of `candidates`, drawn again every max(8, m / 8)
// outcomes. The first `initial` configs (the incumbents count) are a maximin design: each the
// farthest from those told and pending among 64 open configs drawn at random. Ties go to
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
// Cost (`cost_weight` w > 0; 1 when the space sets none and the search is compile-bound, else
// 0): each pick maximizes expected improvement over c^w, c the config's predicted compile
// seconds relative to the median told (cost_model.hpp), once the compile seconds told
// (tell_cost) are enough and spread; before that, and with w = 0, expected improvement alone.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <memory>
#include <numeric>
#include <set>
#include <utility>

#include <tuner/core/search/bayes_model.hpp>
#include <tuner/core/search/cost_model.hpp>
#include <tuner/core/search/gaussian_process.hpp>
#include <tuner/core/search/prior_guide.hpp>
#include <tuner/core/search/strategy.hpp>

namespace tune {

namespace {

constexpr double noise_variance = 1e-3;  // in standardized units
constexpr double invalid_penalty = 0.5;  // log-time units above the cap
// The values the model sees are capped at this quantile of the valid values told: what is worse
// than the typical config matters only as "not here", and its spread would otherwise rule the
// length scales and the variance.
constexpr double cap_quantile = 0.5;
constexpr std::size_t max_observations = 256;  // the training set's cap
constexpr std::size_t refit_every = 8;   // outcomes between choices of the length: max(8, m/8)
constexpr std::size_t redraw_every = 8;  // outcomes between draws of a sampled pool: max(8, m/8)
constexpr std::size_t best_neighbourhoods = 5;
// The start's configs (`initial`) are a maximin design over this many open configs drawn at
// random each (spread_open). On the complete tables (bench/search) it needed fewer evaluations
// than random configs on six of eight tables and about as many on the other two; 8, 32 and 256
// did no better, nor did distances that wrap around each value list (no pull to its ends).
constexpr std::size_t design_sample = 64;
// Two picks of every three are local: among the open one-param moves of the best config told,
// or when none is left, its two-param moves (local_region). On the complete tables
// (bench/search) this found the optimum in fewer evaluations than expected improvement over the
// whole pool, which spends most picks far from the best once the model is unsure everywhere,
// and than every other pick local; the third pick keeps the global search.
constexpr std::size_t local_cycle = 3;
constexpr std::size_t local_picks = 2;
constexpr double prior_weight = 0.75;  // the prior mean's share of its standardized value
// `cost_weight` when the space sets none and the search is compile-bound (StrategyContext).
constexpr double compile_bound_weight = 1.0;
// The relevance of each param (ARD): a factor on its coordinates, chosen by the marginal
// likelihood (bayes_model.hpp) when the valid outcomes reach 16, 32, 64, ... on at most
// `relevance_sample` of the training set.
constexpr std::size_t first_relevance = 16;
constexpr std::size_t relevance_sample = 128;

class BayesStrategy final : public Strategy {
 public:
  BayesStrategy(const SpaceIndex& space, const SearchSettings& s, const PriorValues& prior,
                const StrategyContext& context)
      : space_(space),
        ledger_(space.size()),
        rng_(s.seed),
        order_(space.size()),
        initial_(static_cast<std::size_t>(s.option("initial"))),
        exploration_(s.option("exploration")),
        candidates_(static_cast<std::size_t>(s.option("candidates"))),
        cost_weight_(s.options.contains("cost_weight") ? s.option("cost_weight")
                     : context.compile_bound           ? compile_bound_weight
                                                       : 0),
        base_(detail::encoding_of(space, groups_)),
        points_(base_),
        relevance_(space.dims(), 1.0),
        lengths_(detail::lengths_of(space)),
        gp_(std::make_unique<GaussianProcess>(points_, lengths_, noise_variance)),
        cost_(space),
        guide_(space, prior) {
    std::iota(order_.begin(), order_.end(), std::size_t{0});
  }

  std::vector<std::size_t> propose(std::size_t n) override {
    std::vector<std::size_t> out;
    while (out.size() < n && ledger_.open_count() > 0) {
      std::optional<std::size_t> k = guide_.probe(ledger_);
      if (!k && (ledger_.told_count() >= initial_ || !guide_.empty()) && valid_.size() >= 2)
        k = model_pick();
      if (!k) k = guide_.best_open(ledger_);
      if (k && !ledger_.pending(*k)) pend(*k);
      if (!k && randoms_ >= initial_ && ledger_.told_count() < initial_) k = start_move();
      if (!k) {
        k = spread_open();
        if (k) ++randoms_;
      }
      if (!k) break;
      out.push_back(*k);
    }
    return out;
  }

  void tell(std::size_t k, std::optional<double> value) override {
    ledger_.check(k, "tell");
    if (!ledger_.tell(k, value)) return;
    guide_.tell(k, value);
    gp_->remove_pending(k);
    observed_.emplace_back(k, value);
    if (value) valid_.push_back(*value);
    if (!fitted_) return;
    if (!gp_->add(k) || !follow_the_training_set()) {
      fitted_ = false;  // a factor lost its precision: fitted again from scratch
      return;
    }
    ++since_refit_;
    if (sampled_ && ++since_draw_ >= std::max(redraw_every, gp_->train().size() / 8))
      redraw_ = true;
  }

  void tell_cost(std::size_t k, double seconds) override {
    ledger_.check(k, "tell_cost");
    if (cost_weight_ > 0) cost_.add(k, seconds);
  }

  void withdraw(std::size_t k) override {
    ledger_.check(k, "withdraw");
    if (ledger_.withdraw(k)) gp_->remove_pending(k);
  }

 private:
  // With many pending, the start has drawn its `initial` configs before as many are told:
  // until they are, a one-param move of the best config told so far (at random among its open
  // ones), which is what a model of so few outcomes would pick too. nullopt when none is told or
  // it has no open move. One at a time this never happens: the next proposal after the
  // `initial` of the start comes with `initial` outcomes told.
  std::optional<std::size_t> start_move() {
    const std::vector<std::size_t> bests = best_configs();
    if (bests.empty()) return std::nullopt;
    std::vector<std::size_t> open;
    for (std::size_t nb : detail::moves(space_, bests.front(), 1))
      if (ledger_.open(nb)) open.push_back(nb);
    if (open.empty()) return std::nullopt;
    const std::size_t k = open[rng_.below(open.size())];
    pend(k);
    return k;
  }

  // The start's configs, a maximin design: of `design_sample` open configs drawn at random, the
  // one farthest (in the model's coordinates) from every config told or pending, so that the
  // first outcomes are spread over the space rather than drawn where a random sample clusters.
  // The first config, and one of a space whose sample finds no open config, is random_open's.
  std::optional<std::size_t> spread_open() {
    std::vector<std::size_t> seen;
    for (const auto& [k, v] : observed_)
      seen.push_back(k);
    seen.insert(seen.end(), gp_->pending().begin(), gp_->pending().end());
    if (seen.empty()) return random_open();
    std::vector<std::size_t> sample;
    for (std::size_t draw = 0; draw < design_sample; ++draw)
      if (const std::size_t k = rng_.below(space_.size()); ledger_.open(k)) sample.push_back(k);
    const std::optional<std::size_t> pick = detail::farthest(base_, sample, seen);
    if (!pick) return random_open();
    pend(*pick);
    return pick;
  }

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
    if (valid_.size() >= next_relevance_) {
      while (next_relevance_ <= valid_.size())
        next_relevance_ *= 2;
      choose_relevance();
    }
    const bool local_pick = picks_++ % local_cycle < local_picks;
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!fitted_ && !fit()) return std::nullopt;
      if (redraw_) draw_pool();
      if (since_refit_ >= std::max(refit_every, gp_->train().size() / 8)) {
        since_refit_ = 0;
        gp_->choose_length(standardized().y);
      }
      for (std::size_t k : gp_->pending())
        gp_->add_to_pool(k);  // pending from before the model, or a random pick
      add_neighbourhoods();
      const bool local = local_pick && local_region();
      if (means_for_ != std::pair(gp_->version(), observed_.size())) {
        const Standardized st = standardized();
        means_ = gp_->means(st.y);
        for (std::size_t j = 0; j < gp_->pool().size(); ++j)
          means_(static_cast<Eigen::Index>(j)) += prior_mean(gp_->pool()[j], st);
        best_y_ = st.best;
        means_for_ = {gp_->version(), observed_.size()};
      }
      const Eigen::VectorXd var = gp_->variances();
      const std::vector<std::size_t>& pool = gp_->pool();
      const std::vector<bool>* within = local ? &near_ : nullptr;
      std::optional<std::size_t> best;
      double best_ei = -1;
      for (std::size_t j = 0; j < pool.size(); ++j) {
        if (!ledger_.open(pool[j]) || (within != nullptr && !(*within)[pool[j]])) continue;
        const auto jj = static_cast<Eigen::Index>(j);
        const double sigma = std::sqrt(std::max(var(jj), 1e-12));
        const double gain = best_y_ - means_(jj) - exploration_;
        double ei = detail::expected_improvement(gain, sigma);
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

  // The local region of a local pick (two of every three): the open one-param moves of the
  // best config told, or when it has none left, its open two-param moves (one move beyond a
  // worse neighbour: what a local search cannot reach) of one kind, trade-offs
  // (detail::trade_off) and the others by turns, as the model ranks them no better than chance
  // (each half alone is worse); marked in near_ and put in the pool. False when it has none.
  bool local_region() {
    const std::vector<std::size_t> bests = best_configs();
    if (bests.empty()) return false;
    near_.assign(space_.size(), false);
    const std::size_t best = bests.front();
    // The open configs of `moves` (of a kind: trade-offs or not; nullopt: any) join the region.
    auto mark = [&](const std::vector<std::size_t>& moves, std::optional<bool> trade_offs) {
      bool any = false;
      for (std::size_t nb : moves)
        if (ledger_.open(nb) &&
            (!trade_offs || detail::trade_off(space_, best, nb) == *trade_offs)) {
          gp_->add_to_pool(nb);
          near_[nb] = any = true;
        }
      return any;
    };
    if (mark(detail::moves(space_, best, 1), std::nullopt)) return true;
    const std::vector<std::size_t> two = detail::moves(space_, best, 2);
    return mark(two, two_param_turns_++ % 2 == 0) || mark(two, std::nullopt);
  }

  // The neighbourhoods of the best configs join the pool as the best change: the search's local
  // region, scored beside the pool's global sample.
  void add_neighbourhoods() {
    if (!sampled_) return;
    for (std::size_t k : best_configs()) {
      if (!local_.insert(k).second) continue;
      for (std::size_t nb : detail::moves(space_, k, 1))
        if (ledger_.open(nb)) gp_->add_to_pool(nb);
    }
  }

  void pend(std::size_t k) {
    ledger_.propose(k);
    gp_->add_pending(k);
  }

  // The value the model sees of config `k`: its told value capped at cap_quantile of the valid
  // ones, and an invalid config a penalty above the cap.
  double model_value(std::size_t k, double cap) const {
    const std::optional<double>& v = ledger_.value(k);
    return v ? std::min(*v, cap) : cap + invalid_penalty;
  }
  double value_cap() {
    if (cap_for_ != valid_.size()) {
      std::vector<double> v = valid_;
      const auto at = static_cast<std::ptrdiff_t>(cap_quantile * static_cast<double>(v.size() - 1));
      std::nth_element(v.begin(), v.begin() + at, v.end());
      cap_ = v[static_cast<std::size_t>(at)];
      cap_for_ = valid_.size();
    }
    return cap_;
  }

  // The training set's values standardized (`mean`, `scale`), less the prior mean: what the
  // Gaussian process models; `best`: the lowest standardized value.
  struct Standardized {
    Eigen::VectorXd y;
    double best = 0;
    double mean = 0;
    double scale = 1;
  };
  Standardized standardized() {
    const std::vector<std::size_t>& train = gp_->train();
    Standardized st;
    st.y = standard(train, st.mean, st.scale);
    st.best = st.y.minCoeff();
    if (!guide_.empty()) {
      for (std::size_t i = 0; i < train.size(); ++i)
        st.y(static_cast<Eigen::Index>(i)) -= prior_mean(train[i], st);
    }
    return st;
  }
  // The model values of `configs`, standardized: less their `mean`, over their `scale`.
  Eigen::VectorXd standard(const std::vector<std::size_t>& configs, double& mean, double& scale) {
    const double cap = value_cap();
    Eigen::VectorXd y(static_cast<Eigen::Index>(configs.size()));
    for (std::size_t i = 0; i < configs.size(); ++i)
      y(static_cast<Eigen::Index>(i)) = model_value(configs[i], cap);
    mean = y.mean();
    const double var = (y.array() - mean).square().mean();
    scale = var > 1e-12 ? std::sqrt(var) : 1.0;
    return (y.array() - mean) / scale;
  }

  // The prior mean of config `k` in the standardized units of `st`: 0 (the outcomes' mean)
  // where the prior has no value.
  double prior_mean(std::size_t k, const Standardized& st) const {
    const std::optional<double> corrected = guide_.corrected(k);
    if (!corrected) return 0;
    return prior_weight * (*corrected - st.mean) / st.scale;
  }

  // Each param's relevance, by the marginal likelihood of the training set (at most
  // relevance_sample of it: the best half and the most recent). A change makes the model anew
  // on the scaled points.
  void choose_relevance() {
    std::vector<std::size_t> sample = training_set(relevance_sample);
    double mean = 0;
    double scale = 1;
    const Eigen::VectorXd y = standard(sample, mean, scale);
    std::vector<double> w =
        detail::choose_relevance(base_, groups_, sample, y, lengths_, noise_variance, relevance_);
    if (w == relevance_) return;
    relevance_ = std::move(w);
    for (Eigen::Index c = 0; c < base_.cols(); ++c)
      points_.col(c) = base_.col(c) * relevance_[groups_[static_cast<std::size_t>(c)]];
    gp_ = std::make_unique<GaussianProcess>(points_, lengths_, noise_variance);
    for (std::size_t k = 0; k < ledger_.size(); ++k)
      if (ledger_.pending(k)) gp_->add_pending(k);
    fitted_ = false;
  }

  // The training set of at most `cap` observations: every one while few, else the best half
  // and the most recent ones, in the order they were told.
  std::vector<std::size_t> training_set(std::size_t cap = max_observations) const {
    return detail::training_set(observed_, cap);
  }

  // Fits the model from scratch: the training set, the length scale, a pool.
  bool fit() {
    if (!gp_->fit(training_set())) return false;
    gp_->choose_length(standardized().y);
    since_refit_ = 0;
    fitted_ = true;
    draw_pool();
    return true;
  }

  // Over the cap, makes the model's training set the one of training_set() again: the
  // observations that left it are removed, one that came back (the best half moved) is added.
  bool follow_the_training_set() {
    if (gp_->train().size() <= max_observations) return true;
    const std::vector<std::size_t> keep = training_set();
    const std::set<std::size_t> kept(keep.begin(), keep.end());
    for (std::size_t i = gp_->train().size(); i-- > 0;)
      if (!kept.contains(gp_->train()[i])) gp_->remove(i);
    const std::set<std::size_t> have(gp_->train().begin(), gp_->train().end());
    for (std::size_t k : keep)
      if (!have.contains(k) && !gp_->add(k)) return false;
    return true;
  }

  // The pool, sorted: every untold config while there are at most `candidates`, else the
  // pending ones, the one-param moves of the best five (add_neighbourhoods) and a random sample
  // of `candidates` open configs.
  void draw_pool() {
    std::set<std::size_t> chosen(gp_->pending().begin(), gp_->pending().end());
    sampled_ = ledger_.size() - ledger_.told_count() > candidates_;
    local_.clear();
    if (!sampled_) {
      for (std::size_t k = 0; k < ledger_.size(); ++k)
        if (!ledger_.told(k)) chosen.insert(k);
    } else {
      std::size_t open = 0;
      for (std::size_t tries = 0; open < candidates_ && tries < 8 * candidates_; ++tries) {
        const std::size_t k = rng_.below(space_.size());
        if (ledger_.open(k) && chosen.insert(k).second) ++open;
      }
    }
    gp_->set_pool({chosen.begin(), chosen.end()});
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

  const SpaceIndex& space_;
  Ledger ledger_;
  Random rng_;
  std::vector<std::size_t> order_;  // the random draws: a lazy Fisher-Yates
  std::size_t drawn_ = 0;
  std::vector<std::pair<std::size_t, std::optional<double>>> observed_;  // in the order told
  std::vector<double> valid_;  // the valid values told, in order
  std::size_t initial_;
  double exploration_;
  std::size_t candidates_;
  double cost_weight_;                            // 0: expected improvement alone
  std::vector<std::size_t> groups_;               // per column of the coordinates: its param
  Eigen::MatrixXd base_;                          // the coordinates (encoding_of)
  Eigen::MatrixXd points_;                        // the coordinates times their param's relevance
  std::vector<double> relevance_;                 // per param
  std::size_t next_relevance_ = first_relevance;  // valid outcomes at the next choice
  std::vector<double> lengths_;
  std::unique_ptr<GaussianProcess> gp_;
  CostModel cost_;  // the compile seconds told, when cost_weight_ > 0
  bool fitted_ = false;
  std::size_t since_refit_ = 0;
  bool sampled_ = false;         // the pool is a sample of the open configs
  std::set<std::size_t> local_;  // the best configs whose neighbourhoods joined the pool
  std::size_t randoms_ = 0;      // configs the start proposed (spread_open)
  std::size_t picks_ = 0;
  std::vector<bool> near_;
  std::size_t two_param_turns_ = 0;  // local regions of two-param moves so far (local_region)
  bool redraw_ = false;              // draw the pool again before the next pick
  std::size_t since_draw_ = 0;
  double cap_ = 0;  // value_cap() for cap_for_ valid values
  std::size_t cap_for_ = SIZE_MAX;
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
                                              const PriorValues& prior,
                                              const StrategyContext& context) {
  return std::make_unique<BayesStrategy>(space, settings, prior, context);
}

}  // namespace tune
