#include <tuner/core/search/strategy.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/result.hpp>
#include <tuner/core/search/cost_model.hpp>
#include <tuner/core/search/permutation.hpp>
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
  FixedOrder(const SpaceIndex& space, const PriorValues& prior, const StrategyContext& context)
      : ledger_(space.size()),
        cost_(space),
        compile_bound_(context.compile_bound),
        guide_(space, prior) {}
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
  void tell_cost(std::size_t k, double seconds) final {
    ledger_.check(k, "tell_cost");
    if (compile_bound_) cost_.add(k, seconds);
  }
  void withdraw(std::size_t k) final {
    ledger_.check(k, "withdraw");
    if (ledger_.withdraw(k)) withdrawn(k);
  }

 protected:
  /// Whether the compile-cost model predicts for this search (compile-bound, enough told).
  bool weigh_costs() const { return compile_bound_ && cost_.ready(); }
  /// The next open config of the order, or nullopt when none is left.
  virtual std::optional<std::size_t> next_open() = 0;
  /// Config `k`, pending, was given back.
  virtual void withdrawn(std::size_t k) { (void)k; }

  Ledger ledger_;
  CostModel cost_;  // the compile seconds told, when compile-bound

 private:
  bool compile_bound_;
  PriorGuide guide_;
};

/// Every config in enumeration order; a complete search that is compile-bound proposes the
/// dearest predicted compile first once the cost model predicts (the longest compiles start
/// while there is GPU work to hide them behind, rather than last), in an order sorted again as
/// the model learns (each time its compiles grew by a quarter).
class GridStrategy final : public FixedOrder {
 public:
  GridStrategy(const SpaceIndex& space, const PriorValues& prior, const StrategyContext& context)
      : FixedOrder(space, prior, context), dearest_first_(context.complete) {}

 private:
  std::optional<std::size_t> next_open() override {
    if (dearest_first_ && weigh_costs()) return dearest_open();
    while (cursor_ < ledger_.size() && !ledger_.open(cursor_))
      ++cursor_;
    if (cursor_ == ledger_.size()) return std::nullopt;
    return cursor_;
  }
  void withdrawn(std::size_t k) override {
    cursor_ = std::min(cursor_, k);  // first again
    by_cost_at_ = 0;
  }

  std::optional<std::size_t> dearest_open() {
    if (by_cost_.empty() || cost_.observations() >= by_cost_at_ + by_cost_at_ / 4 + 1) {
      by_cost_.clear();
      for (std::size_t k = 0; k < ledger_.size(); ++k)
        if (ledger_.open(k)) by_cost_.emplace_back(cost_.relative(k), k);
      // Dearest first; a tie in enumeration order.
      std::sort(by_cost_.begin(), by_cost_.end(), [](const auto& a, const auto& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
      });
      by_cost_next_ = 0;
      by_cost_at_ = cost_.observations();
    }
    while (by_cost_next_ < by_cost_.size() && !ledger_.open(by_cost_[by_cost_next_].second))
      ++by_cost_next_;
    if (by_cost_next_ == by_cost_.size()) return std::nullopt;
    return by_cost_[by_cost_next_].second;
  }

  std::size_t cursor_ = 0;  // every config before it is told or pending
  bool dearest_first_;
  std::vector<std::pair<double, std::size_t>> by_cost_;  // open configs, dearest first
  std::size_t by_cost_next_ = 0;
  std::size_t by_cost_at_ = 0;  // the model's observations when by_cost_ was sorted
};

/// Every config once, in a seeded random order. Compile-bound, each proposal is the cheapest
/// predicted compile of the next `cost_draws` configs of that order (all equally good: each was
/// drawn at random); the others wait in `later_` for the order to run out, so that configs dear
/// to compile come last.
class RandomStrategy final : public FixedOrder {
 public:
  RandomStrategy(const SpaceIndex& space, std::uint64_t seed, const PriorValues& prior,
                 const StrategyContext& context)
      : FixedOrder(space, prior, context), order_(space.size(), seed) {}

 private:
  static constexpr std::size_t cost_draws = 4;

  std::optional<std::size_t> next_open() override {
    std::vector<std::size_t> drawn;
    const std::size_t wanted = weigh_costs() ? cost_draws : 1;
    while (drawn.size() < wanted)
      if (std::optional<std::size_t> k = detail::draw_open(ledger_, order_))
        drawn.push_back(*k);
      else
        break;
    while (drawn.size() < wanted && later_head_ < later_.size())
      if (const std::size_t k = later_[later_head_++]; ledger_.open(k)) drawn.push_back(k);
    if (drawn.empty()) return std::nullopt;
    auto it = drawn.begin();
    if (drawn.size() > 1)
      it = std::min_element(drawn.begin(), drawn.end(), [&](std::size_t a, std::size_t b) {
        return cost_.relative(a) < cost_.relative(b);
      });
    const std::size_t k = *it;
    drawn.erase(it);
    later_.insert(later_.end(), drawn.begin(), drawn.end());
    return k;
  }

  detail::Permutation order_;
  std::vector<std::size_t> later_;  // drawn, not the cheapest of their draw: proposed at the end
  std::size_t later_head_ = 0;
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

std::unique_ptr<Strategy> make_anneal_strategy(const SpaceIndex& space,
                                               const SearchSettings& settings,
                                               const PriorValues& prior,
                                               const StrategyContext& context);
std::unique_ptr<Strategy> make_bayes_strategy(const SpaceIndex& space,
                                              const SearchSettings& settings,
                                              const PriorValues& prior,
                                              const StrategyContext& context);

std::unique_ptr<Strategy> make_strategy(const SearchSettings& settings, const SpaceIndex& space,
                                        const PriorValues& prior, const StrategyContext& context) {
  if (!prior.empty() && prior.size() != space.size())
    throw error(fmt::format("search strategy: a prior of {} configs for a space of {}",
                            prior.size(), space.size()));
  if (settings.strategy == "auto")
    return make_strategy(settings.resolved(space.size()), space, prior, context);
  // The compile-cost model off: the strategy proposes as it would with a warm cache.
  if (context.compile_bound && settings.compile_costs_off()) {
    StrategyContext off = context;
    off.compile_bound = false;
    return make_strategy(settings, space, prior, off);
  }
  if (settings.strategy == "grid") return std::make_unique<GridStrategy>(space, prior, context);
  if (settings.strategy == "random")
    return std::make_unique<RandomStrategy>(space, settings.seed, prior, context);
  if (settings.strategy == "anneal") return make_anneal_strategy(space, settings, prior, context);
  if (settings.strategy == "bayes") return make_bayes_strategy(space, settings, prior, context);
  throw error(fmt::format("unknown search strategy '{}'", settings.strategy));
}

}  // namespace tune
