#include <tuner/core/tune/total_budget.hpp>

#include <algorithm>
#include <chrono>
#include <utility>

namespace tune {

namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

TotalBudget::TotalBudget(double seconds, std::size_t buckets, std::function<double()> clock)
    : total_s_(std::max(seconds, 0.0)),
      buckets_left_(buckets),
      clock_(clock ? std::move(clock) : std::function<double()>(steady_seconds)),
      start_(clock_()) {}

double TotalBudget::left_s() const {
  return std::max(total_s_ - (clock_() - start_), 0.0);
}

double TotalBudget::next_bucket(std::optional<double> own_s) {
  const std::size_t sharing = std::max<std::size_t>(buckets_left_, 1);
  if (buckets_left_ > 0) --buckets_left_;
  const double share = left_s() / static_cast<double>(sharing);
  return own_s ? std::min(share, *own_s) : share;
}

}  // namespace tune
