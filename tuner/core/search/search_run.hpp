// Internal to tune_core (not installed): one run of the search (Autotuner::run_objective), whose
// steps share its state. Its members are defined by step: autotuner.cpp (prune, the log and its
// resume, the incumbents, the strategy's pipeline and its stop rules), autotuner_prior.cpp (a
// stale log set aside, the prior read and its best configs measured first) and
// autotuner_runoff.cpp (the budget's room for the runoff, the check of adopted finalists, the
// best, the runoff and its decision).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <tuner/core/search/autotuner.hpp>
#include <tuner/core/search/prior.hpp>
#include <tuner/core/search/strategy.hpp>

namespace tune::detail {

// One run of the search, in the steps of docs/search.md: prune, open the log, resume, the
// incumbents, the soft incumbent, the strategy's search, the best, the runoff. Indices `k` are
// into the pruned space; `space_[k]` is the objective's index of the k-th kept config.
class SearchRun {
 public:
  SearchRun(const Autotuner::Settings& settings, Objective& objective)
      : s_(settings), objective_(objective), start_(std::chrono::steady_clock::now()) {}

  result<Output> run();

 private:
  void warn(const std::string& w) {
    if (s_.on_warning) s_.on_warning(w);
    out_.warnings.push_back(w);
  }
  void prune();
  LogHeader expected_header() const;
  void set_aside_stale_log();
  void load_prior();
  void measure_prior();
  std::optional<diagnostic> open_log();
  std::optional<diagnostic> find_incumbents();
  void prepare_first();
  bool take(std::size_t k, Phase phase, bool may_reject = false,
            std::optional<int> prior_rank = std::nullopt, bool cached = false);
  std::optional<EarlyReject> reject_rule() const;
  bool budget_left() const;
  Progress progress(bool resumed, std::optional<std::size_t> trial = std::nullopt) const;
  void soft_incumbent();
  void search();
  // An outcome for the strategy: config k, its value (lower is better) and compile seconds.
  struct Outcome {
    std::size_t k;
    std::optional<double> value;
    std::optional<double> cost;
  };
  // The strategy's work after an outcome: its proposals and its own milliseconds.
  struct Thought {
    std::vector<std::size_t> batch;
    double ms = 0;
  };
  Outcome outcome_of(std::size_t trial, std::size_t k) const;
  void count(const Outcome& o);
  static Thought think(Strategy& strategy, const Outcome& o, std::size_t n);
  bool stop_rule_hit();
  void adopt_the_rest();
  bool eligible(std::size_t trial) const;
  std::vector<std::size_t> leaders(std::size_t n) const;
  void check_adopted();
  std::optional<std::size_t> best_distrusted() const;
  void check(std::size_t trial);
  void choose_best();
  void runoff();
  void apply_runoff(const RunoffPairs& pairs, std::size_t inc, std::size_t chal);
  void log_runoff(Trial t, std::size_t k, const RunoffPairs& pairs);
  void set_best(std::optional<std::size_t> trial);
  std::size_t k_of(std::size_t trial) const { return position_.at(out_.trials[trial].id()); }
  bool is_required(std::size_t k) const {
    return std::find(incumbents_.begin(), incumbents_.end(), k) != incumbents_.end();
  }

  const Autotuner::Settings& s_;
  SearchSettings search_;  // s_.search, `auto` resolved for the pruned space (prune())
  Objective& objective_;
  std::chrono::steady_clock::time_point start_;
  Output out_;
  std::vector<std::size_t> space_;
  std::vector<Config> pruned_;
  std::optional<TrialLog> log_;
  std::vector<std::optional<std::string>> keys_;
  std::map<std::string, Trial> adopt_;
  std::unordered_map<std::string, std::size_t> position_;
  std::vector<std::size_t> incumbents_;
  std::vector<bool> visited_;
  std::vector<bool> from_log_;  // per trial of out_.trials: adopted from the log
  // Sources (Trial::adopted_from) one of whose trials disagreed with the measurement here: none
  // of their trials is a finalist, each is measured here instead (docs/trust.md).
  std::set<std::string> distrusted_;
  std::optional<std::size_t> soft_;
  std::optional<SpaceIndex> index_;
  std::unique_ptr<Strategy> strategy_;
  std::size_t evaluations_ = 0;
  std::optional<double> best_value_;
  std::size_t since_improvement_ = 0;
  std::size_t measured_ = 0;         // trials measured now (not adopted)
  std::optional<double> best_seen_;  // for progress displays
  std::optional<double> best_full_;  // the best median measured in full: early rejection's
  // A warm re-tune (docs/search.md "Re-tunes start from what was measured"): the prior, what
  // the strategy is told of it, its best configs in the space (k, rank) and the stop rule.
  std::optional<Prior> prior_;
  PriorValues prior_values_;
  std::vector<std::pair<std::size_t, int>> prior_top_;
  std::size_t new_proposals_ = 0;  // taken from the strategy
  std::size_t since_margin_ = 0;   // evaluations since one beat the best by the margin
  // The strategy's time: in total, and since the last measured trial (logged with the next).
  // Of it, what the search waited for (the rest ran beside a measurement).
  double strategy_ms_ = 0;
  double strategy_unlogged_ms_ = 0;
  double strategy_wait_ms_ = 0;
  // The logged trials' positions in the log, for replaying their order (config id -> rank).
  std::unordered_map<std::string, std::size_t> log_rank_;
  // The two finalists' measured trials so far, for the runoff's estimate.
  double runoff_estimate_s(bool one_round) const;
  bool search_budget_left();
  template <class Call>
  auto timed_strategy(Call call) {
    const auto t0 = std::chrono::steady_clock::now();
    struct Add {
      SearchRun& run;
      std::chrono::steady_clock::time_point t0;
      ~Add() {
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        run.strategy_ms_ += ms;
        run.strategy_unlogged_ms_ += ms;
        run.strategy_wait_ms_ += ms;
      }
    } add{*this, t0};
    return call();
  }
};

}  // namespace tune::detail
