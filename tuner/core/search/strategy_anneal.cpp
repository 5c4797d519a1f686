// The `anneal` strategy (strategy.hpp): simulated annealing over the params' value lists.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include <tuner/core/search/cost_model.hpp>
#include <tuner/core/search/permutation.hpp>
#include <tuner/core/search/prior_guide.hpp>
#include <tuner/core/search/strategy.hpp>

namespace tune {

namespace {

using detail::draw_open;
using detail::Permutation;

/// Simulated annealing on the grid of value positions. The walk moves between configs; a move
/// to a config it was told of costs nothing (its value is known), so the walk goes on until it
/// reaches one that is open, which it proposes. A batch is several such neighbours of the walk's
/// current config, distinct because a pending config is never proposed again; each outcome,
/// whenever it comes, is a Metropolis step from the walk's current config at that time (a jump's
/// too, unless the walk is waiting for it: a batch proposed before any outcome is all jumps,
/// and the first to come back is where the walk starts). With a
/// prior (prior_guide.hpp) the walk is steered by it: of up to four open neighbours found, the
/// one with the best corrected prior value is proposed, and a jump goes to the prior's best open
/// config as corrected while it has one. Compile-bound, of two open neighbours found (equally
/// good: both are the walk's random moves) the cheaper predicted compile is proposed; with a
/// prior, the cost breaks the ties of the corrected prior.
class AnnealStrategy final : public Strategy {
 public:
  AnnealStrategy(const SpaceIndex& space, const SearchSettings& s, const PriorValues& prior,
                 const StrategyContext& context)
      : space_(space),
        ledger_(space.size()),
        how_(space.size(), How::told),
        rng_(s.seed),
        restarts_(space.size(), s.seed ^ 0x9e3779b97f4a7c15ULL),
        temperature_(s.option("temperature")),
        cooling_(s.option("cooling")),
        restart_after_(static_cast<std::size_t>(s.option("restart_after"))),
        guide_(space, prior),
        start_(guide_.prior_best()),
        cost_(space),
        compile_bound_(context.compile_bound) {}

  std::vector<std::size_t> propose(std::size_t n) override {
    std::vector<std::size_t> out;
    while (out.size() < n && ledger_.open_count() > 0) {
      const std::optional<std::size_t> k = step();
      if (!k) break;
      ledger_.propose(*k);
      out.push_back(*k);
    }
    return out;
  }

  void tell(std::size_t k, std::optional<double> v) override {
    ledger_.check(k, "tell");
    if (!ledger_.tell(k, v)) return;
    guide_.tell(k, v);
    const How how = how_[k];
    how_[k] = How::told;
    const bool improved = v && best_seen_ && *v < *best_seen_ - 1e-12;
    if (v && (!best_seen_ || *v < *best_seen_)) best_seen_ = v;
    since_improvement_ = improved ? 0 : since_improvement_ + 1;
    if (how == How::neighbour) {
      consider(k);
      temperature_ *= cooling_;
    } else if (how == How::jump && v && !current_) {
      current_ = k;  // the walk restarts from where it jumped
    } else if (how == How::jump && v) {
      // The walk stands somewhere already: another jump of the batch came first (a batch
      // proposed before any outcome is all jumps), or a neighbour pending from before the jump.
      // Where this one landed is a Metropolis step like a neighbour's, not a restart.
      consider(k);
    } else if (!current_ && v) {
      current_ = k;
    }
    if (since_improvement_ >= restart_after_) {
      current_ = ledger_.best();  // restart from the best, warmer
      temperature_ /= std::pow(cooling_, static_cast<double>(restart_after_) / 2);
      since_improvement_ = 0;
    }
  }

  void tell_cost(std::size_t k, double seconds) override {
    ledger_.check(k, "tell_cost");
    if (compile_bound_) cost_.add(k, seconds);
  }

  void withdraw(std::size_t k) override {
    ledger_.check(k, "withdraw");
    if (ledger_.withdraw(k)) how_[k] = How::told;
  }

 private:
  /// How a pending config was proposed (`told` for any other).
  enum class How : unsigned char { told, neighbour, jump };

  // The next open config: the walk's free moves (to configs already told) are bounded; then a
  // jump to an open config (the corrected prior's best, else at random).
  std::optional<std::size_t> step() {
    if (start_) {
      // With a prior, its probes first (prior_guide.hpp), outside the walk; then the walk starts
      // from the best told when the prior's best was measured (it, or one better), else from
      // the prior's best, measured first.
      if (std::optional<std::size_t> k = guide_.probe(ledger_)) return k;
      const std::size_t k = *std::exchange(start_, std::nullopt);
      if (ledger_.told(k) && ledger_.value(k)) {
        current_ = ledger_.best();
      } else if (ledger_.open(k)) {
        how_[k] = How::jump;
        current_.reset();
        return k;
      }
    }
    if (!current_) current_ = ledger_.best();
    // Open neighbours to choose among: with a prior, up to four (the best as corrected wins);
    // compile-bound, two (the cheaper wins); else the first.
    const bool costs = compile_bound_ && cost_.ready();
    const std::size_t wanted = !guide_.empty() ? 4 : costs ? 2 : 1;
    std::vector<std::size_t> open;
    for (int step = 0; step < 1000 && current_; ++step) {
      const std::optional<std::size_t> k = neighbour(*current_);
      if (!k) break;
      if (ledger_.open(*k)) {
        if (std::find(open.begin(), open.end(), *k) == open.end()) open.push_back(*k);
        if (open.size() == wanted) break;
        continue;
      }
      if (ledger_.told(*k)) consider(*k);  // a pending neighbour is no place to stand yet
    }
    if (!open.empty()) {
      auto key = [&](std::size_t k) {
        const std::optional<double> v = guide_.corrected(k);
        return std::pair(v ? *v : std::numeric_limits<double>::infinity(),
                         costs ? cost_.relative(k) : 1.0);
      };
      const std::size_t k = *std::min_element(
          open.begin(), open.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
      how_[k] = How::neighbour;
      return k;
    }
    std::optional<std::size_t> k = guide_.best_open(ledger_);
    if (!k) k = draw_open(ledger_, restarts_);
    if (k) {
      how_[*k] = How::jump;
      current_.reset();
    }
    return k;
  }

  // A neighbour of `k`: one param moved to the next value (most often) or to any other value.
  std::optional<std::size_t> neighbour(std::size_t k) {
    for (int attempt = 0; attempt < 32; ++attempt) {
      std::vector<int> c = space_.coords(k);
      const std::size_t d = rng_.below(space_.dims());
      const int levels = static_cast<int>(space_.levels(d));
      if (levels < 2 || c[d] < 0) continue;
      if (rng_.unit() < 0.75) {
        c[d] += rng_.below(2) == 0 ? -1 : 1;
        if (c[d] < 0 || c[d] >= levels) continue;
      } else {
        const int other = static_cast<int>(rng_.below(static_cast<std::size_t>(levels - 1)));
        c[d] = other >= c[d] ? other + 1 : other;
      }
      if (std::optional<std::size_t> found = space_.find(c)) return found;
    }
    return std::nullopt;
  }

  // The Metropolis step from the current config to `k`, whose value is known.
  void consider(std::size_t k) {
    const std::optional<double>& v = ledger_.value(k);
    if (!v) return;  // invalid: never a place to stand
    const std::optional<double>& here = current_ ? ledger_.value(*current_) : std::nullopt;
    if (!here || *v <= *here || rng_.unit() < std::exp(-(*v - *here) / temperature_)) current_ = k;
  }

  const SpaceIndex& space_;
  Ledger ledger_;
  std::vector<How> how_;
  Random rng_;
  Permutation restarts_;
  double temperature_;
  double cooling_;
  std::size_t restart_after_;
  std::optional<std::size_t> current_;
  PriorGuide guide_;                  // the prior: probes, neighbours to prefer, jumps
  std::optional<std::size_t> start_;  // the prior's best, until the walk starts from it
  CostModel cost_;                    // the compile seconds told, when compile-bound
  bool compile_bound_;
  std::optional<double> best_seen_;
  std::size_t since_improvement_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_anneal_strategy(const SpaceIndex& space,
                                               const SearchSettings& settings,
                                               const PriorValues& prior,
                                               const StrategyContext& context) {
  return std::make_unique<AnnealStrategy>(space, settings, prior, context);
}

}  // namespace tune
