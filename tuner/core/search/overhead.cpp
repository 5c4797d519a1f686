#include <tuner/core/search/overhead.hpp>

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/core.h>

namespace tune {

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

namespace {

using Field = double TrialTimes::*;
constexpr std::array<Field, 9> fields = {
    &TrialTimes::fixture_ms, &TrialTimes::load_ms,         &TrialTimes::setup_ms,
    &TrialTimes::warmup_ms,  &TrialTimes::timed_ms,        &TrialTimes::wall_ms,
    &TrialTimes::saved_ms,   &TrialTimes::compile_wait_ms, &TrialTimes::strategy_ms};

}  // namespace

void OverheadTally::add(const Trial& t) {
  OverheadSummary& s = sums_;
  if (t.cached) ++s.cached;
  if (t.compile_s) {
    ++s.compiled;
    s.compile_s += *t.compile_s;
    s.longest_compile_s = std::max(s.longest_compile_s, *t.compile_s);
  }
  if (!t.times) return;
  ++s.trials;
  if (t.rejected_early) ++s.rejected_early;
  for (std::size_t f = 0; f < fields.size(); ++f) {
    s.total.*fields[f] += (*t.times).*fields[f];
    values_[f].push_back((*t.times).*fields[f]);
  }
  const TrialTimes& x = *t.times;
  overhead_.push_back(
      std::max(0.0, x.wall_ms - x.warmup_ms - x.timed_ms - x.compile_wait_ms - x.strategy_ms));
  waits_.push_back(x.compile_wait_ms + x.strategy_ms);
}

std::optional<OverheadSummary> OverheadTally::summary() const {
  if (sums_.trials == 0 && sums_.compiled == 0 && sums_.cached == 0) return std::nullopt;
  OverheadSummary s = sums_;
  for (std::size_t f = 0; f < fields.size(); ++f)
    s.median.*fields[f] = median_of(values_[f]);
  s.median_overhead_ms = median_of(overhead_);
  s.median_waits_ms = median_of(waits_);
  return s;
}

std::optional<OverheadSummary> summarize_overhead(const std::vector<Trial>& trials) {
  OverheadTally tally;
  for (const Trial& t : trials)
    tally.add(t);
  return tally.summary();
}

std::string describe_overhead(const OverheadSummary& s) {
  const TrialTimes& m = s.median;
  std::string rejected;
  if (s.rejected_early > 0)
    rejected = fmt::format(
        "\nearly rejection: {} of {} candidates stopped early, {:.1f} s of timed reps saved",
        s.rejected_early, s.trials, s.total.saved_ms / 1000);
  std::string more;
  if (s.total.strategy_ms > 0 || s.total.compile_wait_ms > 0)
    more = fmt::format("strategy waits {:.1f} s, compiler waits {:.1f} s",
                       s.total.strategy_ms / 1000, s.total.compile_wait_ms / 1000);
  if (s.compiled > 0)
    more += fmt::format("{}compiles: {} candidates, {:.1f} s of compiler time (longest {:.1f} s)",
                        more.empty() ? "" : "; ", s.compiled, s.compile_s, s.longest_compile_s);
  if (s.cached > 0)
    more += fmt::format("{}{} proposals needed no compile (in the kernel cache)",
                        more.empty() ? "" : "; ", s.cached);
  if (!more.empty()) more = "\n" + more;
  const bool waited = s.total.compile_wait_ms > 0 || s.total.strategy_ms > 0;
  const std::string waits =
      waited ? fmt::format(", waits {:.1f} ms (compiler {:.1f}, strategy {:.1f})",
                           s.median_waits_ms, m.compile_wait_ms, m.strategy_ms)
             : "";
  return fmt::format(
      "gpu time: {:.1f}% of {:.1f} s in timed reps ({} trials)\n"
      "per trial (median): setup {:.1f} ms (fixture {:.1f}, load {:.1f}), warm-up {:.1f} ms, "
      "timed {:.1f} ms{}, overhead {:.1f} ms outside warm-up{} timed reps{}{}",
      100 * s.timed_share(), s.total.wall_ms / 1000, s.trials, m.setup_ms, m.fixture_ms, m.load_ms,
      m.warmup_ms, m.timed_ms, waits, s.median_overhead_ms, waited ? "," : " and",
      waited ? " and waits" : "", rejected + more);
}

}  // namespace tune
