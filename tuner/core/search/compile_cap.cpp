#include <tuner/core/search/compile_cap.hpp>

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

namespace tune {

void CompileCap::add(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  seconds_.push_back(seconds);
}

std::optional<double> CompileCap::percentile() const {
  if (rule_.factor <= 0 || seconds_.size() < std::max<std::size_t>(1, rule_.after))
    return std::nullopt;
  std::vector<double> v = seconds_;
  const auto at =
      static_cast<std::size_t>(std::ceil(rule_.quantile * static_cast<double>(v.size())) - 1);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(at), v.end());
  return v[at];
}

std::optional<double> CompileCap::cap() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const std::optional<double> p = percentile();
  if (!p) return std::nullopt;
  return std::max(rule_.floor_s, rule_.factor * *p);
}

std::string CompileCap::explain() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const std::optional<double> p = percentile();
  if (!p) return "no cap yet";
  return fmt::format("max({:g} s, {:g} x {:.2f} s, the {:g}th percentile of {} compiles)",
                     rule_.floor_s, rule_.factor, *p, 100 * rule_.quantile, seconds_.size());
}

std::string compile_slow_reason(double seconds, const std::string& how) {
  return fmt::format(
      "compile_slow: the compile was stopped after {:.1f} s by the adaptive compile cap, {}; a "
      "tune that measures every candidate ([search] without budget_s, max_evals or patience) "
      "or compile_cap_factor = 0 compiles it in full",
      seconds, how);
}

bool is_compile_slow(const std::string& reason) {
  return reason.starts_with("compile_slow:");
}

}  // namespace tune
