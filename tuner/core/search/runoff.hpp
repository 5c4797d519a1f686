// The paired runoff's decision (docs/measurement.md "The paired runoff"): both finalists are
// timed in strict alternation, and the paired differences decide. This file holds only the
// statistics, so the rule is testable without a GPU; the CUDA backend collects the pairs.
//
// The rule, fixed before any run:
//   d_i = (challenger_i - incumbent_i) / incumbent_i       (relative, per pair)
//   the challenger wins when median(d) < -margin and a one-sided sign test over the pairs
//   (how many d_i < 0) gives p < alpha; it loses when median(d) > +margin with p < alpha on the
//   other side; anything else is a tie, and on a tie the incumbent keeps its place.
// Defaults: margin 1% (below the run-to-run drift of an unlocked H200: a 1.2% shift was seen
// mid-run) and alpha 0.05 (20 pairs give power 0.93 at a 1-1.5% effect); the measurements are
// in docs/measurement.md "Measured on an H200".
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tune {

struct RunoffPolicy {
  double margin_pct = 1.0;  ///< differences inside +-margin are ties
  double alpha = 0.05;      ///< one-sided sign-test significance level
  /// A finalist whose runoff median departs from its own sequential median by more than this
  /// (in %) gets a warning: the two timing modes disagree about it (docs/measurement.md
  /// "Agreement of the two modes").
  double agreement_pct = 3.0;
};

enum class RunoffOutcome { challenger_wins, incumbent_wins, tie, forfeit };

std::string to_string(RunoffOutcome o);

/// What the runoff measured and decided; stored in the trial log and the record entry.
struct RunoffStats {
  int pairs = 0;
  double incumbent_median_ms = 0;
  double challenger_median_ms = 0;
  double median_diff_pct = 0;  ///< median of per-pair (challenger - incumbent) / incumbent, in %
  int challenger_faster = 0;   ///< pairs where the challenger was faster
  double p_value = 1;          ///< one-sided sign test in the direction of median_diff_pct
  double margin_pct = 0;
  double alpha = 0;
  RunoffOutcome outcome = RunoffOutcome::tie;
  std::string incumbent;   ///< config id
  std::string challenger;  ///< config id
  std::string winner;      ///< config id: the challenger only on challenger_wins
  /// Disagreements between a finalist's runoff median and its sequential median over the
  /// policy's `agreement_pct`, one sentence each (`agreement_warnings`). Written only when
  /// there are some.
  std::vector<std::string> warnings;
  /// Each finalist timed alone right before the pairs (0 when not measured; written only when
  /// measured).
  double incumbent_alone_ms = 0;
  double challenger_alone_ms = 0;
};

void to_json(nlohmann::json& j, const RunoffStats& s);
void from_json(const nlohmann::json& j, RunoffStats& s);

/// The runoff's decision as a sentence for people (`tuner show`, `tuner report`): `567 of 1000
/// pairs favoured the challenger B (0.0335 ms against 0.0338 ms for the incumbent A), a paired
/// median difference of -0.57% (p = 3.1e-06): within the 1% margin, a tie: the incumbent A is
/// kept`; a forfeit names the finalist whose setup failed.
std::string describe_runoff(const RunoffStats& s);

/// The agreement check of a decided runoff, per finalist, each departure over
/// `policy.agreement_pct` one warning naming the config, both times and the departure:
/// - the two modes: its paired (runoff) median against its median timed alone just before the
///   pairs (`*_alone_ms` of `stats`), or against its search median when it was not timed alone;
/// - drift: its median timed alone against its search median (`*_search_ms`): its time moved
///   between the search and the runoff.
/// A missing (zero) time skips its comparison.
std::vector<std::string> agreement_warnings(const RunoffStats& stats, double incumbent_search_ms,
                                            double challenger_search_ms,
                                            const RunoffPolicy& policy);

/// P(X >= k) for X ~ Binomial(n, 1/2).
double sign_test_upper_tail(int k, int n);

/// Decides a runoff from paired timings (same length, index i is one pair). Throws
/// tune::error when the lengths differ or there are no pairs.
RunoffStats decide_runoff(const std::vector<double>& incumbent_ms,
                          const std::vector<double>& challenger_ms, const RunoffPolicy& policy,
                          std::string incumbent_id, std::string challenger_id);

}  // namespace tune
