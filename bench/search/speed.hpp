// `bench_search --speed` (bench/search/README.md "Strategy time"): how much time each strategy
// itself takes per proposal, on a synthetic space of 10,000 configs, as observations accumulate.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tune::bench {

struct SpeedOptions {
  std::vector<std::string> strategies;                    ///< timed on runs of their own
  std::vector<std::size_t> at = {100, 1000, 3000, 5000};  ///< outcomes before each timed stretch
  std::size_t sample = 100;                               ///< proposals timed per stretch
  std::size_t batch = 16;                                 ///< the pending configs of the batch row
  bool before = true;                                     ///< time the old bayes as well
};

/// Prints the table of bench/search/README.md "Strategy time"; the exit code.
int run_speed(const SpeedOptions& options);

}  // namespace tune::bench
