// `bench_search --speed` (speed.hpp). Two tables, seconds of the strategy's own calls (propose,
// tell) per 100 proposals on a synthetic space of 10,000 configs:
//
// - a run: each strategy chooses every config from the first, one proposal and its outcome at a
//   time (and `bayes` with `batch` configs pending, the oldest told first); the stretch of
//   `sample` proposals after 100, 1,000, 3,000 and 5,000 outcomes is timed;
// - before / now: `at` configs drawn at random are told to a fresh `bayes`, then `sample`
//   proposals are timed, for the old bayes (bayes_before.hpp) and the current one; a model-based
//   proposal costs what the observations' count makes it cost, whichever configs they are, so
//   the old path is timed without running it to 1,000 (which would take about half an hour).
#include "speed.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <deque>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include <tuner/core/base/config.hpp>
#include <tuner/core/search/strategy.hpp>

#include "bayes_before.hpp"
#include "synthetic.hpp"

namespace tune::bench {

// The synthetic space: A, B, C in 0..9, D in 0..4, E in {"plain", "ldg"}: 10,000 configs.
std::vector<Config> synthetic_space() {
  std::vector<Config> out;
  for (int a = 0; a < 10; ++a)
    for (int b = 0; b < 10; ++b)
      for (int c = 0; c < 10; ++c)
        for (int d = 0; d < 5; ++d)
          for (const char* e : {"plain", "ldg"})
            out.push_back(Config{{"A", a}, {"B", b}, {"C", c}, {"D", d}, {"E", e}});
  return out;
}

// Its landscape in log time: a tilted bowl with an interaction and some roughness; invalid
// where A + B + C > 22 (3.5% of the space).
std::optional<double> synthetic_value(const Config& config) {
  const double a = static_cast<double>(*config.int_param("A"));
  const double b = static_cast<double>(*config.int_param("B"));
  const double c = static_cast<double>(*config.int_param("C"));
  const double d = static_cast<double>(*config.int_param("D"));
  const double e = *config.string_param("E") == "ldg" ? 1.0 : 0.0;
  if (a + b + c > 22) return std::nullopt;
  return 0.02 * (a - 6.3) * (a - 6.3) + 0.015 * (b - 2.7) * (b - 2.7) + 0.01 * (c - 4) * (c - 4) +
         0.05 * (d - 1) * (d - 1) - 0.1 * e + 0.008 * (a - b) * (c - 5) +
         0.03 * std::sin(1.7 * a + 2.3 * b + 0.9 * c + d);
}

namespace {

// The process's CPU time: the strategies are single-threaded, and on a shared machine the wall
// clock would count the load of others.
struct Clock {
  using duration = std::chrono::nanoseconds;
  using time_point = std::chrono::nanoseconds;
  static time_point now() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
  }
};

struct Synthetic {
  std::vector<Config> configs = synthetic_space();
  std::vector<std::optional<double>> values;
  SpaceIndex index{configs};
  Synthetic() {
    for (const Config& c : configs)
      values.push_back(synthetic_value(c));
  }
};

SearchSettings settings_of(const std::string& strategy) {
  SearchSettings s;
  s.strategy = strategy;
  s.seed = 1;
  return s;
}

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// A run of `strategy` with `batch` pending (1: each proposal told before the next): the seconds
// of its calls in each stretch [at, at + sample) of outcomes, per 100 proposals.
std::vector<double> time_run(const Synthetic& space, const std::string& strategy, std::size_t batch,
                             const SpeedOptions& o) {
  std::unique_ptr<Strategy> s = make_strategy(settings_of(strategy), space.index);
  std::vector<double> spent(o.at.size(), 0.0);
  const std::size_t end = o.at.back() + o.sample;
  std::deque<std::size_t> pending;
  std::size_t told = 0;
  auto charge = [&](Clock::duration d) {
    for (std::size_t i = 0; i < o.at.size(); ++i)
      if (told >= o.at[i] && told < o.at[i] + o.sample) spent[i] += seconds(d);
  };
  while (told < end) {
    Clock::time_point t0 = Clock::now();
    const std::vector<std::size_t> more = s->propose(batch - pending.size());
    charge(Clock::now() - t0);
    pending.insert(pending.end(), more.begin(), more.end());
    if (pending.empty()) break;
    const std::size_t k = pending.front();
    pending.pop_front();
    t0 = Clock::now();
    s->tell(k, space.values[k]);
    charge(Clock::now() - t0);
    ++told;
  }
  for (double& x : spent)
    x *= 100.0 / static_cast<double>(o.sample);
  return spent;
}

// `at` random configs told (untimed), then `sample` proposals and their outcomes timed; per 100.
template <typename Make, typename Next>
double time_after(const Synthetic& space, std::size_t at, const SpeedOptions& o, Make make,
                  Next next) {
  auto s = make();
  Random draw(7);
  std::vector<std::size_t> order(space.configs.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  for (std::size_t i = 0; i < at; ++i) {
    std::swap(order[i], order[i + draw.below(order.size() - i)]);
    s->tell(order[i], space.values[order[i]]);
  }
  const Clock::time_point t0 = Clock::now();
  for (std::size_t i = 0; i < o.sample; ++i) {
    const std::optional<std::size_t> k = next(*s);
    if (!k) break;
    s->tell(*k, space.values[*k]);
  }
  return seconds(Clock::now() - t0) * 100.0 / static_cast<double>(o.sample);
}

void print_row(const std::string& name, const std::vector<double>& v) {
  std::printf("%-22s", name.c_str());
  for (double x : v)
    std::printf(" %11.4f", x);
  std::printf("\n");
}

void print_header(const SpeedOptions& o) {
  std::printf("%-22s", "");
  for (std::size_t at : o.at)
    std::printf(" %11s", fmt::format("at {}", at).c_str());
  std::printf("\n");
}

}  // namespace

int run_speed(const SpeedOptions& o) {
  const Synthetic space;
  std::size_t invalid = 0;
  for (const auto& v : space.values)
    invalid += v ? 0 : 1;
  std::printf(
      "strategy time on a synthetic space of %zu configs (%zu invalid): CPU seconds of the "
      "strategy's own calls per 100 proposals, after as many outcomes as the columns say (%zu "
      "proposals timed each)\n",
      space.configs.size(), invalid, o.sample);
  std::printf(
      "a run (each proposal told before the next; batch %zu: %zu pending, the oldest "
      "told first):\n",
      o.batch, o.batch);
  print_header(o);
  for (const std::string& name : o.strategies) {
    print_row(name, time_run(space, name, 1, o));
    if (name == "bayes" && o.batch > 1)
      print_row(fmt::format("bayes, batch {}", o.batch), time_run(space, name, o.batch, o));
  }
  if (o.before) {
    std::printf(
        "bayes before and now (the outcomes of random configs told first, then "
        "proposals timed):\n");
    print_header(o);
    std::vector<double> before, now, ratio;
    for (std::size_t at : o.at) {
      before.push_back(time_after(
          space, at, o, [&] { return make_bayes_before(space.index, settings_of("bayes")); },
          [](OneAtATime& s) { return s.next(); }));
      now.push_back(time_after(
          space, at, o, [&] { return make_strategy(settings_of("bayes"), space.index); },
          [](Strategy& s) { return s.next(); }));
      ratio.push_back(before.back() / now.back());
    }
    print_row("bayes before", before);
    print_row("bayes now", now);
    std::printf("%-22s", "before / now");
    for (double r : ratio)
      std::printf(" %10.0fx", r);
    std::printf("\n");
  }
  return 0;
}

}  // namespace tune::bench
