#include <tuner/core/search/strategy.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/result.hpp>

namespace tune {

// ---------------------------------------------------------------------------------------------
// The space as positions

namespace {

std::string coords_key(const std::vector<int>& c) {
  std::string key;
  for (int v : c) {
    key += std::to_string(v);
    key += ',';
  }
  return key;
}

}  // namespace

SpaceIndex::SpaceIndex(const std::vector<Config>& configs) {
  // Every param any config names, and its values in order.
  std::map<std::string, std::vector<ParamValue>> values;
  for (const Config& c : configs)
    for (const auto& [name, v] : c.params()) {
      std::vector<ParamValue>& list = values[name];
      if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
    }
  for (auto& [name, list] : values) {
    if (std::all_of(list.begin(), list.end(), [](const ParamValue& v) { return v.is_int(); }))
      std::sort(list.begin(), list.end());
    names_.push_back(name);
    levels_.push_back(list.size());
  }
  coords_.reserve(configs.size());
  for (std::size_t k = 0; k < configs.size(); ++k) {
    std::vector<int> c;
    std::size_t d = 0;
    for (const auto& [name, list] : values) {
      const ParamValue* v = configs[k].find(name);
      c.push_back(v == nullptr
                      ? -1
                      : static_cast<int>(std::find(list.begin(), list.end(), *v) - list.begin()));
      ++d;
    }
    by_coords_.emplace(coords_key(c), k);
    coords_.push_back(std::move(c));
  }
}

std::optional<std::size_t> SpaceIndex::find(const std::vector<int>& coords) const {
  auto it = by_coords_.find(coords_key(coords));
  if (it == by_coords_.end()) return std::nullopt;
  return it->second;
}

// ---------------------------------------------------------------------------------------------
// Random numbers

std::size_t Random::below(std::size_t n) {
  // Rejection sampling: unbiased, and defined here rather than by the library.
  const std::uint64_t range = static_cast<std::uint64_t>(n);
  const std::uint64_t limit =
      std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % range;
  std::uint64_t x = engine_();
  while (x >= limit)
    x = engine_();
  return static_cast<std::size_t>(x % range);
}

double Random::unit() {
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

// ---------------------------------------------------------------------------------------------
// grid and random

namespace {

/// What every strategy keeps: which configs it was told of, their values, and the best.
class Memory {
 public:
  explicit Memory(std::size_t n) : told_(n, false), value_(n, std::nullopt) {}
  bool told(std::size_t k) const { return told_[k]; }
  const std::optional<double>& value(std::size_t k) const { return value_[k]; }
  void remember(std::size_t k, std::optional<double> v) {
    if (!told_[k]) ++count_;
    told_[k] = true;
    value_[k] = v;
    if (v && (!best_ || *v < *value_[*best_])) best_ = k;
  }
  std::optional<std::size_t> best() const { return best_; }
  std::size_t count() const { return count_; }
  std::size_t size() const { return told_.size(); }

 private:
  std::vector<bool> told_;
  std::vector<std::optional<double>> value_;
  std::optional<std::size_t> best_;
  std::size_t count_ = 0;
};

class GridStrategy final : public Strategy {
 public:
  explicit GridStrategy(std::size_t n) : memory_(n) {}
  std::optional<std::size_t> next() override {
    while (cursor_ < memory_.size() && memory_.told(cursor_))
      ++cursor_;
    if (cursor_ == memory_.size()) return std::nullopt;
    return cursor_;
  }
  void tell(std::size_t k, std::optional<double> v) override { memory_.remember(k, v); }

 private:
  Memory memory_;
  std::size_t cursor_ = 0;
};

/// A random permutation of [0, n), drawn lazily (Fisher-Yates from the front).
class Permutation {
 public:
  Permutation(std::size_t n, std::uint64_t seed) : order_(n), rng_(seed) {
    for (std::size_t i = 0; i < n; ++i)
      order_[i] = i;
  }
  /// The next element, or nullopt at the end.
  std::optional<std::size_t> next() {
    if (drawn_ == order_.size()) return std::nullopt;
    const std::size_t j = drawn_ + rng_.below(order_.size() - drawn_);
    std::swap(order_[drawn_], order_[j]);
    return order_[drawn_++];
  }

 private:
  std::vector<std::size_t> order_;
  std::size_t drawn_ = 0;
  Random rng_;
};

class RandomStrategy final : public Strategy {
 public:
  RandomStrategy(std::size_t n, std::uint64_t seed) : memory_(n), order_(n, seed) {}
  std::optional<std::size_t> next() override {
    while (!pending_ || memory_.told(*pending_)) {
      pending_ = order_.next();
      if (!pending_) return std::nullopt;
    }
    return pending_;
  }
  void tell(std::size_t k, std::optional<double> v) override { memory_.remember(k, v); }

 private:
  Memory memory_;
  Permutation order_;
  std::optional<std::size_t> pending_;
};

// ---------------------------------------------------------------------------------------------
// anneal

/// Simulated annealing on the grid of value positions. The walk moves between configs; a move
/// to a config it was told of costs nothing (its value is known), so the walk goes on until it
/// proposes one it was not told of, which the search then measures.
class AnnealStrategy final : public Strategy {
 public:
  AnnealStrategy(const SpaceIndex& space, const SearchSettings& s)
      : space_(space),
        memory_(space.size()),
        rng_(s.seed),
        restarts_(space.size(), s.seed ^ 0x9e3779b97f4a7c15ULL),
        temperature_(s.option("temperature")),
        cooling_(s.option("cooling")),
        restart_after_(static_cast<std::size_t>(s.option("restart_after"))) {}

  std::optional<std::size_t> next() override {
    if (memory_.count() == memory_.size()) return std::nullopt;
    if (!current_) current_ = memory_.best();
    // Free moves (to configs already told) are bounded; then a jump to an untold config.
    for (int step = 0; step < 1000 && current_; ++step) {
      const std::optional<std::size_t> k = neighbour(*current_);
      if (!k) break;
      if (!memory_.told(*k)) {
        proposed_from_ = current_;
        return k;
      }
      consider(*k);
    }
    return jump();
  }

  void tell(std::size_t k, std::optional<double> v) override {
    memory_.remember(k, v);
    const bool improved = v && best_seen_ && *v < *best_seen_ - 1e-12;
    if (v && (!best_seen_ || *v < *best_seen_)) best_seen_ = v;
    since_improvement_ = improved ? 0 : since_improvement_ + 1;
    if (proposed_from_) {
      current_ = proposed_from_;
      proposed_from_.reset();
      consider(k);
      temperature_ *= cooling_;
    } else if (!current_ && v) {
      current_ = k;
    }
    if (since_improvement_ >= restart_after_) {
      current_ = memory_.best();  // restart from the best, warmer
      temperature_ /= std::pow(cooling_, static_cast<double>(restart_after_) / 2);
      since_improvement_ = 0;
    }
  }

 private:
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
    const std::optional<double>& v = memory_.value(k);
    if (!v) return;  // invalid: never a place to stand
    const std::optional<double>& here = current_ ? memory_.value(*current_) : std::nullopt;
    if (!here || *v <= *here || rng_.unit() < std::exp(-(*v - *here) / temperature_)) current_ = k;
  }

  // An untold config at random (a restart of the walk from somewhere new).
  std::optional<std::size_t> jump() {
    while (std::optional<std::size_t> k = restarts_.next()) {
      if (memory_.told(*k)) continue;
      proposed_from_.reset();
      current_.reset();
      return k;
    }
    return std::nullopt;
  }

  const SpaceIndex& space_;
  Memory memory_;
  Random rng_;
  Permutation restarts_;
  double temperature_;
  double cooling_;
  std::size_t restart_after_;
  std::optional<std::size_t> current_;
  std::optional<std::size_t> proposed_from_;
  std::optional<double> best_seen_;
  std::size_t since_improvement_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_bayes_strategy(const SpaceIndex& space,
                                              const SearchSettings& settings);

std::unique_ptr<Strategy> make_strategy(const SearchSettings& settings, const SpaceIndex& space) {
  if (settings.strategy == "grid") return std::make_unique<GridStrategy>(space.size());
  if (settings.strategy == "random")
    return std::make_unique<RandomStrategy>(space.size(), settings.seed);
  if (settings.strategy == "anneal") return std::make_unique<AnnealStrategy>(space, settings);
  if (settings.strategy == "bayes") return make_bayes_strategy(space, settings);
  throw error(fmt::format("unknown search strategy '{}'", settings.strategy));
}

}  // namespace tune
