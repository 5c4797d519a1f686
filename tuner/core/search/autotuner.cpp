// This file is longer than 500 lines because one SearchRun holds every step of the search
// (resume, incumbents, the pipeline of proposals, early rejection, the budget and its runoff
// reserve, the runoff), which share its state; splitting it is a follow-up.
#include <tuner/core/search/autotuner.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/search/file_lock.hpp>
#include <tuner/core/search/prior.hpp>
#include <tuner/core/search/strategy.hpp>
#include <tuner/core/space/space.hpp>

namespace tune {

nlohmann::json to_json(const PriorUse& p) {
  return {{"from", p.from}, {"tuner", p.tuner}, {"configs", p.configs}, {"top_k", p.top_k}};
}

namespace {

// One run of the search, in the steps of docs/search.md: prune, open the log, resume, the
// incumbents, the soft incumbent, the strategy's search, the best, the runoff. Indices `k` are
// into the pruned
// space; `space_[k]` is the objective's index of the k-th kept config.
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
  bool take(std::size_t k, Phase phase, bool may_reject = false,
            std::optional<int> prior_rank = std::nullopt);
  std::optional<EarlyReject> reject_rule() const;
  bool budget_left() const;
  Progress progress(bool resumed) const;
  void soft_incumbent();
  void search();
  void tell(std::size_t k);
  bool stop_rule_hit();
  void adopt_the_rest();
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
  double strategy_ms_ = 0;
  double strategy_unlogged_ms_ = 0;
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
      }
    } add{*this, t0};
    return call();
  }
};

result<Output> SearchRun::run() {
  prune();
  set_aside_stale_log();
  if (s_.search.retune == "warm") load_prior();
  // The log first, so that a later error still leaves a headed log.
  if (auto d = open_log()) return fail(*d);
  if (auto d = find_incumbents()) return fail(*d);
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
}

// The header this run's log must have (the prior aside: it is not compared).
LogHeader SearchRun::expected_header() const {
  LogHeader header;
  header.tuner = s_.name;
  header.space_hash = s_.space_hash ? *s_.space_hash : Space::pruned_space_hash(pruned_);
  header.arch = s_.arch;
  header.source_hash = s_.source_hash;
  header.toolchain = s_.toolchain;
  header.objective = s_.maximize ? "maximize" : "minimize";
  header.search = s_.search.identity();
  return header;
}

// A log of this search measured for another source, toolchain or space (and in nothing else
// another search's, its strategy aside) is moved to the prior's place, so that a new log starts; a
// header-only one is removed. Anything else about the log (unreadable, another search, locked by a
// writer) is left for open_log, which refuses it as before.
void SearchRun::set_aside_stale_log() {
  if (!s_.log_path || !s_.prior_log) return;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(*s_.log_path, ec)) return;
  result<LogContents> logged = read_log(*s_.log_path);
  if (!logged) return;
  const LogHeader expected = expected_header();
  LogHeader same = logged->header;
  same.prior = nullptr;
  // What makes it stale; the strategy may differ too (its trials are as good a prior).
  LogHeader stale = same;
  stale.search = expected.search;
  std::vector<std::string> changed = header_differences(stale, expected);
  if (changed.empty()) return;  // the same search (or only another strategy: refused later)
  stale.space_hash = expected.space_hash;
  stale.source_hash = expected.source_hash;
  stale.toolchain = expected.toolchain;
  if (!header_differences(stale, expected).empty()) return;  // another search: refused later
  result<FileLock> lock = FileLock::try_lock(*s_.log_path, "log");
  if (!lock) return;  // a writer holds it: refused later, naming it
  std::string what;
  for (const std::string& d : changed)
    what += (what.empty() ? "" : ", ") + d.substr(0, d.find(' '));
  if (logged->trials.empty()) {
    std::filesystem::remove(*s_.log_path);
    warn(fmt::format("{} held no trial of this {}; removed", s_.log_path->string(), what));
    return;
  }
  std::filesystem::rename(*s_.log_path, *s_.prior_log, ec);
  if (ec)
    throw error(fmt::format("cannot move '{}' to '{}': {}", s_.log_path->string(),
                            s_.prior_log->string(), ec.message()));
  warn(fmt::format("{} was measured for another {} ({} trials); kept as the prior {}",
                   s_.log_path->string(), what, logged->trials.size(), s_.prior_log->string()));
}

// The prior: the bucket's own (prior_log), else the first usable fallback. One that cannot be
// used is skipped with a warning.
void SearchRun::load_prior() {
  std::vector<std::pair<std::filesystem::path, bool>> candidates;  // path, any bucket
  if (s_.prior_log) candidates.emplace_back(*s_.prior_log, false);
  for (const std::filesystem::path& p : s_.prior_fallbacks)
    candidates.emplace_back(p, true);
  for (const auto& [path, any_bucket] : candidates) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    result<Prior> p = read_prior(path, s_.name, any_bucket, s_.maximize);
    if (!p) {
      warn(fmt::format("prior not used: {}", p.error().str()));
      continue;
    }
    PriorValues values = prior_values(*p, pruned_, s_.maximize);
    if (std::none_of(values.begin(), values.end(), [](const auto& v) { return v.has_value(); })) {
      warn(fmt::format("prior not used: {}: none of its configs is in the space now",
                       path.string()));
      continue;
    }
    for (const std::string& w : p->warnings)
      warn(w);
    PriorUse use{path.string(), p->tuner, 0, 0};
    int rank = 0;
    for (const auto& [config, value] : p->ranked) {
      ++rank;
      auto it = position_.find(config.id());
      if (it == position_.end()) continue;  // no longer in the space
      ++use.configs;
      if (prior_top_.size() < static_cast<std::size_t>(s_.search.prior_top_k))
        prior_top_.emplace_back(it->second, rank);
    }
    use.top_k = prior_top_.size();
    out_.prior = use;
    prior_values_ = std::move(values);
    prior_.emplace(std::move(*p));
    return;
  }
}

// The prior's best configs in the space, right after the incumbents (one measured already is
// not measured again); the budget is checked before each measurement, as in the search.
void SearchRun::measure_prior() {
  for (const auto& [k, rank] : prior_top_) {
    if (visited_[k]) continue;
    if (!adopt_.contains(pruned_[k].id()) && !budget_left()) return;
    take(k, Phase::search, /*may_reject=*/true, rank);
  }
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
  for (const Trial& t : log_->trials())
    log_rank_.emplace(t.id(), log_rank_.size());
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

// The rule a search candidate measured now may stop under: the best median measured in full so
// far plus the margin; nullopt when early rejection is off or nothing was measured in full yet.
std::optional<EarlyReject> SearchRun::reject_rule() const {
  if (!s_.reject_margin_pct || s_.maximize || !best_full_) return std::nullopt;
  return EarlyReject{*best_full_ * (1 + *s_.reject_margin_pct / 100), s_.reject_alpha};
}

// Adopts or measures the k-th config; returns whether it was measured now. `may_reject`: a
// search candidate, measured under the early-rejection rule.
// `prior_rank`: one of the prior's best, measured first.
bool SearchRun::take(std::size_t k, Phase phase, bool may_reject, std::optional<int> prior_rank) {
  visited_[k] = true;
  bool resumed = false;
  if (auto it = adopt_.find(pruned_[k].id()); it != adopt_.end()) {
    out_.trials.push_back(it->second);
    ++out_.resumed;
    resumed = true;
  } else {
    objective_.reject_above(may_reject ? reject_rule() : std::nullopt);
    Trial t = objective_.measure(space_[k]);
    // Only a candidate that was given a rule can have stopped under it.
    if (!may_reject || !t.is_measured()) t.rejected_early = false;
    t.config = pruned_[k];
    t.phase = phase;
    t.prior_rank = prior_rank;
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
  const Trial& last = out_.trials.back();
  if (const auto* m = last.state.measured()) {
    if (!best_seen_ || (s_.maximize ? m->median_ms > *best_seen_ : m->median_ms < *best_seen_))
      best_seen_ = m->median_ms;
    if (!last.rejected_early && (!best_full_ || m->median_ms < *best_full_))
      best_full_ = m->median_ms;
  }
  if (last.rejected_early) {
    ++out_.rejected_early;
    if (last.times) out_.saved_ms += last.times->saved_ms;
  }
  if (s_.on_progress) s_.on_progress(progress(resumed));
  return !resumed;
}

Progress SearchRun::progress(bool resumed) const {
  std::size_t planned = pruned_.size();
  if (s_.search.max_evals)
    planned = std::min(planned, static_cast<std::size_t>(*s_.search.max_evals));
  planned = std::max(planned, out_.trials.size());
  Progress p{out_.trials.size(), planned, out_.trials.back(), resumed, best_seen_, 0, {}};

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

// Tells the strategy what config k gave (the last trial): log(median), or -log(score) when
// maximizing, so that lower is better and differences are relative.
void SearchRun::tell(std::size_t k) {
  const auto* m = out_.trials.back().state.measured();
  std::optional<double> value;
  if (m != nullptr && m->median_ms > 0)
    value = s_.maximize ? -std::log(m->median_ms) : std::log(m->median_ms);
  timed_strategy([&] { strategy_->tell(k, value); });
  ++evaluations_;
  // A warm re-tune's stop counts what beats the best by more than the runoff's margin.
  const double margin = std::log1p(s_.runoff_policy.margin_pct / 100);
  if (value && (!best_value_ || *value < *best_value_ - margin))
    since_margin_ = 0;
  else
    ++since_margin_;
  if (value && (!best_value_ || *value < *best_value_ - 1e-12)) {
    best_value_ = value;
    since_improvement_ = 0;
  } else {
    ++since_improvement_;
  }
}

// Whether a stop rule ends the search now: max_evals evaluations, or `patience` evaluations
// without a better config. (The budget is checked where a measurement would start.)
bool SearchRun::stop_rule_hit() {
  const SearchSettings& search = s_.search;
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
void SearchRun::search() {
  index_.emplace(pruned_);
  strategy_ = timed_strategy([&] { return make_strategy(s_.search, *index_, prior_values_); });
  for (std::size_t i = 0; i < out_.trials.size(); ++i) {
    const std::size_t k = position_.at(out_.trials[i].id());
    const auto* m = out_.trials[i].state.measured();
    std::optional<double> value;
    if (m != nullptr && m->median_ms > 0)
      value = s_.maximize ? -std::log(m->median_ms) : std::log(m->median_ms);
    timed_strategy([&] { strategy_->tell(k, value); });
    ++evaluations_;
    if (value && (!best_value_ || *value < *best_value_)) best_value_ = value;
  }
  const std::size_t window = std::max<std::size_t>(1, objective_.window());
  std::vector<std::size_t> pending;  // k, in the order proposed
  while (!stop_rule_hit()) {
    if (pending.size() < window) {
      const std::vector<std::size_t> batch =
          timed_strategy([&] { return strategy_->propose(window - pending.size()); });
      std::vector<std::size_t> to_prepare;
      for (std::size_t k : batch) {
        if (visited_.at(k) || std::find(pending.begin(), pending.end(), k) != pending.end())
          throw error(fmt::format("search strategy '{}' proposed {} twice", s_.search.strategy,
                                  pruned_[k].id()));
        pending.push_back(k);
        if (!adopt_.contains(pruned_[k].id())) to_prepare.push_back(space_[k]);
      }
      if (!to_prepare.empty()) objective_.prepare(to_prepare);
    }
    if (pending.empty()) break;
    std::optional<std::size_t> pos;
    for (std::size_t p = 0; p < pending.size(); ++p) {
      auto it = log_rank_.find(pruned_[pending[p]].id());
      if (it == log_rank_.end() || !adopt_.contains(it->first)) continue;
      if (!pos || it->second < log_rank_.at(pruned_[pending[*pos]].id())) pos = p;
    }
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
    take(k, Phase::search, /*may_reject=*/true);
    ++new_proposals_;
    tell(k);
  }
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
}

// The runoff's length estimated from the two finalists' trials (the two best measured): each is
// set up again (load, setup), timed alone (warm-up, timed reps) and then in pairs (about its
// timed reps again). `one_round`: only the setups, the warm-ups and one pair.
double SearchRun::runoff_estimate_s(bool one_round) const {
  std::vector<const Trial*> measured;
  for (const Trial& t : out_.trials)
    if (t.is_measured() && !t.rejected_early) measured.push_back(&t);
  std::partial_sort(measured.begin(),
                    measured.begin() + std::min<std::ptrdiff_t>(2, std::ssize(measured)),
                    measured.end(), [](const Trial* a, const Trial* b) {
                      return a->state.measured()->median_ms < b->state.measured()->median_ms;
                    });
  double ms = 0;
  for (std::size_t i = 0; i < std::min<std::size_t>(2, measured.size()); ++i) {
    const Trial& t = *measured[i];
    const auto* m = t.state.measured();
    const TrialTimes times = t.times.value_or(TrialTimes{});
    const double timed = t.times ? times.timed_ms : m->median_ms * static_cast<double>(m->reps);
    ms += times.load_ms + times.setup_ms + times.warmup_ms;
    ms += one_round ? m->median_ms : times.warmup_ms + 2 * timed;
  }
  return ms / 1000;
}

// Whether the search may measure another candidate: budget is left beyond the runoff's
// estimated length, when a runoff will follow.
bool SearchRun::search_budget_left() {
  if (!budget_left()) return false;
  const std::optional<double> budget = s_.budget_s ? s_.budget_s : s_.search.budget_s;
  if (!budget || s_.maximize || !objective_.has_runoff()) return true;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double reserve = runoff_estimate_s(false);
  if (*budget - elapsed > reserve) return true;
  out_.runoff_reserve_s = reserve;
  return false;
}

// The best sequential median; the earlier trial wins ties. A trial rejected early never is.
void SearchRun::choose_best() {
  for (std::size_t i = 0; i < out_.trials.size(); ++i) {
    const auto* m = out_.trials[i].state.measured();
    if (m == nullptr || out_.trials[i].rejected_early) continue;
    if (out_.best_index) {
      const double best = out_.trials[*out_.best_index].state.measured()->median_ms;
      if (s_.maximize ? !(m->median_ms > best) : !(m->median_ms < best)) continue;
    }
    out_.best_index = i;
  }
  if (out_.best_index) out_.best = out_.trials[*out_.best_index].config;
}

void SearchRun::set_best(std::optional<std::size_t> trial) {
  out_.best_index = trial;
  out_.best = trial ? std::optional<Config>(out_.trials[*trial].config) : std::nullopt;
}

// The runoff between the two best distinct configs (each config has one trial here). Its
// incumbent is the soft incumbent when it is a finalist, else a required config that is, else
// the sequential leader.
void SearchRun::runoff() {
  std::optional<std::size_t> second;
  for (std::size_t i = 0; i < out_.trials.size(); ++i) {
    const auto* m = out_.trials[i].state.measured();
    if (m == nullptr || i == *out_.best_index || out_.trials[i].rejected_early) continue;
    if (second && !(m->median_ms < out_.trials[*second].state.measured()->median_ms)) continue;
    second = i;
  }
  if (!second) return;
  // Skipped only when not even one round of pairs fits in what is left of the budget.
  const std::optional<double> budget = s_.budget_s ? s_.budget_s : s_.search.budget_s;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::optional<double> remaining = objective_.budget_remaining();
  const double one_round = runoff_estimate_s(true);
  std::optional<double> left;
  if (budget) left = *budget - elapsed;
  if (remaining) left = left ? std::min(*left, *remaining) : *remaining;
  if (left && *left < one_round) {
    out_.runoff_skipped = fmt::format(
        "no runoff: the budget is exhausted ({:.1f} s left, one round of pairs needs about "
        "{:.1f} s); {} wins on its sequential median",
        std::max(0.0, *left), one_round, out_.trials[*out_.best_index].id());
    warn(*out_.runoff_skipped);
    return;
  }
  std::size_t inc = *out_.best_index;  // trial indices
  std::size_t chal = *second;
  if (soft_ && k_of(chal) == *soft_) {
    std::swap(inc, chal);
  } else if (!(soft_ && k_of(inc) == *soft_) && !is_required(k_of(inc)) &&
             is_required(k_of(chal))) {
    std::swap(inc, chal);
  }
  std::optional<RunoffPairs> pairs = objective_.runoff(space_[k_of(inc)], space_[k_of(chal)]);
  if (pairs) apply_runoff(*pairs, inc, chal);
}

void SearchRun::log_runoff(Trial t, std::size_t k, const RunoffPairs& pairs) {
  t.config = pruned_[k];
  t.phase = Phase::runoff;
  if (t.time.empty()) t.time = utc_now_iso8601();
  if (!t.cache_key) t.cache_key = keys_[k];
  if (!t.device) t.device = pairs.device;
  if (log_) log_->append(t);
  out_.runoff_trials.push_back(std::move(t));
}

// Logs the runoff's trials and decides: a forfeit, a failed paired bench (the incumbent keeps
// its place) or the statistics of the pairs.
void SearchRun::apply_runoff(const RunoffPairs& pairs, std::size_t inc, std::size_t chal) {
  const std::size_t inc_k = k_of(inc);
  const std::size_t chal_k = k_of(chal);
  const std::string inc_id = pruned_[inc_k].id();
  const std::string chal_id = pruned_[chal_k].id();
  if (pairs.incumbent_failure || pairs.challenger_failure) {
    RunoffStats stats;
    stats.outcome = RunoffOutcome::forfeit;
    stats.margin_pct = s_.runoff_policy.margin_pct;
    stats.alpha = s_.runoff_policy.alpha;
    stats.incumbent = inc_id;
    stats.challenger = chal_id;
    for (auto [failure, k] : {std::pair{&pairs.incumbent_failure, inc_k},
                              std::pair{&pairs.challenger_failure, chal_k}}) {
      if (!*failure) continue;
      Trial t = Trial::invalid("runoff setup failed: " + **failure);
      t.runoff = stats;
      log_runoff(std::move(t), k, pairs);
    }
    if (pairs.incumbent_failure && pairs.challenger_failure) {
      warn(fmt::format("both finalists failed their runoff setup ({} and {}); no winner", inc_id,
                       chal_id));
      set_best(std::nullopt);
    } else {
      const bool inc_wins = !pairs.incumbent_failure;
      stats.winner = inc_wins ? inc_id : chal_id;
      set_best(inc_wins ? inc : chal);
    }
    out_.runoff = stats;
    return;
  }
  if (pairs.failure) {
    warn(fmt::format("runoff of {} against {} failed: {}; {} keeps its place", chal_id, inc_id,
                     *pairs.failure, inc_id));
    set_best(inc);
    return;
  }
  RunoffStats stats =
      decide_runoff(pairs.incumbent_ms, pairs.challenger_ms, s_.runoff_policy, inc_id, chal_id);
  // The agreement check: each finalist's runoff median against its own sequential median.
  auto sequential_ms = [&](std::size_t trial) {
    const auto* m = out_.trials[trial].state.measured();
    return m ? m->median_ms : 0.0;
  };
  stats.incumbent_alone_ms = pairs.incumbent_alone_ms.value_or(0);
  stats.challenger_alone_ms = pairs.challenger_alone_ms.value_or(0);
  stats.warnings =
      agreement_warnings(stats, sequential_ms(inc), sequential_ms(chal), s_.runoff_policy);
  for (const std::string& w : stats.warnings)
    warn(w);
  for (auto [samples, k] :
       {std::pair{&pairs.incumbent_ms, inc_k}, std::pair{&pairs.challenger_ms, chal_k}}) {
    std::vector<double> sorted = *samples;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    Trial t = Trial::measured(median, sorted.front(), static_cast<std::int64_t>(n));
    t.runoff = stats;
    t.warnings = pairs.warnings;
    t.warnings.insert(t.warnings.end(), stats.warnings.begin(), stats.warnings.end());
    t.batched = pairs.batched;
    log_runoff(std::move(t), k, pairs);
  }
  set_best(stats.outcome == RunoffOutcome::challenger_wins ? chal : inc);
  out_.runoff = stats;
}

}  // namespace

result<Output> Autotuner::run_objective(Objective& objective) {
  return SearchRun(settings_, objective).run();
}

}  // namespace tune
