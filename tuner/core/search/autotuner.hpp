// The search (docs/search.md "The steps"): prune, open the log, read the resume state, measure
// the declared incumbents (whatever the budget), then visit the rest of the space in
// enumeration order, checking the budget between candidates. This file holds the objective
// path, where the caller measures a whole configuration (`Objective`) and the best config is
// the best sequential median: there is no runoff on this path.
//
// Example:
//   MyObjective objective(configs);
//   result<Output> out = Autotuner("engine_prefill")
//                            .arch("sm_90")
//                            .log("prefill.trials.jsonl")
//                            .require({current_default})
//                            .run_objective(objective);
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/identity.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/search/early_reject.hpp>
#include <tuner/core/search/runoff.hpp>
#include <tuner/core/search/strategy.hpp>
#include <tuner/core/search/trial.hpp>
#include <tuner/core/search/trial_log.hpp>

namespace tune {

/// What an objective's paired runoff measured (`Objective::runoff`): both finalists set up
/// again (so their correctness gates run again) and timed in strict alternation.
struct RunoffPairs {
  /// Paired timings in milliseconds: index i of both vectors is one pair. Empty when a
  /// finalist forfeited or the paired bench failed.
  std::vector<double> incumbent_ms;
  std::vector<double> challenger_ms;
  /// Set when the incumbent's (challenger's) setup failed: the reason. That finalist forfeits.
  std::optional<std::string> incumbent_failure;
  std::optional<std::string> challenger_failure;
  /// Set when the paired bench failed after both setups succeeded: the incumbent keeps its
  /// place (docs/measurement.md "The paired runoff").
  std::optional<std::string> failure;
  /// The device that ran it, what may have disturbed it, and whether it was timed in batches.
  std::optional<std::string> device;
  std::vector<std::string> warnings;
  bool batched = false;
  /// Each finalist timed alone (the search's sequential mode) right before the pairs, with both
  /// set up: the reference of the agreement check that shares the pairs' device state. Unset
  /// when the objective does not provide it.
  std::optional<double> incumbent_alone_ms;
  std::optional<double> challenger_alone_ms;
};

/// An end-to-end objective: the caller owns the measurement (a whole request, a whole program)
/// and the search provides logging, resume, incumbents and the budget.
class Objective {
 public:
  virtual ~Objective() = default;
  /// The space, in enumeration order. Must stay the same for the whole run.
  virtual const std::vector<Config>& configs() = 0;
  /// Applies `configs()[index]` and measures it. Return `Trial::measured` or `Trial::invalid`
  /// (the config, phase and time are filled in by the search when left empty). An exception
  /// stops the run: nothing is logged for this candidate and the log stays consistent.
  virtual Trial measure(std::size_t index) = 0;
  /// Seconds of budget the objective has left, checked between candidates; nullopt for no
  /// limit of its own. Zero or less ends the search (incumbents are measured regardless).
  virtual std::optional<double> budget_remaining() { return std::nullopt; }
  /// The candidate's cache key, when the objective has one: a logged trial is adopted on
  /// resume only when its key equals this one.
  virtual std::optional<std::string> cache_key(std::size_t /*index*/) { return std::nullopt; }
  /// The paired runoff between two finalists (indices into `configs()`): `incumbent` is the one
  /// that keeps its place on a tie. nullopt (the default) means this objective has no runoff:
  /// the best sequential median wins, as on `tuner exec`'s path. An exception stops
  /// the run, as from `measure`.
  virtual std::optional<RunoffPairs> runoff(std::size_t /*incumbent*/, std::size_t /*challenger*/) {
    return std::nullopt;
  }
  /// Early rejection (docs/measurement.md "Early rejection"): the rule the next `measure` may
  /// stop under, set by the search before each measurement; nullopt measures in full (the
  /// incumbents, the committed winner, a search without a best yet). An objective that stops
  /// early returns a measured trial with `rejected_early` set; one that cannot ignores the rule
  /// (the default).
  virtual void reject_above(std::optional<EarlyReject> /*rule*/) {}
  /// Whether `runoff` runs one: the search then keeps room for it in the budget.
  virtual bool has_runoff() { return false; }
  /// The search checks an adopted trial of `configs()[index]` (docs/search.md "Adopted trials
  /// are checked here"): from now on `measure` measures it here, never adopting another
  /// machine's trial of it. An objective that adopts trials (the store's SharedTrials) must
  /// honour it; the default has nothing to adopt.
  virtual void distrust_adopted(std::size_t /*index*/) {}

  // The pipeline (docs/search.md "The pipeline"): an objective that prepares candidates before
  // it measures them (compiles them) says how many proposals the search keeps ahead of the
  // measurement; the search hands it each batch the strategy proposes, gives back those it
  // will not measure, and asks which pending proposal to measure next. The defaults measure one
  // proposal at a time, in the strategy's order.

  /// How many proposals the search keeps pending: the compile threads plus a look-ahead. 1: one
  /// at a time.
  virtual std::size_t window() { return 1; }
  /// The strategy proposed `indices` (into `configs()`), best first: start preparing them.
  virtual void prepare(const std::vector<std::size_t>& /*indices*/) {}
  /// The search will not measure `indices` (they were proposed): stop preparing them.
  virtual void drop(const std::vector<std::size_t>& /*indices*/) {}
  /// The position in `pending` (indices into `configs()`, in the order proposed; not empty) of
  /// the one to measure next: the first that is ready, waiting for one when none is.
  virtual std::size_t pick(const std::vector<std::size_t>& /*pending*/) { return 0; }
  /// Whether candidate `index` needs no preparing (the kernel cache has it). The window is for
  /// the candidates that do: a proposal that needs none is measured before the strategy is
  /// asked for more than one beside it, so a search of cached candidates keeps its strategy
  /// informed as one at a time does.
  virtual bool ready(std::size_t /*index*/) { return false; }
};

/// The base of an objective that wraps another (the store's SharedTrials, a shard's search
/// without its runoff): every virtual of Objective goes to `inner`, so an adapter overrides only
/// what it changes and cannot forget one, also a virtual added to Objective later.
class ForwardingObjective : public Objective {
 public:
  explicit ForwardingObjective(Objective& inner) : inner_(inner) {}
  const std::vector<Config>& configs() override { return inner_.configs(); }
  Trial measure(std::size_t index) override { return inner_.measure(index); }
  std::optional<double> budget_remaining() override { return inner_.budget_remaining(); }
  std::optional<std::string> cache_key(std::size_t index) override {
    return inner_.cache_key(index);
  }
  std::optional<RunoffPairs> runoff(std::size_t incumbent, std::size_t challenger) override {
    return inner_.runoff(incumbent, challenger);
  }
  void reject_above(std::optional<EarlyReject> rule) override { inner_.reject_above(rule); }
  bool has_runoff() override { return inner_.has_runoff(); }
  void distrust_adopted(std::size_t index) override { inner_.distrust_adopted(index); }
  std::size_t window() override { return inner_.window(); }
  void prepare(const std::vector<std::size_t>& indices) override { inner_.prepare(indices); }
  void drop(const std::vector<std::size_t>& indices) override { inner_.drop(indices); }
  std::size_t pick(const std::vector<std::size_t>& pending) override {
    return inner_.pick(pending);
  }
  bool ready(std::size_t index) override { return inner_.ready(index); }

 protected:
  Objective& inner_;  ///< the wrapped objective, for an adapter's own overrides
};

/// The prior a run started from (docs/search.md "Re-tunes start from what was measured").
struct PriorUse {
  std::string from;         ///< the log it was read from
  std::string tuner;        ///< that log's `<kernel>/<bucket>`
  std::size_t configs = 0;  ///< its measured configs that are in this run's pruned space
  std::size_t top_k = 0;    ///< of them, how many were to be measured first
};

/// `{"from", "tuner", "configs", "top_k"}`.
nlohmann::json to_json(const PriorUse& prior);

/// What a run found.
struct Output {
  /// One trial per config visited, adopted from the log or measured now: incumbents first (in
  /// declaration order), then the searcher's candidates in enumeration order.
  std::vector<Trial> trials;
  /// The best measured config (lowest median; highest score when maximizing; the earlier
  /// trial on a tie, so an incumbent keeps its place; never one rejected early); nullopt when
  /// nothing was measured valid or an incumbent failed.
  std::optional<Config> best;
  /// Index into `trials` of the best trial (set exactly when `best` is).
  std::optional<std::size_t> best_index;
  /// Set when a freshly measured incumbent came back invalid, and the run stopped before the
  /// search: `incumbent <id> failed: <reason>; cannot guarantee the winner beat it`.
  std::optional<std::string> incumbent_failure;
  /// How many of `trials` were adopted from the log rather than measured.
  std::size_t resumed = 0;
  /// Whether the budget ran out before every candidate was visited.
  bool budget_exhausted = false;
  /// What ended the search before the strategy ran out of configs: "budget", "max_evals",
  /// "patience" or "warm" (a warm re-tune's stop); nullopt when it ran out (grid and random:
  /// the whole space was visited).
  std::optional<std::string> stopped_by;
  /// Configs of the pruned space never visited.
  std::size_t unvisited = 0;
  /// The strategy that searched (the space's, or what `auto` picked for the bucket's size).
  std::string strategy;
  /// Whether `strategy` is what `auto` picked (the space named none, or named `auto`).
  bool strategy_auto = false;
  /// Seconds the strategy took (its propose and tell calls), replayed ones included.
  double strategy_s = 0;
  /// Of strategy_s, the seconds the search waited for the strategy; the rest ran on a helper
  /// thread while the GPU measured (docs/search.md "The pipeline").
  double strategy_wait_s = 0;
  /// The runoff's estimated length when the search stopped to leave room for it, in seconds.
  std::optional<double> runoff_reserve_s;
  /// Why no runoff ran when the two finalists had one due (`the budget is exhausted ...`).
  std::optional<std::string> runoff_skipped;
  /// Warnings of the log (skipped or repaired lines), of a dropped soft incumbent and of a
  /// failed runoff.
  std::vector<std::string> warnings;
  /// The runoff's trials (phase runoff, logged), in the order incumbent, challenger; a
  /// finalist that forfeited has one invalid trial here (`runoff setup failed: ...`).
  std::vector<Trial> runoff_trials;
  /// The runoff's statistics when one decided the winner (also on a forfeit, with outcome
  /// forfeit and no pairs); nullopt when none ran.
  std::optional<RunoffStats> runoff;
  /// Search candidates whose timed reps stopped early, and the device time of the reps they
  /// skipped (estimated; the trials' `times.saved_ms`, measured now or adopted).
  std::size_t rejected_early = 0;
  double saved_ms = 0;
  /// The prior the search started from, when it used one (a warm re-tune).
  std::optional<PriorUse> prior;
  /// Adopted trials (from the remote store or a shard) that a measurement here contradicted:
  /// each was replaced in `trials` by that measurement (docs/search.md "Adopted trials are
  /// checked here").
  std::vector<Trial> discarded;
  /// How many adopted finalists were measured here to check them (agreeing or not).
  std::size_t checked = 0;
};

/// One step of a run, for progress displays.
struct Progress {
  std::size_t done = 0;   ///< trials taken so far, this one included
  std::size_t total = 0;  ///< trials planned: the (pruned) space, or fewer under max_evals
  const Trial& trial;
  bool resumed = false;        ///< adopted from the log, not measured now
  std::optional<double> best;  ///< the best median (or score) so far, this trial included
  double elapsed_s = 0;        ///< since the search started
  /// What is left, estimated from the time per measured trial so far and the trials still
  /// planned, or the budget left when that is less; nullopt before a trial was measured.
  std::optional<double> remaining_s;
};

/// The search builder. Setters return `*this`; `run_objective` runs it.
class Autotuner {
 public:
  /// `name` heads the log (`tuner`), e.g. `<kernel>/<bucket>`.
  explicit Autotuner(std::string name);

  /// Keeps only configs for which `keep` returns true (applied before anything else).
  Autotuner& prune(std::function<bool(const Config&)> keep);
  /// Declared incumbents: each must be in the pruned space (matched by id, duplicates once)
  /// and is measured before the search, whatever the budget.
  Autotuner& require(std::vector<Config> incumbents);
  /// Wall-clock budget of the run in seconds, from the start of `run_objective`, checked
  /// between candidates. Without it only the objective's own budget applies.
  Autotuner& budget(double seconds);
  /// The search strategy and its stop rules (strategy.hpp; default: grid, no limits). Its
  /// `budget_s` applies when `budget` was not called; its identity heads the log, so that a log
  /// of another strategy or seed is refused.
  Autotuner& search(SearchSettings settings);
  /// The architecture, recorded in the log header (a log of another arch is refused).
  Autotuner& arch(std::string arch);
  /// Makes the run resumable through this trial log.
  Autotuner& log(std::filesystem::path path);
  /// The log's prior (docs/search.md "Re-tunes start from what was measured"): a log at
  /// `log()` that belongs to this search but for another source, toolchain or space is moved
  /// here (replacing what was there) and a new log is started; unless `[search] retune =
  /// "full"`, the prior is read from here, its best configs (`prior_top_k`) are measured after
  /// the incumbents, the strategy is guided by it and the search stops early (`retune_min_new`,
  /// `patience`). A prior that cannot be used is skipped with a warning: it never fails the run.
  Autotuner& prior_log(std::filesystem::path path);
  /// Logs of the same kernel (another bucket, another arch) read as the prior, the first that
  /// is usable, when `prior_log` has none.
  Autotuner& prior_fallbacks(std::vector<std::filesystem::path> paths);
  /// The space hash in the log header. Default: the pruned space's hash
  /// (`Space::pruned_space_hash`).
  Autotuner& space_hash(std::string hash);
  /// Source hash and toolchain fingerprint in the log header (compared when both sides have
  /// them).
  Autotuner& source_hash(std::string hash);
  Autotuner& toolchain(std::string fingerprint);
  /// The build identity in the log header (CacheKeyer::identity): a log of another identity is
  /// set aside as the prior (with prior_log) or refused, naming what changed (judge_log).
  Autotuner& identity(const BuildIdentity& identity);
  /// Higher is better: `median_ms` holds a score. Logged in the header, so that a minimizing
  /// and a maximizing run never share a log.
  Autotuner& maximize(bool on = true);
  /// The committed winner: measured right after the required configs (before the search) when it
  /// is still in the pruned space, so that it wins ties of the sequential medians, and the
  /// incumbent of the runoff when it is a finalist. One that left the space or fails to measure
  /// is dropped with a warning; it never fails the run.
  Autotuner& soft_incumbent(Config config);
  /// The runoff's tie margin and significance level (default: RunoffPolicy's, fixed in
  /// advance). The runoff runs only when the objective implements `Objective::runoff`, and not
  /// when maximizing.
  Autotuner& runoff_policy(RunoffPolicy policy);
  /// Early rejection of search candidates (docs/measurement.md "Early rejection"): a candidate
  /// may stop once its median is, with confidence 1 - `alpha`, more than `margin_pct` percent
  /// above the best median so far. nullopt (the default) measures every candidate in full.
  /// Incumbents, the committed winner and the runoff always measure in full; a trial rejected
  /// early is never the best nor a finalist. Not when maximizing.
  Autotuner& early_reject(std::optional<double> margin_pct, double alpha = EarlyReject{}.alpha);
  /// With an objective whose window is two or more, whether the strategy is told an outcome and
  /// tops the batch up on a helper thread while the next proposal is measured (default on). The
  /// strategy's calls are the same either way; off is for comparisons (bench_search --overlap).
  Autotuner& think_beside(bool on);
  /// Whether the tune is compile-bound (few of the candidates compiled yet; the tune decides,
  /// docs/search.md "Compile cost"): the strategy then weighs each proposal's predicted compile
  /// seconds (StrategyContext). Default off.
  Autotuner& compile_bound(bool on);
  /// Called after each trial is adopted or measured (and logged).
  Autotuner& on_progress(std::function<void(const Progress&)> fn);
  /// Called with each warning as it arises (they are also collected in `Output::warnings`).
  Autotuner& on_warning(std::function<void(const std::string&)> fn);

  /// Runs the search over `objective.configs()`, then the runoff between the two best distinct
  /// measured configs when the objective has one and budget is left (it is never adopted from
  /// the log: a resumed run runs it again). The runoff's incumbent is the soft incumbent when it
  /// is a finalist, else a required config that is, else the sequential leader. Returns a
  /// diagnostic, before anything is measured, for a refused log or a required config not in the
  /// pruned space; a failing incumbent is reported in `Output::incumbent_failure`. Throws
  /// tune::error on I/O failure and lets the objective's exceptions through.
  result<Output> run_objective(Objective& objective);

  /// What the builder collected; the search reads it.
  struct Settings {
    std::string name;
    std::function<bool(const Config&)> prune;
    std::vector<Config> require;
    std::optional<Config> soft_incumbent;
    RunoffPolicy runoff_policy;
    std::optional<double> budget_s;
    std::optional<double> reject_margin_pct;
    double reject_alpha = EarlyReject{}.alpha;
    SearchSettings search;
    std::string arch;
    std::optional<std::filesystem::path> log_path;
    std::optional<std::filesystem::path> prior_log;
    std::vector<std::filesystem::path> prior_fallbacks;
    std::optional<std::string> space_hash;
    std::optional<std::string> source_hash;
    std::optional<std::string> toolchain;
    std::optional<std::string> identity;
    nlohmann::json identity_inputs;
    bool maximize = false;
    bool think_beside = true;
    bool compile_bound = false;
    std::function<void(const Progress&)> on_progress;
    std::function<void(const std::string&)> on_warning;
  };

 private:
  Settings settings_;
};

}  // namespace tune
