// The end of the search: the budget's room for the runoff (docs/search.md "Budget and
// timeout"), the check of adopted finalists (docs/search.md "Adopted trials are checked here"),
// the best sequential median, and the runoff between the two finalists with its decision.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include <tuner/core/search/runoff.hpp>
#include <tuner/core/search/search_run.hpp>

namespace tune::detail {

namespace {

// The rounds of the check of adopted finalists: each measures here the adopted ones among the
// two best; after this many, adopted trials are no longer finalists (so many disagreements say
// the store or the shards are not to be trusted, and each round costs measurements).

}  // namespace

// The runoff's length estimated from the two finalists' trials (the two best measured): each is
// set up again (load, setup), timed alone (warm-up, timed reps) and then in pairs (about its
// timed reps again). `one_round`: only the setups, the warm-ups and one pair.
double SearchRun::runoff_estimate_s(bool one_round) const {
  double ms = 0;
  for (std::size_t i : leaders(2)) {
    const Trial& t = out_.trials[i];
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

// Whether trial i may be the best or a finalist: measured (not a copy of another config's
// measurement of the same binary), not rejected early, and not adopted from a source this tune
// distrusts.
bool SearchRun::eligible(std::size_t i) const {
  const Trial& t = out_.trials[i];
  return t.is_measured() && !t.rejected_early && !t.same_binary &&
         !(t.adopted() && distrusted_.contains(*t.adopted_from()));
}

// The (up to) n best eligible trials, best first; the earlier trial wins ties.
std::vector<std::size_t> SearchRun::leaders(std::size_t n) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < out_.trials.size(); ++i)
    if (eligible(i)) out.push_back(i);
  // Only the first n sorted (the budget asks for two before every candidate): better first, then
  // the earlier trial.
  const std::size_t top = std::min(n, out.size());
  std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(top), out.end(),
                    [&](std::size_t a, std::size_t b) {
                      const double x = out_.trials[a].state.measured()->median_ms;
                      const double y = out_.trials[b].state.measured()->median_ms;
                      if (x != y) return s_.maximize ? x > y : x < y;
                      return a < b;
                    });
  out.resize(top);
  return out;
}

// Adopted trials are checked here (docs/search.md "Adopted trials are checked here",
// docs/trust.md): the adopted trials among the finalists (the two best, or the best when no
// runoff follows) are measured here one at a time, each measurement taking its adopted trial's
// place, until the finalists are all measured here; no cap on the checks lets a flood win. One
// that disagrees with its adopted median by more than the runoff's agreement threshold discards
// the adopted trial (it stays in the log, the check marks it) and distrusts its source: none of
// that source's trials is a finalist any more, and each is measured here too (the best adopted
// median first), since a forger may write under an honest host's name. The budget is checked
// before each measurement.
void SearchRun::check_adopted() {
  const std::size_t n = objective_.has_runoff() && !s_.maximize ? 2 : 1;
  for (;;) {
    std::optional<std::size_t> next;
    for (std::size_t i : leaders(n))
      if (out_.trials[i].adopted()) {
        next = i;
        break;
      }
    if (!next) next = best_distrusted();
    if (!next) return;
    if (!budget_left()) {
      warn(fmt::format("the budget is exhausted: adopted {} {} ({}) is not checked here",
                       eligible(*next) ? "finalist" : "trial", out_.trials[*next].id(),
                       *out_.trials[*next].adopted_from()));
      return;
    }
    check(*next);
  }
}

// The adopted trial of a distrusted source with the best median, not yet measured here.
std::optional<std::size_t> SearchRun::best_distrusted() const {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < out_.trials.size(); ++i) {
    const Trial& t = out_.trials[i];
    if (!t.is_measured() || !t.adopted() || !distrusted_.contains(*t.adopted_from())) continue;
    const double m = t.state.measured()->median_ms;
    if (!best || (s_.maximize ? m > out_.trials[*best].state.measured()->median_ms
                              : m < out_.trials[*best].state.measured()->median_ms))
      best = i;
  }
  return best;
}

// Measures trial i's config here in full and puts that measurement in the adopted trial's place,
// marked with what it checked.
void SearchRun::check(std::size_t i) {
  const std::size_t k = k_of(i);
  const Trial adopted = out_.trials[i];
  const double adopted_ms = adopted.state.measured()->median_ms;
  objective_.distrust_adopted(space_[k]);
  objective_.reject_above(std::nullopt);
  Trial t = objective_.measure(space_[k]);
  if (t.adopted())
    t = Trial::invalid("adopted again where the search asked for a measurement here");
  t.rejected_early = false;
  t.config = pruned_[k];
  t.phase = adopted.phase == Phase::required ? Phase::required : Phase::search;
  if (t.time.empty()) t.time = utc_now_iso8601();
  if (!t.cache_key) t.cache_key = keys_[k];
  const auto* m = t.state.measured();
  const bool agreed = m != nullptr && std::fabs(m->median_ms / adopted_ms - 1) * 100 <=
                                          s_.runoff_policy.agreement_pct;
  t.checks = AdoptedCheck{*adopted.adopted_from(), adopted_ms, agreed};
  if (log_) log_->append(t);
  ++out_.checked;
  ++measured_;
  if (from_log_[i]) --out_.resumed;
  from_log_[i] = false;
  out_.trials[i] = std::move(t);
  if (!agreed) {
    const std::string source = *adopted.adopted_from();
    warn(fmt::format(
        "{} measured {} here, and {} said {:.4g} ms (more than {:g}% apart): that adopted trial "
        "is discarded{}",
        adopted.id(),
        m != nullptr ? fmt::format("{:.4g} ms", m->median_ms)
                     : "invalid (" + out_.trials[i].state.invalid()->reason + ")",
        source, adopted_ms, s_.runoff_policy.agreement_pct,
        distrusted_.insert(source).second
            ? fmt::format("; every other trial of {} is distrusted for the rest of this tune "
                          "and measured here instead",
                          source)
            : ""));
    out_.discarded.push_back(adopted);
  }
  // The best so far, again from the trials that may win: the check replaced one, and a
  // discarded one's source is distrusted now.
  const std::vector<std::size_t> lead = leaders(1);
  best_seen_ = lead.empty()
                   ? std::nullopt
                   : std::optional<double>(out_.trials[lead[0]].state.measured()->median_ms);
  if (s_.on_progress) s_.on_progress(progress(false, i));
}

// The best sequential median; the earlier trial wins ties. A trial rejected early never is.
void SearchRun::choose_best() {
  if (const std::vector<std::size_t> best = leaders(1); !best.empty()) set_best(best.front());
}

void SearchRun::set_best(std::optional<std::size_t> trial) {
  out_.best_index = trial;
  out_.best = trial ? std::optional<Config>(out_.trials[*trial].config) : std::nullopt;
}

// The runoff between the two best distinct configs (each config has one trial here). Its
// incumbent is the soft incumbent when it is a finalist, else a required config that is, else
// the sequential leader.
void SearchRun::runoff() {
  // The best is leaders(1) (choose_best), so the second finalist is the next leader.
  const std::vector<std::size_t> two = leaders(2);
  if (two.size() < 2) return;
  const std::size_t second = two[1];
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
  std::size_t chal = second;
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

}  // namespace tune::detail
