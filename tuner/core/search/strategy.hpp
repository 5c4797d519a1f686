// Search strategies: which config the search measures next. The search (autotuner.hpp) measures
// the incumbents first and tells the strategy what they gave, then asks it for one config at a
// time and tells it each outcome, an invalid config included (it cost time, and it teaches a
// model where not to look), until the strategy has nothing more to propose or a stop rule ends
// the search (max_evals, budget_s, patience). A strategy never proposes a config it was told of.
//
// Every strategy is deterministic given `[search] seed` and what it is told, so a run resumed
// from its log follows the same sequence: the search replays the log through the strategy
// (adopting a logged trial is telling its outcome without measuring) before it measures again.
// The log header records the strategy and the settings that shape its sequence, and a log of
// another strategy or seed is refused naming the difference.
//
// The strategies (docs/search.md "Strategies"):
//   grid     every config in enumeration order (the default)
//   random   every config once, in a random order
//   anneal   simulated annealing over the discrete space: a neighbour changes one param to the
//            next or a random value of its list; worse neighbours are accepted with a
//            probability that falls with the temperature; restarts from the best after
//            `restart_after` evaluations without improvement
//   bayes    Bayesian optimization: a Gaussian process (Matern 5/2, Eigen) over the params'
//            positions in their value lists, log times standardized, invalid configs as a
//            penalty above the worst; expected improvement picks the next config
//
// Example:
//   std::unique_ptr<Strategy> s = make_strategy(settings, SpaceIndex(configs));
//   s->tell(incumbent, 1.25);
//   while (std::optional<std::size_t> k = s->next()) s->tell(*k, measure(*k));
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
  /// Config `k`'s position in each param's value list.
  const std::vector<int>& coords(std::size_t k) const { return coords_.at(k); }
  /// The config at `coords`, or nullopt when the space (pruned) has none there.
  std::optional<std::size_t> find(const std::vector<int>& coords) const;

 private:
  std::vector<std::string> names_;
  std::vector<std::size_t> levels_;
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

class Strategy {
 public:
  virtual ~Strategy() = default;
  /// The next config to measure, one it was not told of; nullopt when it has nothing more to
  /// propose (grid and random: the space is exhausted).
  virtual std::optional<std::size_t> next() = 0;
  /// The outcome of config `k`, or nullopt for an invalid config; told once per config. The
  /// value is lower-is-better and logarithmic: log(median_ms), or -log(score) when maximizing,
  /// so that differences are relative.
  virtual void tell(std::size_t k, std::optional<double> value) = 0;
};

/// The strategy `settings.strategy` over `space` (which must outlive it). Throws tune::error for
/// an unknown strategy (the space reader refuses those first).
std::unique_ptr<Strategy> make_strategy(const SearchSettings& settings, const SpaceIndex& space);

}  // namespace tune
