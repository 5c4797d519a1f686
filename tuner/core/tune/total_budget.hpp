// A wall-clock budget for a whole tune (`TUNE_BUDGET_S`, `tuner tune --total-budget`): the
// `budget_s` of a space is per bucket, and this is "this much for everything that is stale". It
// is split across the stale buckets as they come: each gets an equal share of what is left when
// it starts (at most its own budget), so time a bucket does not use goes to the buckets after
// it. The required configs are measured whatever the budget (docs/search.md), so a bucket whose
// share is spent still gets its incumbents and a record.
//
// Example:
//   TotalBudget total(3600, 6);                      // 6 stale buckets, an hour in all
//   double s = total.next_bucket(space_budget_s);   // 600 for the first, then what is left / 5
#pragma once

#include <cstddef>
#include <functional>
#include <optional>

namespace tune {

class TotalBudget {
 public:
  /// `seconds` for `buckets` buckets from now; `clock` gives seconds on a monotonic clock
  /// (a test passes its own).
  TotalBudget(double seconds, std::size_t buckets, std::function<double()> clock = {});

  /// The budget of the next bucket, in seconds: what is left divided by the buckets left
  /// (this one included), no more than `own_s` (the bucket's own budget) when there is one,
  /// and 0 once the total is spent. Counts the bucket.
  double next_bucket(std::optional<double> own_s);

  /// Seconds left of the total (0 when spent).
  double left_s() const;
  /// Buckets not yet started.
  std::size_t buckets_left() const { return buckets_left_; }
  double total_s() const { return total_s_; }

 private:
  double total_s_;
  std::size_t buckets_left_;
  std::function<double()> clock_;
  double start_;
};

}  // namespace tune
