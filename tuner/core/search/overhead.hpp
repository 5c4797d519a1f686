// Where a tune's time went: the per-trial times of the trial log (Trial::times) summed over a
// tune, the share of its wall time the GPU spent in timed reps, and the per-trial overhead
// outside warm-up and timed reps. `tuner run` prints it after each bucket; `tuner show` and
// `tuner report` print it for a log.
//
// Example:
//   if (std::optional<OverheadSummary> o = summarize_overhead(log.trials()))
//     std::puts(describe_overhead(*o).c_str());
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <tuner/core/search/trial.hpp>

namespace tune {

/// The times of a tune's trials, summed, and their per-trial medians (milliseconds).
struct OverheadSummary {
  std::size_t trials = 0;  ///< trials that carry times (logs before the field carry none)
  TrialTimes total;        ///< every field summed over those trials
  TrialTimes median;       ///< every field's median over those trials
  /// The median of `wall_ms - warmup_ms - timed_ms - compile_wait_ms - strategy_ms`: what a
  /// trial costs beyond warm-up, timed reps and the search's waits for the compiler and the
  /// strategy (worker starts, fixture, module load, gate, protocol). The waits are apart: a
  /// tune that waits for its compiles has a slow pipeline, not slow trials.
  double median_overhead_ms = 0;
  /// The median of `compile_wait_ms + strategy_ms`: what a trial waited for the search.
  double median_waits_ms = 0;
  /// Trials whose timed reps stopped early (Trial::rejected_early); `total.saved_ms` is the
  /// device time of the reps they skipped.
  std::size_t rejected_early = 0;
  /// Candidates whose trials say how long they compiled (`Trial::compile_s`), their compile
  /// seconds summed, and the longest.
  std::size_t compiled = 0;
  double compile_s = 0;
  double longest_compile_s = 0;
  /// Search trials of proposals that needed no compile (`Trial::cached`: the kernel cache had
  /// them, so the search's window did not hold them).
  std::size_t cached = 0;
  /// total.timed_ms / total.wall_ms: the share of the tune's wall time spent in timed work.
  double timed_share() const noexcept {
    return total.wall_ms > 0 ? total.timed_ms / total.wall_ms : 0;
  }
};

/// The summary of trials added one at a time (a log streamed by `tuner show`): sums as they come;
/// the medians need each trial's times, 88 bytes a trial that carries them, not the trial.
class OverheadTally {
 public:
  void add(const Trial& trial);
  /// The summary so far, or nullopt when no trial carried times or compile seconds.
  std::optional<OverheadSummary> summary() const;

 private:
  OverheadSummary sums_;
  std::vector<double> values_[9];
  std::vector<double> overhead_;
  std::vector<double> waits_;
};

/// The summary of the trials that carry times or compile seconds, or nullopt when none does.
std::optional<OverheadSummary> summarize_overhead(const std::vector<Trial>& trials);

/// Two or three lines for people (no trailing newline):
/// `gpu time: 23.4% of 61.2 s in timed reps (12 trials)` and
/// `per trial (median): setup 12.1 ms (fixture 0.0, load 3.2), warm-up 30.0 ms, timed 101.5 ms,
/// overhead 44.0 ms outside warm-up and timed reps`, where a tune that waited for its compiler
/// or its strategy says so apart: `..., timed 101.5 ms, waits 140.8 ms (compiler 140.8,
/// strategy 0.0), overhead 11.0 ms outside warm-up, timed reps and waits`; a third line when
/// candidates stopped
/// early: `early rejection: 40 of 150 candidates stopped early, 9.6 s of timed reps saved`;
/// then, when the trials say so, one more:
/// `strategy waits 1.2 s, compiler waits 3.4 s; compiles: 12 candidates, 45.6 s of
/// compiler time (longest 9.1 s)`.
std::string describe_overhead(const OverheadSummary& summary);

}  // namespace tune
