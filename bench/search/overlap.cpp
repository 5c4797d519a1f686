// `bench_search --overlap` (overlap.hpp). Each strategy searches the synthetic 10,000-config
// space of --speed through the Autotuner, with a window of pending proposals as compile-ahead
// keeps one, twice: with the strategy beside the measurements (the default) and with its calls
// between them (`think_beside(false)`). A measurement is a sleep of `gpu_ms`, which leaves the
// CPU to the strategy as a GPU does; the oldest pending proposal is always measured next, so
// both runs measure the same configs in the same order and only the wall time may differ.
#include "overlap.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include <tuner/core/search/autotuner.hpp>

#include "synthetic.hpp"

namespace tune::bench {

namespace {

// The GPU: each config's time from the synthetic landscape, after a sleep of `ms`.
class SleepingGpu : public Objective {
 public:
  SleepingGpu(const std::vector<Config>& configs, double ms, std::size_t window)
      : configs_(configs), ms_(ms), window_(window) {}
  const std::vector<Config>& configs() override { return configs_; }
  std::size_t window() override { return window_; }
  std::size_t pick(const std::vector<std::size_t>&) override { return 0; }
  Trial measure(std::size_t index) override {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms_));
    const std::optional<double> v = synthetic_value(configs_[index]);
    if (!v) return Trial::invalid("does not launch");
    const double median = std::exp(*v);
    return Trial::measured(median, median * 0.98, 10);
  }

 private:
  const std::vector<Config>& configs_;
  double ms_;
  std::size_t window_;
};

struct Run {
  double wall_s = 0;
  double strategy_s = 0;
  double waited_s = 0;
  std::vector<std::string> ids;
};

Run run_once(const std::vector<Config>& configs, const std::string& strategy, double gpu_ms,
             const OverlapOptions& o, bool beside) {
  SleepingGpu gpu(configs, gpu_ms, o.window);
  SearchSettings s;
  s.strategy = strategy;
  s.seed = 1;
  s.max_evals = static_cast<std::int64_t>(o.evaluations);
  const auto t0 = std::chrono::steady_clock::now();
  result<Output> out = Autotuner("overlap").search(s).think_beside(beside).run_objective(gpu);
  Run r;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!out) throw error(out.error().str());
  r.strategy_s = out->strategy_s;
  r.waited_s = out->strategy_wait_s;
  for (const Trial& t : out->trials)
    r.ids.push_back(t.id());
  return r;
}

}  // namespace

int run_overlap(const OverlapOptions& o) {
  const std::vector<Config> configs = synthetic_space();
  std::printf(
      "the synthetic space of --speed (10,000 configs), %zu evaluations per search, %zu "
      "proposals pending, one measurement a sleep of the GPU time; the strategy between the "
      "measurements (between) or beside them (beside): wall seconds of the search, the "
      "strategy's own seconds and, beside, the seconds the search waited for it\n",
      o.evaluations, o.window);
  std::printf("%-8s %7s %10s %10s %8s %11s %11s %10s\n", "strategy", "gpu ms", "between s",
              "beside s", "ratio", "strategy s", "waited s", "same");
  bool all_same = true;
  for (const std::string& name : o.strategies) {
    for (double ms : o.gpu_ms) {
      const Run between = run_once(configs, name, ms, o, false);
      const Run beside = run_once(configs, name, ms, o, true);
      const bool same = between.ids == beside.ids;
      all_same = all_same && same;
      std::printf("%-8s %7.1f %10.2f %10.2f %7.2fx %11.2f %11.2f %10s\n", name.c_str(), ms,
                  between.wall_s, beside.wall_s, between.wall_s / beside.wall_s, beside.strategy_s,
                  beside.waited_s, same ? "yes" : "NO");
      std::fflush(stdout);
    }
  }
  if (!all_same) {
    std::printf("the two ways measured different configs: the strategy's calls differ\n");
    return 1;
  }
  return 0;
}

}  // namespace tune::bench
