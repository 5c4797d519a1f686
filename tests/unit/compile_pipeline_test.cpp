// The pipeline of a search (docs/search.md "The pipeline"), on the CPU with a fake compiler and
// a fake measurer: the strategy's proposals are compiled ahead and the first ready is measured;
// nothing is compiled that was not proposed; a resumed run replays the logged order of outcomes
// and proposes what the run it resumes proposed; the budget keeps room for the runoff.
#include <tuner/core/search/compile_ahead.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_dir.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;

std::vector<Config> grid(int n) {
  std::vector<Config> configs;
  for (int x = 0; x < n; ++x)
    for (int y = 0; y < n; ++y)
      configs.push_back(Config{{"X", x}, {"Y", y}});
  return configs;
}

// A measurer: each config's time is a smooth function of its params, so that outcomes teach the
// strategies something; each trial reports times as a worker does.
class FakeGpu : public Objective {
 public:
  explicit FakeGpu(std::vector<Config> configs) : configs_(std::move(configs)) {}
  const std::vector<Config>& configs() override { return configs_; }
  Trial measure(std::size_t index) override {
    const std::lock_guard<std::mutex> lock(mutex);
    measured.push_back(index);
    // grid(n) enumerates X then Y: index = x * n + y.
    const std::size_t n = static_cast<std::size_t>(std::lround(std::sqrt(configs_.size())));
    const double x = static_cast<double>(index / n);
    const double y = static_cast<double>(index % n);
    const double ms = 1.0 + (x - 3) * (x - 3) * 0.1 + (y - 5) * (y - 5) * 0.05;
    Trial t = Trial::measured(ms, ms * 0.9, 10);
    t.times = TrialTimes{0, 1, 1, 2, 4, 10};
    if (compile_costs) t.compile_s = 0.2 * std::pow(16.0, y / static_cast<double>(n - 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    return t;
  }
  bool has_runoff() override { return runoff_on; }
  std::optional<RunoffPairs> runoff(std::size_t, std::size_t) override {
    if (!runoff_on) return std::nullopt;
    ++runoffs;
    RunoffPairs p;
    for (int i = 0; i < 20; ++i) {
      p.incumbent_ms.push_back(1.0 + (i % 2) * 1e-4);
      p.challenger_ms.push_back(1.0 - (i % 2) * 1e-4);
    }
    return p;
  }

  std::mutex mutex;
  std::vector<std::size_t> measured;
  int sleep_ms = 0;
  bool compile_costs = false;  // trials say how long they compiled: 0.2 s to 3.2 s with Y
  bool runoff_on = false;
  int runoffs = 0;

 private:
  std::vector<Config> configs_;
};

// What the search asked of the objective, in order: each batch it prepared and gave back.
class Recorder : public ForwardingObjective {
 public:
  using ForwardingObjective::ForwardingObjective;
  void prepare(const std::vector<std::size_t>& indices) override {
    prepared.insert(prepared.end(), indices.begin(), indices.end());
    batches.push_back(indices);
    inner_.prepare(indices);
  }
  std::vector<std::size_t> prepared;
  std::vector<std::vector<std::size_t>> batches;
};

// A deterministic stand-in for "the first ready": the pending proposal with the shortest
// simulated compile (its index's hash), so that runs can be compared trial by trial.
// `cached(i)`: whether candidate i is in the kernel cache (none by default).
class SimulatedReady : public ForwardingObjective {
 public:
  SimulatedReady(Objective& inner, std::size_t window, bool first_only,
                 std::function<bool(std::size_t)> cached = {})
      : ForwardingObjective(inner),
        window_(window),
        first_only_(first_only),
        cached_(std::move(cached)) {}
  std::size_t window() override { return window_; }
  bool ready(std::size_t index) override { return cached_ && cached_(index); }
  std::size_t pick(const std::vector<std::size_t>& pending) override {
    most_pending = std::max(most_pending, pending.size());
    return pick_one(pending);
  }
  std::size_t most_pending = 0;  // the most proposals pending at a pick

 private:
  std::size_t pick_one(const std::vector<std::size_t>& pending) {
    if (first_only_) return 0;
    std::size_t best = 0;
    for (std::size_t p = 1; p < pending.size(); ++p)
      if (cost(pending[p]) < cost(pending[best])) best = p;
    return best;
  }
  static std::size_t cost(std::size_t i) { return (i * 2654435761u) % 97; }
  std::size_t window_;
  bool first_only_;
  std::function<bool(std::size_t)> cached_;
};

SearchSettings settings(const std::string& strategy, std::int64_t max_evals) {
  SearchSettings s;
  s.strategy = strategy;
  s.seed = 7;
  s.max_evals = max_evals;
  return s;
}

std::vector<std::string> ids(const Output& out) {
  std::vector<std::string> v;
  for (const Trial& t : out.trials)
    v.push_back(t.id());
  return v;
}

// The log at `from` as an interruption after `trials` trials leaves it, at `to`; `edit`, when
// given, changes each trial's line.
void cut_log(const fs::path& from, const fs::path& to, int trials,
             const std::function<void(nlohmann::json&)>& edit = {}) {
  std::ifstream in(from);
  std::ofstream cut(to);
  std::string line;
  for (int n = 0; n <= trials && std::getline(in, line); ++n) {
    if (n > 0 && edit) {
      nlohmann::json j = nlohmann::json::parse(line);
      edit(j);
      line = j.dump();
    }
    cut << line << "\n";
  }
}

TEST(CompilePipelineTest, TheFirstReadyProposalIsMeasuredAndOnlyProposalsAreCompiled) {
  FakeGpu gpu(grid(12));
  std::mutex m;
  std::vector<std::size_t> compiled;
  std::optional<std::size_t> slow;  // the first proposal: its compile takes 400 ms
  CompileAhead ahead(
      gpu.configs().size(),
      [&](std::size_t i) -> std::optional<std::string> {
        bool is_slow = false;
        {
          const std::lock_guard<std::mutex> lock(m);
          if (!slow) slow = i;
          is_slow = *slow == i;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(is_slow ? 400 : 5 + i % 4 * 10));
        const std::lock_guard<std::mutex> lock(m);
        compiled.push_back(i);
        return std::nullopt;
      },
      2);
  CompilePipeline pipeline(gpu, ahead, pipeline_window(2), [](std::size_t) { return false; });
  Recorder recorder(pipeline);
  result<Output> out = Autotuner("fake").search(settings("random", 30)).run_objective(recorder);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_EQ(out->trials.size(), 30u);
  ASSERT_FALSE(recorder.batches.empty());
  EXPECT_EQ(recorder.batches.front().size(), 4u);  // two threads, plus a look-ahead of two
  // Ready first: the slow first proposal did not hold the GPU; later proposals went before it.
  ASSERT_TRUE(slow);
  EXPECT_EQ(recorder.batches.front().front(), *slow);
  EXPECT_NE(gpu.measured.front(), *slow);
  // Nothing compiled that was not proposed, and no more than the window beyond what was measured.
  const std::set<std::size_t> proposed(recorder.prepared.begin(), recorder.prepared.end());
  for (std::size_t i : ahead.compiled())
    EXPECT_TRUE(proposed.contains(i)) << i;
  EXPECT_LE(ahead.compiled().size(), gpu.measured.size() + pipeline_window(2));
  EXPECT_LE(proposed.size(), gpu.measured.size() + pipeline_window(2));
  // The waits for the compiler are in the trials' times.
  double waited = 0;
  for (const Trial& t : out->trials)
    waited += t.times ? t.times->compile_wait_ms : 0;
  EXPECT_GT(waited, 0);
  EXPECT_GE(out->strategy_s, 0);
}

TEST(CompilePipelineTest, NothingIsCompiledForACachedProposal) {
  FakeGpu gpu(grid(4));
  std::atomic<int> compiles{0};
  CompileAhead ahead(
      gpu.configs().size(),
      [&](std::size_t) -> std::optional<std::string> {
        ++compiles;
        return std::nullopt;
      },
      2);
  CompilePipeline pipeline(gpu, ahead, 4, [](std::size_t i) { return i % 2 == 0; });
  result<Output> out = Autotuner("fake").search(settings("random", 16)).run_objective(pipeline);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_EQ(gpu.measured.size(), 16u);
  EXPECT_EQ(compiles.load(), 8);  // the odd ones only
}

// Same seed and same order of outcomes: the same proposals. A run resumed from the log of an
// interrupted one replays the logged outcomes in the log's order, whatever the objective would
// have picked, and then proposes what the uninterrupted run proposed. `bayes-cost`: bayes with
// `cost_weight`, told each trial's compile seconds, which the log keeps with the trial.
TEST(CompilePipelineTest, AResumedRunReplaysTheLoggedOrderAndProposesTheSame) {
  std::vector<std::string> plain_bayes;
  for (const std::string name : {"random", "anneal", "bayes", "bayes-cost"}) {
    SCOPED_TRACE(name);
    const bool costs = name == "bayes-cost";
    const std::string strategy = costs ? "bayes" : name;
    auto settings = [&](const std::string& s, std::int64_t max_evals) {
      SearchSettings out = tune::settings(s, max_evals);
      if (costs) out.options["cost_weight"] = 1;
      return out;
    };
    const fs::path dir = test::fresh_test_dir("CompilePipelineReplay" + name);
    FakeGpu whole_gpu(grid(8));
    whole_gpu.compile_costs = true;
    SimulatedReady whole(whole_gpu, 6, false);
    result<Output> a =
        Autotuner("fake").search(settings(strategy, 40)).log(dir / "a.jsonl").run_objective(whole);
    ASSERT_TRUE(a) << a.error().str();
    ASSERT_EQ(a->trials.size(), 40u);

    // The first 20 trials of the log, as an interruption leaves it.
    cut_log(dir / "a.jsonl", dir / "b.jsonl", 20);
    FakeGpu resumed_gpu(grid(8));
    resumed_gpu.compile_costs = true;
    SimulatedReady resumed(resumed_gpu, 6, false);
    result<Output> b = Autotuner("fake")
                           .search(settings(strategy, 40))
                           .log(dir / "b.jsonl")
                           .run_objective(resumed);
    ASSERT_TRUE(b) << b.error().str();
    EXPECT_EQ(b->resumed, 20u);
    EXPECT_EQ(resumed_gpu.measured.size(), 20u);
    EXPECT_EQ(ids(*b), ids(*a));

    // The whole log replayed by an objective that would pick otherwise: the same order.
    FakeGpu replay_gpu(grid(8));
    replay_gpu.compile_costs = true;
    SimulatedReady other(replay_gpu, 6, true);
    result<Output> c =
        Autotuner("fake").search(settings(strategy, 40)).log(dir / "a.jsonl").run_objective(other);
    ASSERT_TRUE(c) << c.error().str();
    EXPECT_TRUE(replay_gpu.measured.empty());
    EXPECT_EQ(ids(*c), ids(*a));
    // The compile seconds reached the strategy: with the weight, bayes proposed otherwise.
    if (name == "bayes") plain_bayes = ids(*a);
    if (costs) {
      EXPECT_NE(ids(*a), plain_bayes);
    }
  }
}

// The window is for the proposals that need a compile. With every candidate in the kernel
// cache, the strategy is asked as with a window of two (one measured, one beside it): as
// informed as one at a time, not a window's worth behind; each trial is logged as `cached`.
TEST(CompilePipelineTest, ACachedSpaceIsSearchedWithTheStrategyInformed) {
  for (const std::string name : {"anneal", "bayes"}) {
    SCOPED_TRACE(name);
    auto run = [&](std::size_t window, bool cached, const fs::path& log) {
      FakeGpu gpu(grid(8));
      SimulatedReady objective(gpu, window, true, [cached](std::size_t) { return cached; });
      result<Output> out =
          Autotuner("fake").search(settings(name, 30)).log(log).run_objective(objective);
      EXPECT_TRUE(out) << out.error().str();
      return std::pair{out ? ids(*out) : std::vector<std::string>{}, objective.most_pending};
    };
    const fs::path dir = test::fresh_test_dir("CompilePipelineCached" + name);
    const auto [cached, cached_pending] = run(6, true, dir / "cached.jsonl");
    const auto [two, two_pending] = run(2, false, dir / "two.jsonl");
    const auto [six, six_pending] = run(6, false, dir / "six.jsonl");
    ASSERT_EQ(cached.size(), 30u);
    EXPECT_EQ(cached, two);
    EXPECT_NE(cached, six);  // a window of six that must compile proposes otherwise
    EXPECT_EQ(cached_pending, 2u);
    EXPECT_EQ(six_pending, 6u);
    std::ifstream in(dir / "cached.jsonl");
    std::string line;
    std::getline(in, line);  // the header
    int lines = 0;
    while (std::getline(in, line)) {
      ++lines;
      EXPECT_NE(line.find("\"cached\":true"), std::string::npos) << line;
    }
    EXPECT_EQ(lines, 30);
  }
}

// Some candidates in the cache, some not: a resumed run counts each logged proposal as the run it
// resumes did (its log's `cached`), although the cache now has every candidate that run measured,
// and so proposes what the uninterrupted run proposed.
TEST(CompilePipelineTest, AResumedRunCountsCachedProposalsAsTheRunItResumed) {
  for (const std::string name : {"anneal", "bayes"}) {
    SCOPED_TRACE(name);
    const fs::path dir = test::fresh_test_dir("CompilePipelineCachedReplay" + name);
    auto in_cache = [](std::size_t i) { return i % 3 == 0; };
    FakeGpu whole_gpu(grid(8));
    SimulatedReady whole(whole_gpu, 6, false, in_cache);
    result<Output> a =
        Autotuner("fake").search(settings(name, 40)).log(dir / "a.jsonl").run_objective(whole);
    ASSERT_TRUE(a) << a.error().str();
    ASSERT_EQ(a->trials.size(), 40u);
    std::size_t cached = 0;
    for (const Trial& t : a->trials)
      cached += t.cached ? 1 : 0;
    EXPECT_GT(cached, 0u);
    EXPECT_LT(cached, 40u);

    cut_log(dir / "a.jsonl", dir / "b.jsonl", 20);
    std::set<std::size_t> measured(whole_gpu.measured.begin(), whole_gpu.measured.begin() + 20);
    FakeGpu resumed_gpu(grid(8));
    SimulatedReady resumed(resumed_gpu, 6, false, [&](std::size_t i) {
      return in_cache(i) || measured.contains(i);  // what the first run compiled is cached now
    });
    result<Output> b =
        Autotuner("fake").search(settings(name, 40)).log(dir / "b.jsonl").run_objective(resumed);
    ASSERT_TRUE(b) << b.error().str();
    EXPECT_EQ(b->resumed, 20u);
    EXPECT_EQ(ids(*b), ids(*a));
  }
}

// A trial a merge brought from a shard's log says how that shard's search counted it: a resumed
// run counts it as needing a compile, as a log without the mark reads.
TEST(CompilePipelineTest, AShardsMarkOfACachedProposalCountsNothingHere) {
  const fs::path dir = test::fresh_test_dir("CompilePipelineShardCached");
  auto search_ids = [](const Output& out) {
    std::vector<std::string> v;
    for (const Trial& t : out.trials)
      if (t.phase == Phase::search) v.push_back(t.id());
    return v;
  };
  FakeGpu whole_gpu(grid(8));
  SimulatedReady whole(whole_gpu, 6, false);
  result<Output> a =
      Autotuner("fake").search(settings("bayes", 40)).log(dir / "a.jsonl").run_objective(whole);
  ASSERT_TRUE(a) << a.error().str();
  // The first 20 trials, each marked as a shard's and as needing no compile there.
  cut_log(dir / "a.jsonl", dir / "b.jsonl", 20, [](nlohmann::json& j) {
    j["shard"] = "1/2";
    j["cached"] = true;
  });
  FakeGpu resumed_gpu(grid(8));
  SimulatedReady resumed(resumed_gpu, 6, false);
  result<Output> b =
      Autotuner("fake").search(settings("bayes", 40)).log(dir / "b.jsonl").run_objective(resumed);
  ASSERT_TRUE(b) << b.error().str();
  EXPECT_GE(b->resumed, 19u);  // the shard's best is measured here to check it, not adopted
  EXPECT_EQ(search_ids(*b), search_ids(*a));
}

// The objective's calls in order: "p<n>" for a batch of n prepared, "m" for a measurement.
class Events : public ForwardingObjective {
 public:
  Events(Objective& inner, std::size_t window) : ForwardingObjective(inner), window_(window) {}
  std::size_t window() override { return window_; }
  void prepare(const std::vector<std::size_t>& indices) override {
    events.push_back("p" + std::to_string(indices.size()));
  }
  std::size_t pick(const std::vector<std::size_t>&) override { return 0; }
  Trial measure(std::size_t index) override {
    events.push_back("m");
    return inner_.measure(index);
  }
  std::vector<std::string> events;

 private:
  std::size_t window_;
};

// With a window of two or more the strategy is told an outcome, and tops the batch up, while the
// next pending proposal is measured: the batch that follows the first outcome is prepared after
// the second measurement began. With a window of one: propose, measure, tell, one after another.
TEST(CompilePipelineTest, TheStrategyThinksWhileTheNextProposalIsMeasured) {
  for (const std::string name : {"random", "bayes"}) {
    SCOPED_TRACE(name);
    FakeGpu gpu(grid(8));
    gpu.sleep_ms = 5;
    Events overlapped(gpu, 4);
    result<Output> out = Autotuner("fake").search(settings(name, 12)).run_objective(overlapped);
    ASSERT_TRUE(out) << out.error().str();
    ASSERT_EQ(out->trials.size(), 12u);
    std::vector<std::string> expected{"p4", "m", "m"};
    for (int i = 2; i < 12; ++i) {
      expected.push_back("p1");
      expected.push_back("m");
    }
    EXPECT_EQ(overlapped.events, expected);
    EXPECT_LE(out->strategy_wait_s, out->strategy_s);

    FakeGpu gpu1(grid(8));
    Events sequential(gpu1, 1);
    out = Autotuner("fake").search(settings(name, 12)).run_objective(sequential);
    ASSERT_TRUE(out) << out.error().str();
    expected.clear();
    for (int i = 0; i < 12; ++i) {
      expected.push_back("p1");
      expected.push_back("m");
    }
    EXPECT_EQ(sequential.events, expected);
    EXPECT_DOUBLE_EQ(out->strategy_wait_s, out->strategy_s);
  }
}

// The strategy beside the measurements or between them: the same calls, so when the oldest
// pending proposal is always measured next, the same configs in the same order.
TEST(CompilePipelineTest, BesideOrBetweenTheMeasurementsTheStrategyProposesTheSame) {
  for (const std::string name : {"random", "anneal", "bayes"}) {
    SCOPED_TRACE(name);
    std::vector<std::vector<std::string>> runs;
    for (const bool beside : {true, false}) {
      FakeGpu gpu(grid(8));
      Events events(gpu, 6);
      result<Output> out =
          Autotuner("fake").search(settings(name, 30)).think_beside(beside).run_objective(events);
      ASSERT_TRUE(out) << out.error().str();
      runs.push_back(ids(*out));
      // Between the measurements, each batch is prepared before the next measurement.
      if (!beside) {
        EXPECT_EQ(events.events[2], "p1");
      }
    }
    EXPECT_EQ(runs[0].size(), 30u);
    EXPECT_EQ(runs[0], runs[1]);
  }
}

TEST(CompilePipelineTest, TheBudgetKeepsRoomForTheRunoff) {
  FakeGpu gpu(grid(12));
  gpu.sleep_ms = 10;
  gpu.runoff_on = true;
  const auto t0 = std::chrono::steady_clock::now();
  result<Output> out =
      Autotuner("fake").search(settings("random", 1000)).budget(0.5).run_objective(gpu);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_TRUE(out->budget_exhausted);
  EXPECT_EQ(gpu.runoffs, 1);
  ASSERT_TRUE(out->runoff);
  EXPECT_FALSE(out->runoff_skipped);
  ASSERT_TRUE(out->runoff_reserve_s);
  // Each finalist: load 1 + setup 1 + warm-up 2 (twice) + timed 4 (twice): 14 ms, 28 ms both.
  EXPECT_NEAR(*out->runoff_reserve_s, 0.028, 1e-9);
  EXPECT_LT(took, 1.0);
}

}  // namespace
}  // namespace tune
