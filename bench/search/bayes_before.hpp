// The `bayes` strategy as it was before batch proposals and incremental model updates (a
// Gaussian process fitted from scratch, 2048 candidates scored, for every proposal), frozen here
// so that `bench_search --speed` times the old path and the new one side by side in one run. It
// is the benchmark's baseline only; the tuner never uses it.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>

#include <tuner/core/search/strategy.hpp>

namespace tune::bench {

/// The strategies' interface before batches: one proposal, then its outcome.
class OneAtATime {
 public:
  virtual ~OneAtATime() = default;
  /// The next config to measure, one it was not told of; nullopt when the space is exhausted.
  virtual std::optional<std::size_t> next() = 0;
  /// The outcome of config `k` (nullopt: invalid), told once.
  virtual void tell(std::size_t k, std::optional<double> value) = 0;
};

/// The old `bayes` over `space` (which must outlive it), with `settings`' seed and options.
std::unique_ptr<OneAtATime> make_bayes_before(const SpaceIndex& space,
                                              const SearchSettings& settings);

}  // namespace tune::bench
