// `[search]` of a space: the strategy, its settings and the stop rules, and the registry of
// the strategies with the settings each takes, so that the space reader can check them. The
// strategies themselves are the search's (tuner/core/search/strategy.hpp); this is what a space
// may say about them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tune {

/// One setting a strategy takes in `[search]`, with its range.
struct StrategyOption {
  std::string name;
  bool integer = false;  ///< an int (else any number)
  double min = 0;        ///< inclusive unless `min_exclusive`
  bool min_exclusive = false;
  std::optional<double> max;  ///< inclusive
  double fallback = 0;        ///< the value when the space leaves it out
  std::string doc;            ///< one line for people
  /// Whether the log header's identity names it when it has its default value. A setting added
  /// after logs were written says no, so that those logs stay this search's.
  bool identity_at_fallback = true;

  /// Whether `v` is a value it takes: finite, within its range, whole for an int.
  bool accepts(double v) const;
  /// What it takes, for messages: "an int in [1, inf)", "a number in (0, 1]".
  std::string takes() const;
};

/// A strategy's name, its one-line summary and the settings it takes besides the common ones.
struct StrategyInfo {
  std::string name;
  std::string summary;
  std::vector<StrategyOption> options;
};

/// The strategy `auto` picks for a bucket of `configs` configs after pruning: `grid` up to
/// `auto_grid_max`, else `auto_large_strategy`.
std::string_view auto_resolve(std::size_t configs);

/// Every strategy: auto (the default) first, then grid.
const std::vector<StrategyInfo>& strategies();
/// The strategy named `name`, or nullptr.
const StrategyInfo* find_strategy(std::string_view name);

/// The default of `[search] compile_timeout_s`: ten minutes, well past any compile a search can
/// afford to wait for, short of one that never ends.
inline constexpr double default_compile_timeout_s = 600;

/// `[search] strategy = "auto"`, the default: a bucket that keeps at most this many configs
/// after pruning is searched with `grid` (measuring all of it is cheap and exact), a larger
/// one with `auto_large_strategy`, the strategy the complete tables of bench/search show best
/// (docs/search.md "Strategies").
inline constexpr std::size_t auto_grid_max = 256;
inline constexpr std::string_view auto_large_strategy = "bayes";

/// `[search]`: the strategy, its settings and the stop rules.
struct SearchSettings {
  /// The strategy's name (`strategies()`); `auto` until `resolved` picks one for a bucket.
  std::string strategy = "auto";
  /// Whether the space named the strategy. A space without one hashes as the spaces of grid
  /// searches did before `auto` was the default, so their records stay fresh.
  bool strategy_given = false;
  std::uint64_t seed = 0;                 ///< the random streams of every strategy
  std::optional<std::int64_t> max_evals;  ///< evaluations (measured or adopted, valid or not)
  std::optional<double> budget_s;         ///< wall-clock budget of the search
  std::optional<double> timeout_s;        ///< per candidate
  /// Seconds one candidate's compile may run before it is stopped and the candidate is invalid
  /// (remembered by the kernel cache); default `default_compile_timeout_s`.
  std::optional<double> compile_timeout_s;
  /// The adaptive compile cap of a search that a budget or a stop rule ends (compile_cap.hpp):
  /// its floor in seconds (default 10) and its factor on the 90th percentile of the tune's
  /// valid compiles (default 3; 0: no cap).
  std::optional<double> compile_cap_floor_s;
  std::optional<double> compile_cap_factor;
  std::optional<std::int64_t> patience;   ///< stop after this many evaluations without a
                                          ///< better config (not for grid)
  std::map<std::string, double> options;  ///< the strategy's own settings, as the space gave
  /// How a bucket with a prior (its log of another source, toolchain or space; docs/search.md
  /// "Re-tunes start from what was measured") is re-tuned: "warm" (the default) measures the
  /// prior's best first, hands the prior to the strategy and stops early; "full" ignores it.
  std::string retune = "warm";
  /// How many of the prior's best configs a warm re-tune measures right after the incumbents.
  std::int64_t prior_top_k = 8;
  /// A warm re-tune stops no sooner than this many proposals after the prior's best (and then
  /// after `patience` evaluations, default 2% of the space and at least 16, that beat the best
  /// by less than the runoff's margin).
  std::int64_t retune_min_new = 16;
  /// Where a bucket with no prior of its own takes one: "bucket:<name>", "arch:<sm_XX>" or
  /// "auto"; unset: nowhere.
  std::optional<std::string> prior;

  /// These settings for a bucket of `configs` configs after pruning: `auto` replaced by the
  /// strategy it picks there (`auto_resolve`), anything else as it is. The search runs, and its
  /// log's header names, the resolved strategy; every reader of a log resolves it alike.
  SearchSettings resolved(std::size_t configs) const;
  /// The setting `name` of the strategy: the space's value, else its default.
  double option(std::string_view name) const;
  /// Whether the space sets `cost_weight = 0`, which turns the compile-cost model off for every
  /// strategy that takes it, compile-bound or not (docs/search.md "Compile cost").
  bool compile_costs_off() const;
  /// What shapes the sequence of evaluations: the strategy, its seed and its settings (not the
  /// stop rules, so that a resumed run may be given more budget). The trial log's header keeps
  /// it, of the settings resolved for the bucket (`auto` is never in it); `{"strategy":"grid"}`
  /// for grid, which has neither seed nor settings.
  nlohmann::json identity() const;

  friend bool operator==(const SearchSettings&, const SearchSettings&) = default;
};

}  // namespace tune
