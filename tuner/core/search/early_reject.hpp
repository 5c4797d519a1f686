// Early rejection of losers (docs/measurement.md "Early rejection"): in the search phase a
// candidate's timed reps are taken in rounds, and after each round the samples so far are
// tested against the best median found so far. Once the candidate's median is, with confidence,
// above the best by more than a margin, its remaining reps are skipped: it is logged as
// measured with the reps it has and `rejected_early`, and it is never a finalist.
//
// The test is distribution-free: the r-th smallest of n independent samples lies above the
// true median with probability P(Binomial(n, 1/2) < r). The rank r is the largest one whose
// probability is at most the level of one look, and a candidate is stopped when that order
// statistic exceeds the threshold. With at most `looks` looks per candidate the level of each is
// alpha / looks (Bonferroni), so a candidate whose median is under the threshold is stopped
// with probability at most alpha.
//
// Example:
//   const EarlyReject rule{.above_ms = best_ms * 1.10, .alpha = 0.01};
//   const std::vector<int> looks = early_reject_looks(reps);   // 10, 20, 40, ...
//   after each look's reps: if (clearly_slower(samples_so_far, rule, looks.size())) stop();
#pragma once

#include <span>
#include <vector>

namespace tune {

/// The rule a search candidate is measured under: stop once its median is, with confidence
/// 1 - alpha over all its looks, above `above_ms` (the best median so far times one plus the
/// margin).
struct EarlyReject {
  double above_ms = 0;
  double alpha = 0.01;
  friend bool operator==(const EarlyReject&, const EarlyReject&) = default;
};

/// The rank (1-based) of the order statistic of `n` samples that is a lower confidence bound of
/// their median at level `alpha`: the largest r with P(Binomial(n, 1/2) <= r - 1) <= alpha, or 0
/// when even the smallest sample is no such bound (too few samples: 2^-n > alpha).
int median_lower_bound_rank(int n, double alpha);

/// Whether `samples` (milliseconds, any order) show, at the level `rule.alpha / looks`, that
/// their median is above `rule.above_ms`. False for no samples or too few.
bool clearly_slower(std::span<const double> samples, const EarlyReject& rule, int looks);

/// After how many of `reps` timed reps an early-rejecting measurement looks at its samples:
/// 10, 20, 40, ... (doubling, so that the looks are few and the level of each stays usable),
/// every one under `reps`. Empty when `reps` is 10 or fewer: such a candidate measures in full.
std::vector<int> early_reject_looks(int reps);

}  // namespace tune
