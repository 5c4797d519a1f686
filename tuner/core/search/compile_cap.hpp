// Internal to tune_core (not installed): the adaptive compile cap (docs/search.md "Compile
// cost"). In a search that a budget or a stop rule ends, a candidate whose compile runs far
// longer than the tune's compiles so far is stopped, and the candidate is logged `compile_slow`
// rather than waited for. Slow compiles are mostly slow kernels: the budget they would take buys
// several ordinary candidates.
//
// The cap is max(floor_s, factor x the 90th percentile of the valid compiles' seconds so far),
// once `after` valid compiles have finished; before that, and with a factor of 0, none. The
// compiles of a tune run on several threads: add and cap may be called from any of them.
//
// Example (kernel_tune.cpp):
//   CompileCap cap(CompileCap::Rule{10, 3});
//   request.timeout_s = cap.cap();                 // nullopt: the compile timeout alone
//   if (valid) cap.add(entry.compile_s);
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tune {

class CompileCap {
 public:
  struct Rule {
    double floor_s = 10;  ///< the cap is never shorter ([search] compile_cap_floor_s)
    double factor = 3;    ///< times the percentile ([search] compile_cap_factor; 0: no cap)
    double quantile = 0.9;
    std::size_t after = 16;  ///< valid compiles before the cap applies
  };

  explicit CompileCap(Rule rule) : rule_(rule) {}

  /// A valid compile of `seconds` (> 0, finite; others are ignored).
  void add(double seconds);
  /// The cap in seconds now, or nullopt (too few compiles yet, or a factor of 0).
  std::optional<double> cap() const;
  /// How `cap` was reached, for the reason of a stopped compile: `max(10 s, 3 x 1.20 s, the
  /// 90th percentile of 40 compiles)`.
  std::string explain() const;

 private:
  Rule rule_;
  mutable std::mutex mutex_;
  std::vector<double> seconds_;
  std::optional<double> percentile() const;  // of seconds_, mutex_ held
};

/// The reason of a candidate whose compile the cap stopped after `seconds`: it begins with
/// `compile_slow:`, which `is_compile_slow` recognizes.
std::string compile_slow_reason(double seconds, const std::string& how);
/// Whether an invalid trial's `reason` is a compile the cap stopped.
bool is_compile_slow(const std::string& reason);

}  // namespace tune
