#include <tuner/core/space/search_settings.hpp>

#include <cmath>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/result.hpp>

namespace tune {

namespace {

// `random` and `anneal` weigh compile costs in one way only: of equally good proposals, a
// compile-bound tune takes the cheaper one first. `cost_weight = 0` turns that off, as it does
// bayes's weight; any other value keeps it. Not in the log's identity at its default.
StrategyOption cheaper_first_option() {
  return {"cost_weight",
          false,
          0,
          false,
          2.0,
          1,
          "0: a compile-bound tune proposes without its compile-cost model; any other value: of "
          "equally good proposals, the cheaper predicted compile first (the default when the tune "
          "is compile-bound)",
          false};
}

}  // namespace

const std::vector<StrategyInfo>& strategies() {
  static const std::vector<StrategyInfo> all = {
      {"auto",
       fmt::format("grid for a bucket of at most {} configs after pruning, else {} (the default)",
                   auto_grid_max, auto_large_strategy),
       {}},
      {"grid", "every config in enumeration order", {}},
      {"random", "every config once, in a random order", {cheaper_first_option()}},
      {"anneal",
       "simulated annealing over the params' value lists",
       {{"temperature", false, 0, true, std::nullopt, 0.05,
         "initial temperature, in units of log time (0.05: a 5% worse neighbour is accepted "
         "with probability 1/e)"},
        {"cooling", false, 0, true, 1.0, 0.98, "the temperature's factor per evaluation"},
        {"restart_after", true, 1, false, std::nullopt, 50,
         "evaluations without a better config before a restart from the best"},
        cheaper_first_option()}},
      {"bayes",
       "Bayesian optimization with a Gaussian process and expected improvement",
       {{"initial", true, 1, false, std::nullopt, 10,
         "configs of the start (the incumbents included), spread over the space, before the model "
         "chooses"},
        {"exploration", false, 0, false, std::nullopt, 0.01,
         "expected improvement's margin, in standard deviations of log time"},
        {"candidates", true, 16, false, std::nullopt, 512,
         "unmeasured configs drawn at random that the model scores beside the best configs' "
         "neighbourhoods (all of them in smaller spaces)"},
        {"cost_weight", false, 0, false, 2.0, 0,
         "how much the predicted compile seconds weigh: expected improvement is divided by the "
         "predicted compile cost (relative to the median) to this power; 0: not at all",
         false}}},
  };
  return all;
}

bool StrategyOption::accepts(double v) const {
  return std::isfinite(v) && (min_exclusive ? v > min : v >= min) && (!max || v <= *max) &&
         (!integer || v == std::floor(v));
}

std::string StrategyOption::takes() const {
  return fmt::format("{} in {}{}, {}{}", integer ? "an int" : "a number", min_exclusive ? "(" : "[",
                     min, max ? fmt::format("{}", *max) : "inf", max ? "]" : ")");
}

std::string_view auto_resolve(std::size_t configs) {
  return configs <= auto_grid_max ? std::string_view("grid") : auto_large_strategy;
}

SearchSettings SearchSettings::resolved(std::size_t configs) const {
  SearchSettings out = *this;
  if (strategy == "auto") out.strategy = std::string(auto_resolve(configs));
  return out;
}

const StrategyInfo* find_strategy(std::string_view name) {
  for (const StrategyInfo& s : strategies())
    if (s.name == name) return &s;
  return nullptr;
}

double SearchSettings::option(std::string_view name) const {
  if (auto it = options.find(std::string(name)); it != options.end()) return it->second;
  if (const StrategyInfo* info = find_strategy(strategy))
    for (const StrategyOption& o : info->options)
      if (o.name == name) return o.fallback;
  throw error(fmt::format("strategy '{}' has no setting '{}'", strategy, name));
}

bool SearchSettings::compile_costs_off() const {
  const auto w = options.find("cost_weight");
  return w != options.end() && w->second == 0;
}

nlohmann::json SearchSettings::identity() const {
  nlohmann::json j = {{"strategy", strategy}};
  if (strategy == "grid") return j;
  j["seed"] = seed;
  if (const StrategyInfo* info = find_strategy(strategy))
    for (const StrategyOption& o : info->options)
      if (o.identity_at_fallback || option(o.name) != o.fallback) j[o.name] = option(o.name);
  return j;
}

}  // namespace tune
