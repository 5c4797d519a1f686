// `bench_search --overlap` (bench/search/README.md "The strategy beside the GPU"): a search with
// compile-ahead's window, whose strategy is told each outcome on a helper thread while the next
// proposal is measured, against the same search with the strategy's calls between measurements.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tune::bench {

struct OverlapOptions {
  std::vector<std::string> strategies = {"random", "anneal", "bayes"};
  std::vector<double> gpu_ms = {5, 20};  ///< what one measurement takes (a sleep: the GPU)
  std::size_t evaluations = 600;         ///< max_evals of each search
  std::size_t window = 16;               ///< proposals pending, as with 8 compile threads
};

/// Prints the table of bench/search/README.md "The strategy beside the GPU"; the exit code.
int run_overlap(const OverlapOptions& options);

}  // namespace tune::bench
