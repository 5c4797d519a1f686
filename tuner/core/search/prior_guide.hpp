// Internal to tune_core (not installed): a re-tune's prior as the strategies follow it
// (docs/search.md "Re-tunes start from what was measured"): the prior's values corrected by what
// the new outcomes say of them, and the configs to measure next by them.
//
// A small change to a kernel tends to move its times along a few params: another `STAGES` scheme
// makes every 4-stage config slower and leaves the 2-stage ones as they were. So the correction
// is additive per param value: an outcome's residual (its value less the prior's) is modelled as
// a common shift plus one offset per value of each param, a ridge regression on the values'
// indicators (an offset seen once moves four fifths of the way to what it saw). A value no outcome
// has shown cannot be corrected, so before the corrected order the guide probes: the prior's best
// open config with a param value that no config told so far had. A space of params with v_i
// values needs at most sum(v_i - 1) probes, fewer as the incumbents and the prior's best cover
// values.
//
// Example:
//   PriorGuide guide(space, prior);
//   guide.tell(k, std::log(ms));
//   if (std::optional<std::size_t> next = guide.next(ledger)) ...  // a probe, else the best
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include <Eigen/Dense>

#include <tuner/core/search/strategy.hpp>

namespace tune {

class PriorGuide {
 public:
  /// `prior`: empty (no prior; the guide proposes nothing) or one entry per config of `space`.
  PriorGuide(const SpaceIndex& space, const PriorValues& prior);

  bool empty() const noexcept { return ranked_.empty(); }

  /// The prior's best config; nullopt without a prior.
  std::optional<std::size_t> prior_best() const {
    return empty() ? std::nullopt : std::optional(ranked_.front());
  }

  /// Records config `k`'s outcome (nullopt: invalid). Every outcome shows its param values; a
  /// valid one of a config the prior has a value for also corrects the prior. A config told
  /// twice counts once.
  void tell(std::size_t k, const std::optional<double>& value);

  /// The prior's best open config of `ledger` that has a param value no config told had;
  /// nullopt when none is left.
  std::optional<std::size_t> probe(const Ledger& ledger);

  /// The open config of `ledger` with the lowest corrected value (ties: the prior's order);
  /// nullopt when the prior has no open config.
  std::optional<std::size_t> best_open(const Ledger& ledger);

  /// probe(), else best_open().
  std::optional<std::size_t> next(const Ledger& ledger);

  /// The prior's value of `k` corrected by the outcomes so far: the prior's value plus the
  /// common shift and the offsets of `k`'s param values; nullopt where the prior has no value.
  std::optional<double> corrected(std::size_t k) const;

  /// The common shift: the median residual; before any, the median valid outcome less the
  /// prior's median value; 0 before any valid outcome.
  double shift() const noexcept { return shift_; }

 private:
  void fit();
  /// The feature of config `k`'s value of param `d`; nullopt where `k` lacks the param.
  std::optional<std::size_t> feature(std::size_t k, std::size_t d) const;
  double offsets_of(std::size_t k) const;

  const SpaceIndex& space_;
  PriorValues prior_;
  std::vector<std::size_t> ranked_;  // the prior's configs, best first
  double prior_median_ = 0;          // the median of their values
  std::vector<std::size_t> first_;   // per param: its first feature's index
  std::vector<bool> told_;           // per config
  std::vector<bool> shown_;          // per feature: a config told had it
  std::size_t probe_head_ = 0;       // ranked_ before it: told, or showing nothing new
  Eigen::MatrixXd gram_;             // the residuals' indicators: A^T A
  Eigen::VectorXd moment_;           // A^T r
  Eigen::VectorXd counts_;           // A^T 1
  std::vector<double> residuals_;    // valid outcome less prior, in the order told
  std::vector<double> outcomes_;     // every valid outcome
  // The fit (again at each valid outcome): the shift and the offsets; `order_` ranks ranked_ by
  // corrected value, sorted again when asked after a fit.
  double shift_ = 0;
  Eigen::VectorXd offsets_;
  bool ordered_ = false;
  std::vector<std::size_t> order_;
  std::size_t order_head_ = 0;  // order_ before it: told
};

}  // namespace tune
