// `bench_search --cost` (bench/search/README.md "Compile cost"): what `bayes` with `cost_weight`
// saves of the compiler's time, on a synthetic space whose compile seconds differ by 40x.
#pragma once

#include <cstddef>
#include <vector>

namespace tune::bench {

struct CostOptions {
  std::size_t seeds = 20;                       ///< runs per weight and case, seeds 0..N-1
  std::vector<double> weights = {0, 1, 2};      ///< the `cost_weight`s compared
  std::vector<std::size_t> evals = {100, 300};  ///< the compile seconds after this many
  std::size_t batch = 4;                        ///< proposals per call, as a pipeline asks
};

/// Prints the table of bench/search/README.md "Compile cost"; the exit code.
int run_cost(const CostOptions& options);

}  // namespace tune::bench
