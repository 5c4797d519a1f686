#include <tuner/core/search/strategy.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/result.hpp>
#include <tuner/core/search/prior_guide.hpp>

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
    const bool ints =
        std::all_of(list.begin(), list.end(), [](const ParamValue& v) { return v.is_int(); });
    if (ints) std::sort(list.begin(), list.end());
    categorical_.push_back(!ints);
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
// What every strategy keeps

void Ledger::check(std::size_t k, const char* call) const {
  if (k >= size())
    throw error(fmt::format("search strategy: {}({}) names no config of the space (it has {})",
                            call, k, size()));
}

void Ledger::propose(std::size_t k) {
  if (!pending_[k]) ++pending_count_;
  pending_[k] = true;
}

bool Ledger::tell(std::size_t k, std::optional<double> v) {
  if (told_[k]) return false;
  if (pending_[k]) {
    pending_[k] = false;
    --pending_count_;
  }
  told_[k] = true;
  ++told_count_;
  value_[k] = v;
  if (v && (!best_ || *v < *value_[*best_])) best_ = k;
  return true;
}

bool Ledger::withdraw(std::size_t k) {
  if (!pending_[k]) return false;
  pending_[k] = false;
  --pending_count_;
  withdrawn_.push_back(k);
  return true;
}

std::optional<std::size_t> Ledger::take_withdrawn() {
  while (withdrawn_head_ < withdrawn_.size()) {
    const std::size_t k = withdrawn_[withdrawn_head_++];
    if (open(k)) return k;
  }
  withdrawn_.clear();
  withdrawn_head_ = 0;
  return std::nullopt;
}

std::optional<std::size_t> Strategy::next() {
  const std::vector<std::size_t> one = propose(1);
  if (one.empty()) return std::nullopt;
  return one.front();
}

// ---------------------------------------------------------------------------------------------
// grid and random

namespace {

/// A strategy with an order of its own (grid, random): each proposal is the next open config of
/// its order; with a prior, the prior's next config (prior_guide.hpp: a probe, else its best open
/// config as corrected by the outcomes) until the prior has none open.
class FixedOrder : public Strategy {
 public:
  FixedOrder(const SpaceIndex& space, const PriorValues& prior)
      : ledger_(space.size()), guide_(space, prior) {}
  std::vector<std::size_t> propose(std::size_t n) final {
    std::vector<std::size_t> out;
    while (out.size() < n) {
      std::optional<std::size_t> k = guide_.next(ledger_);
      if (!k) k = next_open();
      if (!k) break;
      ledger_.propose(*k);
      out.push_back(*k);
    }
    return out;
  }
  void tell(std::size_t k, std::optional<double> v) final {
    ledger_.check(k, "tell");
    ledger_.tell(k, v);
    guide_.tell(k, v);
  }
  void withdraw(std::size_t k) final {
    ledger_.check(k, "withdraw");
    if (ledger_.withdraw(k)) withdrawn(k);
  }

 protected:
  /// The next open config of the order, or nullopt when none is left.
  virtual std::optional<std::size_t> next_open() = 0;
  /// Config `k`, pending, was given back.
  virtual void withdrawn(std::size_t k) { (void)k; }

  Ledger ledger_;

 private:
  PriorGuide guide_;
};

class GridStrategy final : public FixedOrder {
 public:
  GridStrategy(const SpaceIndex& space, const PriorValues& prior) : FixedOrder(space, prior) {}

 private:
  std::optional<std::size_t> next_open() override {
    while (cursor_ < ledger_.size() && !ledger_.open(cursor_))
      ++cursor_;
    if (cursor_ == ledger_.size()) return std::nullopt;
    return cursor_;
  }
  void withdrawn(std::size_t k) override { cursor_ = std::min(cursor_, k); }  // first again

  std::size_t cursor_ = 0;  // every config before it is told or pending
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

/// An open config of `ledger`: the one withdrawn longest ago, else the next open one of
/// `order`. Every open config is one or the other (a config leaves `order` once drawn, and
/// comes back only through withdraw), so this finds one while any is open.
std::optional<std::size_t> draw_open(Ledger& ledger, Permutation& order) {
  if (std::optional<std::size_t> k = ledger.take_withdrawn()) return k;
  while (std::optional<std::size_t> k = order.next())
    if (ledger.open(*k)) return k;
  return std::nullopt;
}

class RandomStrategy final : public FixedOrder {
 public:
  RandomStrategy(const SpaceIndex& space, std::uint64_t seed, const PriorValues& prior)
      : FixedOrder(space, prior), order_(space.size(), seed) {}

 private:
  std::optional<std::size_t> next_open() override { return draw_open(ledger_, order_); }

  Permutation order_;
};

// ---------------------------------------------------------------------------------------------
// anneal

/// Simulated annealing on the grid of value positions. The walk moves between configs; a move
/// to a config it was told of costs nothing (its value is known), so the walk goes on until it
/// reaches one that is open, which it proposes. A batch is several such neighbours of the walk's
/// current config, distinct because a pending config is never proposed again; each outcome,
/// whenever it comes, is a Metropolis step from the walk's current config at that time. With a
/// prior (prior_guide.hpp) the walk is steered by it: of up to four open neighbours found, the
/// one with the best corrected prior value is proposed, and a jump goes to the prior's best open
/// config as corrected while it has one.
class AnnealStrategy final : public Strategy {
 public:
  AnnealStrategy(const SpaceIndex& space, const SearchSettings& s, const PriorValues& prior)
      : space_(space),
        ledger_(space.size()),
        how_(space.size(), How::told),
        rng_(s.seed),
        restarts_(space.size(), s.seed ^ 0x9e3779b97f4a7c15ULL),
        temperature_(s.option("temperature")),
        cooling_(s.option("cooling")),
        restart_after_(static_cast<std::size_t>(s.option("restart_after"))),
        guide_(space, prior),
        start_(guide_.prior_best()) {}

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
    } else if (how == How::jump && v) {
      current_ = k;  // the walk restarts from where it jumped
    } else if (!current_ && v) {
      current_ = k;
    }
    if (since_improvement_ >= restart_after_) {
      current_ = ledger_.best();  // restart from the best, warmer
      temperature_ /= std::pow(cooling_, static_cast<double>(restart_after_) / 2);
      since_improvement_ = 0;
    }
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
    std::vector<std::size_t> open;  // with a prior: open neighbours, the best as corrected wins
    for (int step = 0; step < 1000 && current_; ++step) {
      const std::optional<std::size_t> k = neighbour(*current_);
      if (!k) break;
      if (ledger_.open(*k)) {
        if (guide_.empty()) {
          how_[*k] = How::neighbour;
          return k;
        }
        if (std::find(open.begin(), open.end(), *k) == open.end()) open.push_back(*k);
        if (open.size() == 4) break;
        continue;
      }
      if (ledger_.told(*k)) consider(*k);  // a pending neighbour is no place to stand yet
    }
    if (!open.empty()) {
      auto key = [&](std::size_t k) {
        const std::optional<double> v = guide_.corrected(k);
        return v ? *v : std::numeric_limits<double>::infinity();
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
  std::optional<double> best_seen_;
  std::size_t since_improvement_ = 0;
};

}  // namespace

std::vector<std::size_t> prior_ranking(const PriorValues& prior) {
  std::vector<std::size_t> ranked;
  for (std::size_t k = 0; k < prior.size(); ++k)
    if (prior[k]) ranked.push_back(k);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](std::size_t a, std::size_t b) { return *prior[a] < *prior[b]; });
  return ranked;
}

std::unique_ptr<Strategy> make_bayes_strategy(const SpaceIndex& space,
                                              const SearchSettings& settings,
                                              const PriorValues& prior);

std::unique_ptr<Strategy> make_strategy(const SearchSettings& settings, const SpaceIndex& space,
                                        const PriorValues& prior) {
  if (!prior.empty() && prior.size() != space.size())
    throw error(fmt::format("search strategy: a prior of {} configs for a space of {}",
                            prior.size(), space.size()));
  if (settings.strategy == "grid") return std::make_unique<GridStrategy>(space, prior);
  if (settings.strategy == "random")
    return std::make_unique<RandomStrategy>(space, settings.seed, prior);
  if (settings.strategy == "anneal")
    return std::make_unique<AnnealStrategy>(space, settings, prior);
  if (settings.strategy == "bayes") return make_bayes_strategy(space, settings, prior);
  throw error(fmt::format("unknown search strategy '{}'", settings.strategy));
}

}  // namespace tune
