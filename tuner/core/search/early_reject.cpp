#include <tuner/core/search/early_reject.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace tune {

int median_lower_bound_rank(int n, double alpha) {
  if (n <= 0 || !(alpha > 0)) return 0;
  // P(B <= k) for B ~ Binomial(n, 1/2), summed in logs (n may be a thousand).
  const double log_half_n = -n * std::log(2.0);
  double cumulative = 0;
  int rank = 0;
  for (int k = 0; k < n; ++k) {
    const double log_term = std::lgamma(n + 1.0) - std::lgamma(k + 1.0) -
                            std::lgamma(static_cast<double>(n - k) + 1.0) + log_half_n;
    cumulative += std::exp(log_term);
    if (cumulative > alpha) break;
    rank = k + 1;  // P(B <= rank - 1) <= alpha
  }
  return rank;
}

bool clearly_slower(std::span<const double> samples, const EarlyReject& rule, int looks) {
  const int n = static_cast<int>(samples.size());
  const int rank = median_lower_bound_rank(n, rule.alpha / std::max(1, looks));
  if (rank == 0) return false;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::nth_element(sorted.begin(), sorted.begin() + (rank - 1), sorted.end());
  return sorted[static_cast<std::size_t>(rank - 1)] > rule.above_ms;
}

std::vector<int> early_reject_looks(int reps) {
  std::vector<int> looks;
  for (int n = 10; n < reps; n *= 2)
    looks.push_back(n);
  return looks;
}

}  // namespace tune
