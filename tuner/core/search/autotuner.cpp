// The search's steps (docs/search.md "The steps"): prune, the log and its resume, the
// incumbents, the committed winner, the strategy's pipeline and its stop rules. The prior of a
// re-tune is in autotuner_prior.cpp, the best and the runoff in autotuner_runoff.cpp; the state
// they share is SearchRun's (search_run.hpp).
#include <tuner/core/search/autotuner.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/core.h>

#include <tuner/core/search/search_run.hpp>
#include <tuner/core/search/strategy.hpp>
#include <tuner/core/space/space.hpp>

namespace tune {
namespace detail {

result<Output> SearchRun::run() {
  prune();
  set_aside_stale_log();
  if (s_.search.retune == "warm") load_prior();
  // The log first, so that a later error still leaves a headed log.
  if (auto d = open_log()) return fail(*d);
  if (auto d = find_incumbents()) return fail(*d);
  prepare_first();
  for (std::size_t k : incumbents_) {
    const bool fresh = take(k, Phase::required);
    const Trial& t = out_.trials.back();
    if (fresh && !t.is_measured()) {
      out_.incumbent_failure =
          fmt::format("incumbent {} failed: {}; cannot guarantee the winner beat it", t.id(),
                      t.state.invalid()->reason);
      return std::move(out_);
    }
  }
  soft_incumbent();
  measure_prior();
  search();
  check_adopted();
  choose_best();
  if (out_.best_index && !s_.maximize) runoff();
  return std::move(out_);
}

void SearchRun::prune() {
  const std::vector<Config>& all = objective_.configs();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (s_.prune && !s_.prune(all[i])) continue;
    space_.push_back(i);
    pruned_.push_back(all[i]);
  }
  for (std::size_t k = 0; k < pruned_.size(); ++k)
    position_.emplace(pruned_[k].id(), k);
  visited_.assign(pruned_.size(), false);
  search_ = s_.search.resolved(pruned_.size());
  out_.strategy = search_.strategy;
  out_.strategy_auto = s_.search.strategy == "auto";
}

// The header this run's log must have (the prior aside: it is not compared).
LogHeader SearchRun::expected_header() const {
  LogHeader header;
  header.tuner = s_.name;
  header.space_hash = s_.space_hash ? *s_.space_hash : Space::pruned_space_hash(pruned_);
  header.arch = s_.arch;
  header.source_hash = s_.source_hash;
  header.toolchain = s_.toolchain;
  header.identity = s_.identity;
  header.identity_inputs = s_.identity_inputs;
  header.objective = s_.maximize ? "maximize" : "minimize";
  header.search = search_.identity();
  return header;
}

// Opens the log and reads the resume state: measured trials still in the space, with the
// current cache key.
std::optional<diagnostic> SearchRun::open_log() {
  keys_.resize(pruned_.size());
  for (std::size_t k = 0; k < pruned_.size(); ++k)
    keys_[k] = objective_.cache_key(space_[k]);
  if (!s_.log_path) return std::nullopt;
  LogHeader header = expected_header();
  if (out_.prior) header.prior = to_json(*out_.prior);
  result<TrialLog> opened = TrialLog::open(*s_.log_path, header);
  if (!opened) return opened.error();
  log_.emplace(std::move(*opened));
  for (const std::string& w : log_->warnings())
    warn(w);
  adopt_ = adoptable_trials(log_->trials(), pruned_, &keys_);
  for (const Trial& t : log_->trials()) {
    log_rank_.emplace(t.id(), log_rank_.size());
    // A config whose adopted trial was checked here is never adopted from elsewhere again.
    if (auto it = position_.find(t.id()); t.checks && it != position_.end())
      objective_.distrust_adopted(space_[it->second]);
  }
  return std::nullopt;
}

// Required configs, matched by id (duplicates once); all checked before anything is measured.
std::optional<diagnostic> SearchRun::find_incumbents() {
  std::unordered_set<std::string> seen;
  for (const Config& c : s_.require) {
    std::string id = c.id();
    if (!seen.insert(id).second) continue;
    auto it = position_.find(id);
    if (it == position_.end())
      return diagnostic{"", 0, 0,
                        fmt::format("required config '{}' is not in the space{}", id,
                                    s_.prune ? " after pruning" : "")};
    incumbents_.push_back(it->second);
  }
  return std::nullopt;
}

// What is measured before the strategy proposes (the incumbents, the committed winner, the
// prior's best), handed to the objective at once, so that a pipeline compiles them side by side
// rather than one at a time as each is measured. Those the log has are left out.
void SearchRun::prepare_first() {
  std::vector<std::size_t> first;
  auto add = [&](std::size_t k) {
    if (adopt_.contains(pruned_[k].id())) return;
    if (std::find(first.begin(), first.end(), space_[k]) == first.end()) first.push_back(space_[k]);
  };
  for (std::size_t k : incumbents_)
    add(k);
  if (s_.soft_incumbent)
    if (auto it = position_.find(s_.soft_incumbent->id()); it != position_.end()) add(it->second);
  for (const auto& [k, rank] : prior_top_)
    add(k);
  if (!first.empty()) objective_.prepare(first);
}

// The rule a search candidate measured now may stop under: the best median measured in full so
// far plus the margin; nullopt when early rejection is off or nothing was measured in full yet.
std::optional<EarlyReject> SearchRun::reject_rule() const {
  if (!s_.reject_margin_pct || s_.maximize || !best_full_) return std::nullopt;
  return EarlyReject{*best_full_ * (1 + *s_.reject_margin_pct / 100), s_.reject_alpha};
}

// Adopts or measures the k-th config; returns whether it was measured now. `may_reject`: a
// search candidate, measured under the early-rejection rule.
// `prior_rank`: one of the prior's best, measured first. `cached`: a proposal that needed no
// compile (Trial::cached).
bool SearchRun::take(std::size_t k, Phase phase, bool may_reject, std::optional<int> prior_rank,
                     bool cached) {
  visited_[k] = true;
  bool resumed = false;
  if (auto it = adopt_.find(pruned_[k].id()); it != adopt_.end()) {
    out_.trials.push_back(it->second);
    // A logged trial another process measured (a shard's, in a merged log) is a hint: its marks
    // decide nothing here.
    if (Trial& t = out_.trials.back(); t.adopted()) {
      t.rejected_early = false;
      t.same_binary.reset();
    }
    ++out_.resumed;
    resumed = true;
  } else {
    const std::optional<EarlyReject> rule = may_reject ? reject_rule() : std::nullopt;
    objective_.reject_above(rule);
    Trial t = objective_.measure(space_[k]);
    // Only a candidate measured here under a rule can have stopped under it, and only with a
    // median above the rule's threshold (docs/trust.md): a mark from another host, or from a
    // worker that was sent no threshold, is dropped.
    if (t.rejected_early && (!rule || t.adopted() || !t.is_measured() ||
                             t.state.measured()->median_ms <= rule->above_ms))
      t.rejected_early = false;
    t.config = pruned_[k];
    t.phase = phase;
    t.prior_rank = prior_rank;
    t.cached = cached;
    if (t.times) {
      t.times->strategy_ms = strategy_unlogged_ms_;
      strategy_unlogged_ms_ = 0;
    }
    if (t.time.empty()) t.time = utc_now_iso8601();
    if (!t.cache_key) t.cache_key = keys_[k];
    if (log_) log_->append(t);
    out_.trials.push_back(std::move(t));
  }
  if (!resumed) ++measured_;
  from_log_.push_back(resumed);
  const Trial& last = out_.trials.back();
  if (const auto* m = last.state.measured()) {
    // The progress line's best is a trial that may win: not one rejected early, a copy of
    // another config's binary or a distrusted source's (eligible), as the winner's choice.
    if (eligible(out_.trials.size() - 1) &&
        (!best_seen_ || (s_.maximize ? m->median_ms > *best_seen_ : m->median_ms < *best_seen_)))
      best_seen_ = m->median_ms;
    // Early rejection measures against times taken here only: an adopted trial's median may be
    // false, and would reject every honest candidate.
    if (!last.rejected_early && !last.adopted() && (!best_full_ || m->median_ms < *best_full_))
      best_full_ = m->median_ms;
  }
  if (last.rejected_early) {
    ++out_.rejected_early;
    if (last.times) out_.saved_ms += last.times->saved_ms;
  }
  if (s_.on_progress) s_.on_progress(progress(resumed));
  return !resumed;
}

Progress SearchRun::progress(bool resumed, std::optional<std::size_t> trial) const {
  std::size_t planned = pruned_.size();
  if (s_.search.max_evals)
    planned = std::min(planned, static_cast<std::size_t>(*s_.search.max_evals));
  planned = std::max(planned, out_.trials.size());
  Progress p{out_.trials.size(),
             planned,
             out_.trials[trial.value_or(out_.trials.size() - 1)],
             resumed,
             best_seen_,
             0,
             {}};

  p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (measured_ > 0) {
    p.remaining_s = p.elapsed_s / static_cast<double>(measured_) *
                    static_cast<double>(planned - out_.trials.size());
    if (const std::optional<double> budget = s_.budget_s ? s_.budget_s : s_.search.budget_s)
      p.remaining_s = std::min(*p.remaining_s, std::max(0.0, *budget - p.elapsed_s));
  }
  return p;
}

bool SearchRun::budget_left() const {
  if (const std::optional<double> budget = s_.budget_s ? s_.budget_s : s_.search.budget_s) {
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
    if (elapsed.count() >= *budget) return false;
  }
  const std::optional<double> remaining = objective_.budget_remaining();
  return !(remaining && *remaining <= 0);
}

// The committed winner: measured next, so that it wins ties of the sequential medians; dropped
// with a warning when it left the space or fails.
void SearchRun::soft_incumbent() {
  if (!s_.soft_incumbent) return;
  const std::string id = s_.soft_incumbent->id();
  auto it = position_.find(id);
  if (it == position_.end()) {
    warn(fmt::format("committed winner {} is no longer in the space{}; dropped", id,
                     s_.prune ? " after pruning" : ""));
  } else if (visited_[it->second]) {
    soft_ = it->second;  // also required: measured already
  } else {
    take(it->second, Phase::search);
    const Trial& t = out_.trials.back();
    if (t.is_measured())
      soft_ = it->second;
    else
      warn(fmt::format("committed winner {} failed: {}; dropped", id, t.state.invalid()->reason));
  }
}

// What a trial (of config k) gave, for the strategy: log(median), or -log(score) when maximizing,
// so that lower is better and differences are relative; and its compile seconds.
SearchRun::Outcome SearchRun::outcome_of(std::size_t trial, std::size_t k) const {
  const Trial& t = out_.trials.at(trial);
  Outcome o{k, std::nullopt, std::nullopt};
  if (const auto* m = t.state.measured(); m != nullptr && m->median_ms > 0)
    o.value = s_.maximize ? -std::log(m->median_ms) : std::log(m->median_ms);
  if (t.compile_s && *t.compile_s > 0) o.cost = t.compile_s;
  return o;
}

// The stop rules' counts after an outcome (the strategy is told it apart, maybe later).
void SearchRun::count(const Outcome& o) {
  ++evaluations_;
  // A warm re-tune's stop counts what beats the best by more than the runoff's margin.
  const double margin = std::log1p(s_.runoff_policy.margin_pct / 100);
  if (o.value && (!best_value_ || *o.value < *best_value_ - margin))
    since_margin_ = 0;
  else
    ++since_margin_;
  if (o.value && (!best_value_ || *o.value < *best_value_ - 1e-12)) {
    best_value_ = o.value;
    since_improvement_ = 0;
  } else {
    ++since_improvement_;
  }
}

// The strategy's work after an outcome: told it (the compile seconds first: the log keeps them
// with the trial, so a replay tells the same), then asked for `n` proposals. It touches only the
// strategy, so it may run on a helper thread while the GPU measures; it returns its own time.
SearchRun::Thought SearchRun::think(Strategy& strategy, const Outcome& o, std::size_t n) {
  const auto t0 = std::chrono::steady_clock::now();
  if (o.cost) strategy.tell_cost(o.k, *o.cost);
  strategy.tell(o.k, o.value);
  Thought th;
  if (n > 0) th.batch = strategy.propose(n);
  th.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return th;
}

// Whether a stop rule ends the search now: max_evals evaluations, or `patience` evaluations
// without a better config. (The budget is checked where a measurement would start.)
bool SearchRun::stop_rule_hit() {
  const SearchSettings& search = search_;
  if (search.max_evals && evaluations_ >= static_cast<std::size_t>(*search.max_evals)) {
    out_.stopped_by = "max_evals";
    return true;
  }
  if (prior_) {
    // A warm re-tune: at least retune_min_new proposals after the prior's best, then `patience`
    // (default: 2% of the space, at least 16) evaluations in which none beat the best by more
    // than the runoff's margin.
    const auto patience = search.patience ? static_cast<std::size_t>(*search.patience)
                                          : std::max<std::size_t>(16, (pruned_.size() + 49) / 50);
    if (best_value_ && new_proposals_ >= static_cast<std::size_t>(search.retune_min_new) &&
        since_margin_ >= patience) {
      out_.stopped_by = "warm";
      return true;
    }
    return false;
  }
  if (search.patience && best_value_ &&
      since_improvement_ >= static_cast<std::size_t>(*search.patience)) {
    out_.stopped_by = "patience";
    return true;
  }
  return false;
}

// After a stop: every logged trial not visited yet is adopted (it costs nothing), in
// enumeration order, without the strategy.
void SearchRun::adopt_the_rest() {
  for (std::size_t k = 0; k < pruned_.size(); ++k)
    if (!visited_[k] && adopt_.contains(pruned_[k].id())) take(k, Phase::search);
}

// The strategy's search (docs/search.md "The pipeline"): it is told every trial so far (the
// incumbents seed it), then keeps `window` proposals pending: the objective prepares each batch
// (compiles it), and the search measures whichever pending proposal the objective has ready
// first, tells the strategy its outcome and tops the batch up again, until the strategy has
// nothing more, a stop rule ends it, or the budget (less the runoff's estimated length) runs
// out before a measurement. Adopting a logged trial costs nothing and is taken whatever the
// budget: among the pending proposals, logged ones are taken first, in the order of the log, so
// that a resumed run repeats the calls of the run it resumes.
//
// With a window of two or more, the strategy thinks while the GPU measures: an outcome is told,
// and the batch topped up, on a helper thread while the next pending proposal is measured (or
// its compile waited for). The strategy's calls are the same as one after the other: told an
// outcome, asked for what tops the batch up (counting the one being measured); only the next
// measurement is picked before the new proposals join the batch. A logged trial is taken with
// the strategy's work done first, on this thread, in the same order, so a resume replays it.
void SearchRun::search() {
  index_.emplace(pruned_);
  StrategyContext context;
  context.compile_bound = s_.compile_bound;
  // Nothing but the space's end stops it: no budget, max_evals, patience or warm stop.
  context.complete =
      !s_.budget_s && !search_.budget_s && !search_.max_evals && !search_.patience && !prior_;
  strategy_ =
      timed_strategy([&] { return make_strategy(search_, *index_, prior_values_, context); });
  for (std::size_t i = 0; i < out_.trials.size(); ++i) {
    const std::size_t k = position_.at(out_.trials[i].id());
    const std::optional<double> value = outcome_of(i, k).value;
    timed_strategy([&] { strategy_->tell(k, value); });
    ++evaluations_;
    if (value && (!best_value_ || *value < *best_value_)) best_value_ = value;
  }
  const std::size_t window = std::max<std::size_t>(1, objective_.window());
  const bool overlap = window >= 2 && s_.think_beside;
  std::vector<std::size_t> pending;     // k, in the order proposed
  std::vector<std::size_t> unprepared;  // objective indices proposed, not yet prepared
  // Proposals that needed no compile (Trial::cached): a logged one as its log says (one a merge
  // brought from a shard's log was counted by that shard's search: as needing one), another as
  // the objective says when it is proposed. The window is for the proposals that need a compile;
  // of those that need none, no more are pending than one measured and one beside it (the
  // strategy thinks meanwhile).
  std::set<std::size_t> cached;     // pending ones
  std::optional<bool> last_cached;  // the latest proposal's; none before the first
  const std::size_t cached_most = overlap ? 2 : 1;
  auto add = [&](const std::vector<std::size_t>& batch) {
    for (std::size_t k : batch) {
      if (visited_.at(k) || std::find(pending.begin(), pending.end(), k) != pending.end())
        throw error(fmt::format("search strategy '{}' proposed {} twice", search_.strategy,
                                pruned_[k].id()));
      pending.push_back(k);
      const auto logged = adopt_.find(pruned_[k].id());
      if (logged == adopt_.end()) unprepared.push_back(space_[k]);
      last_cached = logged != adopt_.end() ? logged->second.cached && !logged->second.shard
                                           : objective_.ready(space_[k]);
      if (*last_cached) cached.insert(k);
    }
  };
  // How many proposals to ask for now: as many as fill the window, or after a proposal that
  // needed no compile, one while fewer than `cached_most` such are pending; the first alone, to
  // say which of the two the search is in.
  auto top_up_now = [&]() -> std::size_t {
    if (pending.size() >= window) return 0;
    if (!last_cached) return 1;
    if (*last_cached) return cached.size() < cached_most ? 1 : 0;
    return window - pending.size();
  };
  // Proposals are prepared (compiled) only once the search goes on: those made beside the last
  // measurement of a search that then stops are given back unprepared.
  auto prepare = [&] {
    if (!unprepared.empty()) objective_.prepare(unprepared);
    unprepared.clear();
  };
  // The strategy's own time counts in full; only what the search waited for (no more than the
  // strategy's time) is in the wall time of the next trial.
  auto settle = [&](const Thought& th, double waited_ms) {
    waited_ms = std::min(waited_ms, th.ms);
    strategy_ms_ += th.ms;
    strategy_unlogged_ms_ += waited_ms;
    strategy_wait_ms_ += waited_ms;
    add(th.batch);
  };
  std::future<Thought> thinking;  // the helper thread's work
  std::optional<Outcome> untold;  // the last outcome, not told to the strategy yet
  auto join = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    const Thought th = thinking.get();
    settle(
        th,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  };
  while (!stop_rule_hit()) {
    std::size_t top_up = top_up_now();
    while (!untold && top_up > 0) {
      const std::vector<std::size_t> batch =
          timed_strategy([&] { return strategy_->propose(top_up); });
      add(batch);
      top_up = batch.empty() ? 0 : top_up_now();
    }
    // A logged proposal is taken first, in the order of the log.
    std::optional<std::size_t> pos;
    for (std::size_t p = 0; p < pending.size(); ++p) {
      auto it = log_rank_.find(pruned_[pending[p]].id());
      if (it == log_rank_.end() || !adopt_.contains(it->first)) continue;
      if (!pos || it->second < log_rank_.at(pruned_[pending[*pos]].id())) pos = p;
    }
    if (untold) {
      if (pos || pending.empty() || !overlap) {
        const Thought th = think(*strategy_, *untold, top_up);
        settle(th, th.ms);
      } else {
        thinking = std::async(std::launch::async,
                              [this, o = *untold, top_up] { return think(*strategy_, o, top_up); });
      }
      untold.reset();
    }
    prepare();
    if (pending.empty()) break;
    if (!pos) {
      if (!search_budget_left()) {
        out_.budget_exhausted = true;
        out_.stopped_by = "budget";
        break;
      }
      std::vector<std::size_t> indices;
      for (std::size_t k : pending)
        indices.push_back(space_[k]);
      pos = std::min(objective_.pick(indices), pending.size() - 1);
    }
    const std::size_t k = pending[*pos];
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(*pos));
    take(k, Phase::search, /*may_reject=*/true, std::nullopt, cached.erase(k) > 0);
    if (thinking.valid()) join();
    ++new_proposals_;
    const Outcome o = outcome_of(out_.trials.size() - 1, k);
    count(o);
    untold = o;
  }
  // Proposals made while the search stopped are given back with the rest, never compiled.
  if (thinking.valid()) join();
  if (!pending.empty()) {
    std::vector<std::size_t> indices;
    for (std::size_t k : pending) {
      timed_strategy([&] { strategy_->withdraw(k); });
      indices.push_back(space_[k]);
    }
    objective_.drop(indices);
  }
  adopt_the_rest();
  for (std::size_t k = 0; k < pruned_.size(); ++k)
    if (!visited_[k]) out_.unvisited += 1;
  out_.strategy_s = strategy_ms_ / 1000;
  out_.strategy_wait_s = strategy_wait_ms_ / 1000;
}

}  // namespace detail

result<Output> Autotuner::run_objective(Objective& objective) {
  return detail::SearchRun(settings_, objective).run();
}

}  // namespace tune
