// Search strategies: which configs the search measures next. The search (autotuner.hpp) measures
// the incumbents first and tells the strategy what they gave, then asks it for configs to
// measure, a batch at a time (`propose`), and tells it each outcome, an invalid config included
// (it cost time, and it teaches a model where not to look), until the strategy has nothing more
// to propose or a stop rule ends the search (max_evals, budget_s, patience). A strategy never
// proposes a config it was told of, nor one it proposed and was not told of yet (pending); a
// pending config the search will not measure is given back (`withdraw`) and may come again.
//
// Every strategy is deterministic given `[search] seed` and the sequence of calls it receives
// (propose(n), tell_cost(k, seconds), tell(k, value) and withdraw(k), in order, with their
// arguments; costs and values come from the log's trials), so a run resumed
// from its log follows the same sequence when the search replays those calls (adopting a logged
// trial is telling its outcome without measuring) before it measures again. The log header
// records the strategy and the settings that shape its sequence, and a log of another strategy
// or seed is refused naming the difference. docs/search.md "Batches and determinism" says
// precisely what a replay must repeat.
//
// The strategies (docs/search.md "Strategies"):
//   auto     the default: grid for a bucket of at most 256 configs, else bayes
//   grid     every config in enumeration order
//   random   every config once, in a random order
//   anneal   simulated annealing over the discrete space: a neighbour changes one param to the
//            next or a random value of its list; worse neighbours are accepted with a
//            probability that falls with the temperature; restarts from the best after
//            `restart_after` evaluations without improvement; a batch is several distinct
//            neighbours of the walk's current config
//   bayes    Bayesian optimization: a Gaussian process (Matern 5/2, Eigen) over the params'
//            positions in their value lists, log times standardized, invalid configs as a
//            penalty above the worst; a maximin design of `initial` configs to start, then
//            expected improvement picks the next config; a batch is
//            picked one config after the other, each believed to give its predicted mean (the
//            kriging believer), which shrinks the variance around it; with `cost_weight`,
//            expected improvement per predicted compile cost (a ridge regression of the told
//            compile seconds, in log, on the params' positions)
//
// Example:
//   std::unique_ptr<Strategy> s = make_strategy(settings, SpaceIndex(configs));
//   s->tell(incumbent, 1.25);
//   for (std::vector<std::size_t> batch = s->propose(8); !batch.empty(); batch = s->propose(8))
//     for (std::size_t k : batch) s->tell(k, measure(k));
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <tuner/core/base/config.hpp>
#include <tuner/core/space/search_settings.hpp>

namespace tune {

/// The space as strategies see it: each config as its position in each param's value list.
/// Values are ordered (ints ascending, strings in order of first appearance), so neighbours of
/// a position are its next values.
class SpaceIndex {
 public:
  explicit SpaceIndex(const std::vector<Config>& configs);

  std::size_t size() const noexcept { return coords_.size(); }
  std::size_t dims() const noexcept { return names_.size(); }
  /// The params, sorted by name (Config's order).
  const std::vector<std::string>& names() const noexcept { return names_; }
  /// How many values param `d` takes in the space.
  std::size_t levels(std::size_t d) const { return levels_.at(d); }
  /// Whether param `d`'s values are categories (any of them a string): their order of first
  /// appearance says nothing of how near two of them are.
  bool categorical(std::size_t d) const { return categorical_.at(d); }
  /// Config `k`'s position in each param's value list.
  const std::vector<int>& coords(std::size_t k) const { return coords_.at(k); }
  /// The config at `coords`, or nullopt when the space (pruned) has none there.
  std::optional<std::size_t> find(const std::vector<int>& coords) const;

 private:
  std::vector<std::string> names_;
  std::vector<std::size_t> levels_;
  std::vector<bool> categorical_;
  std::vector<std::vector<int>> coords_;
  std::unordered_map<std::string, std::size_t> by_coords_;
};

/// The random numbers of every strategy: std::mt19937_64, whose sequence the C++ standard fixes,
/// with draws defined here (the standard's distributions differ between libraries), so a seed
/// gives the same sequence on every machine.
class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}
  /// Uniform in [0, n); n > 0.
  std::size_t below(std::size_t n);
  /// Uniform in [0, 1).
  double unit();

 private:
  std::mt19937_64 engine_;
};

/// What every strategy keeps of the calls it received: which configs it was told of (their
/// values and the best), which are pending (proposed, neither told nor withdrawn since), and the
/// configs given back by `withdraw`, oldest first, for strategies that draw them again.
class Ledger {
 public:
  explicit Ledger(std::size_t n) : told_(n, false), pending_(n, false), value_(n) {}

  std::size_t size() const noexcept { return told_.size(); }
  bool told(std::size_t k) const { return told_[k]; }
  bool pending(std::size_t k) const { return pending_[k]; }
  /// Neither told nor pending: a config that may be proposed.
  bool open(std::size_t k) const { return !told_[k] && !pending_[k]; }
  /// The value told for `k` (nullopt: invalid, or not told).
  const std::optional<double>& value(std::size_t k) const { return value_[k]; }
  /// The told config with the lowest value (the earliest told on a tie), if any was valid.
  std::optional<std::size_t> best() const { return best_; }
  std::size_t told_count() const noexcept { return told_count_; }
  std::size_t pending_count() const noexcept { return pending_count_; }
  /// Configs that may be proposed: neither told nor pending.
  std::size_t open_count() const noexcept { return size() - told_count_ - pending_count_; }

  /// Records that `k` was proposed.
  void propose(std::size_t k);
  /// Records the outcome of `k`, which is no longer pending; false (and nothing changes) when
  /// `k` was told before.
  bool tell(std::size_t k, std::optional<double> v);
  /// Records that `k` will not be measured; false (and nothing changes) when it was not pending.
  bool withdraw(std::size_t k);
  /// The config withdrawn longest ago that is still open, taken off the list; nullopt when none.
  std::optional<std::size_t> take_withdrawn();

  /// Throws tune::error unless `k` is a config of the space.
  void check(std::size_t k, const char* call) const;

 private:
  std::vector<bool> told_;
  std::vector<bool> pending_;
  std::vector<std::optional<double>> value_;
  std::optional<std::size_t> best_;
  std::size_t told_count_ = 0;
  std::size_t pending_count_ = 0;
  std::vector<std::size_t> withdrawn_;  // oldest first, from `withdrawn_head_`
  std::size_t withdrawn_head_ = 0;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  /// Up to `n` configs to measure next, best first: configs it was not told of and that are not
  /// pending (proposed by an earlier call and not told yet). Fewer only when fewer such configs
  /// are left (none: the space is exhausted). Outcomes may then be told in any order; a pending
  /// config that will never be measured is given back with `withdraw`. propose(0) changes
  /// nothing, and propose(a) then propose(b) with no call between proposes what propose(a + b)
  /// would.
  virtual std::vector<std::size_t> propose(std::size_t n) = 0;
  /// The outcome of config `k`, or nullopt for an invalid config; told once per config (a second
  /// tell of it is ignored), pending or not (incumbents are told without being proposed). The
  /// value is lower-is-better and logarithmic: log(median_ms), or -log(score) when maximizing,
  /// so that differences are relative.
  virtual void tell(std::size_t k, std::optional<double> value) = 0;
  /// What config `k` cost to prepare: its compile seconds (> 0), told right before its outcome
  /// when the trial knows them. A compile-bound search's strategy (StrategyContext) learns its
  /// compile-cost model from it; otherwise it changes nothing.
  virtual void tell_cost(std::size_t /*k*/, double /*seconds*/) {}
  /// Config `k`, proposed and not told, will not be measured (the search stopped looking at it);
  /// it may be proposed again later. A config that is not pending is ignored.
  virtual void withdraw(std::size_t k) = 0;
  /// One config: propose(1)'s, or nullopt when the space is exhausted. For callers that measure
  /// and tell one at a time.
  std::optional<std::size_t> next();
};

/// What the search tells a strategy of the run beside its settings. None of it enters the log's
/// identity: like the pipeline's window, it may differ in a run that resumes the log, whose
/// logged trials are then adopted in the order they are proposed.
struct StrategyContext {
  /// The tune is compile-bound (docs/search.md "Compile cost"): few of the bucket's candidates
  /// are compiled yet, so each proposal's predicted compile seconds weigh: `bayes` divides
  /// expected improvement by the predicted cost (`cost_weight`, 1 unless the space sets it),
  /// `anneal` and `random` take the cheaper of equally good configs first, and a complete `grid`
  /// the dearest first (so that the longest compiles do not come last).
  bool compile_bound = false;
  /// The search visits every config (no budget, max_evals or patience can stop it).
  bool complete = false;
};

/// What a re-tune's prior says of each config of the space (docs/search.md "Re-tunes start from
/// what was measured"): the value it measured before, in the units of `Strategy::tell`, or
/// nullopt where it has none. Empty: no prior.
using PriorValues = std::vector<std::optional<double>>;

/// The configs of `prior` that have a value, best first (ties: the lower index).
std::vector<std::size_t> prior_ranking(const PriorValues& prior);

/// The strategy `settings.strategy` over `space` (which must outlive it), guided by `prior`
/// (empty, or one entry per config of the space), which each corrects by the outcomes (a shift
/// and an offset per param value) after probing the param values no outcome has shown: grid
/// and random propose the prior's configs first, the probes and then the best as corrected;
/// anneal proposes the probes, walks from the best told and steers its walk and its jumps by
/// the corrected prior; bayes proposes the probes and takes the corrected prior, down-weighted,
/// as its model's mean. Throws tune::error for an unknown strategy (the space reader refuses
/// those first) or a prior of another size.
std::unique_ptr<Strategy> make_strategy(const SearchSettings& settings, const SpaceIndex& space,
                                        const PriorValues& prior = {},
                                        const StrategyContext& context = {});

}  // namespace tune
