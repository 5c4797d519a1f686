// `bench_search --cost` (cost.hpp). A 24 x 24 space (A, B in 0..23) whose compile seconds grow
// 40x with B (0.3 s to 12 s, a little more with A) and whose log time is a bowl with ripples
// (local optima everywhere); the optimum is either cheap to compile (A=16, B=4) or dear (A=9,
// B=20). Per `cost_weight` and case, over the seeds: the median compile seconds spent until
// the optimum was measured, and after each count of `evals` evaluations, `bayes` proposing
// `batch` configs a call and told each config's compile seconds before its outcome (as the
// search does). The same functions as tests/unit/strategy_cost_test.cpp.
#include "cost.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include <tuner/core/base/config.hpp>
#include <tuner/core/search/strategy.hpp>

namespace tune::bench {

namespace {

constexpr int side = 24;

double compile_s(int a, int b) {
  return 0.3 * std::pow(40.0, b / double(side - 1)) * (1 + a / (2.0 * side));
}

double log_time(int a, int b, int a0, int b0) {
  const double x = a - a0;
  const double y = b - b0;
  return 0.002 * x * x + 0.003 * y * y + 0.08 * (1 - std::cos(1.1 * x) * std::cos(0.9 * y));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int run_cost(const CostOptions& o) {
  std::vector<Config> configs;
  for (int a = 0; a < side; ++a)
    for (int b = 0; b < side; ++b)
      configs.push_back(Config{{"A", a}, {"B", b}});
  const SpaceIndex index(configs);
  const std::size_t last = o.evals.empty() ? 0 : *std::max_element(o.evals.begin(), o.evals.end());
  std::printf(
      "bayes on a %d x %d space, compiles 0.3 s to 12 s (40x); median of %zu seeds, "
      "batches of %zu\n",
      side, side, o.seeds, o.batch);
  std::string head = "| optimum | cost_weight | compile s to the optimum |";
  for (std::size_t e : o.evals)
    head += fmt::format(" compile s, {} evals |", e);
  std::string rule = "|";
  for (std::size_t i = 0; i < 3 + o.evals.size(); ++i)
    rule += "---|";
  std::printf("%s\n%s\n", head.c_str(), rule.c_str());
  for (auto [a0, b0, name] :
       {std::tuple{16, 4, "cheap (0.6 s)"}, std::tuple{9, 20, "dear (8 s)"}}) {
    for (double w : o.weights) {
      std::vector<double> to_optimum;
      std::vector<std::vector<double>> after(o.evals.size());
      for (std::size_t seed = 0; seed < o.seeds; ++seed) {
        SearchSettings s;
        s.strategy = "bayes";
        s.seed = seed;
        if (w > 0) s.options["cost_weight"] = w;
        std::unique_ptr<Strategy> strategy = make_strategy(s, index);
        double spent = 0;
        std::optional<double> found;
        std::size_t n = 0;
        while (n < last || !found) {
          const std::vector<std::size_t> batch = strategy->propose(o.batch);
          if (batch.empty()) break;
          for (std::size_t k : batch) {
            const int a = static_cast<int>(*configs[k].int_param("A"));
            const int b = static_cast<int>(*configs[k].int_param("B"));
            spent += compile_s(a, b);
            ++n;
            strategy->tell_cost(k, compile_s(a, b));
            strategy->tell(k, log_time(a, b, a0, b0));
            if (a == a0 && b == b0) found = spent;
            for (std::size_t i = 0; i < o.evals.size(); ++i)
              if (n == o.evals[i]) after[i].push_back(spent);
          }
        }
        to_optimum.push_back(found.value_or(spent));
      }
      std::string row = fmt::format("| {} | {:g} | {:.0f} |", name, w, median(to_optimum));
      for (const auto& v : after)
        row += fmt::format(" {:.0f} |", median(v));
      std::printf("%s\n", row.c_str());
    }
  }
  return 0;
}

}  // namespace tune::bench
