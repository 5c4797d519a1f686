// The faster tune on CPU: bucket-fixture failures through the supervisor (one failure for the
// bucket, nothing logged), per-trial times through the protocol and the log (old lines still
// read), the tune's overhead summary, and compile-ahead (order, jumping the queue, errors).
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <tuner/core/search/compile_ahead.hpp>
#include <tuner/core/search/overhead.hpp>
#include <tuner/core/search/supervisor.hpp>
#include <tuner/core/search/worker_protocol.hpp>
#include <tuner/core/tune/kernel_tune.hpp>

namespace tune {
namespace {

// A worker whose answers carry times; with `fixture_failure` set every answer says so.
struct Script {
  std::optional<std::string> fixture_failure;
  std::optional<std::string> harness_failure;
  int started = 0;
  int measured = 0;
};

class TimedWorker : public WorkerConnection {
 public:
  explicit TimedWorker(Script& script) : script_(script) {
    ++script_.started;
    WorkerHello h;
    h.ready = true;
    h.pid = 4242;
    h.device = "Fake GPU";
    lines_.push_back(encode(h));
  }
  pid_t pid() const override { return 4242; }
  bool send(std::string_view line) override {
    result<WorkerRequest> r = decode_request(line);
    EXPECT_TRUE(r);
    ++script_.measured;
    MeasureAnswer a;
    a.times = TrialTimes{5, 2, 3, 20, 100, 0};
    if (script_.fixture_failure) {
      a.state.value = InvalidState{*script_.fixture_failure};
      a.fixture_failure = script_.fixture_failure;
    } else if (script_.harness_failure) {
      a.state.value = InvalidState{*script_.harness_failure};
      a.harness_failure = script_.harness_failure;
    } else {
      a.state.value = MeasuredState{1.0, 0.9, 50};
    }
    lines_.push_back(encode(a));
    return true;
  }
  Subprocess::Read read(std::string& line, double) override {
    if (lines_.empty()) return Subprocess::Read::timeout;
    line = lines_.front();
    lines_.pop_front();
    return Subprocess::Read::line;
  }
  ExitStatus wait() override { return {}; }
  void kill() override {}
  bool running() override { return true; }
  std::string last_words() const override { return ""; }

 private:
  Script& script_;
  std::deque<std::string> lines_;
};

Supervisor make_supervisor(Script& script, std::size_t n) {
  std::vector<Config> configs;
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < n; ++i) {
    configs.push_back(Config{{"BLOCK", static_cast<std::int64_t>(32 << i)}});
    keys.push_back("key" + std::to_string(i));
  }
  return Supervisor(configs, keys, [&script] { return std::make_unique<TimedWorker>(script); }, {});
}

TEST(PipelineTest, TrialsCarryTheWorkersTimesAndTheWallTime) {
  Script script;
  Supervisor s = make_supervisor(script, 2);
  const Trial t = s.measure(0);
  ASSERT_TRUE(t.is_measured());
  ASSERT_TRUE(t.times);
  EXPECT_EQ(t.times->fixture_ms, 5);
  EXPECT_EQ(t.times->load_ms, 2);
  EXPECT_EQ(t.times->setup_ms, 3);
  EXPECT_EQ(t.times->warmup_ms, 20);
  EXPECT_EQ(t.times->timed_ms, 100);
  EXPECT_GE(t.times->wall_ms, 0);
  // A skipped candidate costs no worker and still says how long the supervisor took.
  s.skip_when([](std::size_t) { return std::optional<std::string>("not compiled"); });
  const Trial skipped = s.measure(1);
  ASSERT_TRUE(skipped.times);
  EXPECT_EQ(skipped.times->timed_ms, 0);
}

TEST(PipelineTest, AFailingFixtureStopsTheBucketOnce) {
  Script script;
  script.fixture_failure = "the fixture failed: reference needs 'K'";
  Supervisor s = make_supervisor(script, 3);
  try {
    s.measure(0);
    FAIL() << "no FixtureFailure";
  } catch (const FixtureFailure& e) {
    EXPECT_STREQ(e.what(), "the fixture failed: reference needs 'K'");
  }
  EXPECT_EQ(script.measured, 1);  // the other candidates are never sent
  BucketResult r;
  r.fixture_failure = "the fixture failed: reference needs 'K'";
  EXPECT_EQ(describe_outcome(r),
            "error: the bucket's fixture failed, so every candidate is invalid: the fixture "
            "failed: reference needs 'K'");
  // The result file keeps it; one without the field still reads.
  result<BucketResult> back = [&] {
    r.kernel = "k";
    r.bucket = "b";
    r.arch = "sm_90";
    nlohmann::json j = r;
    BucketResult again;
    from_json(j, again);
    return result<BucketResult>(again);
  }();
  EXPECT_EQ(back->fixture_failure, r.fixture_failure);
}

TEST(PipelineTest, AHarnessFailureStopsTheBucketOnce) {
  Script script;
  script.harness_failure = "h.cpp:12: config 'B=1' has no value 'BLOK' (it has: B)";
  Supervisor s = make_supervisor(script, 3);
  try {
    s.measure(0);
    FAIL() << "no HarnessFailure";
  } catch (const HarnessFailure& e) {
    EXPECT_STREQ(e.what(), "h.cpp:12: config 'B=1' has no value 'BLOK' (it has: B)");
  }
  EXPECT_EQ(script.measured, 1);
  // Through the protocol: the field survives a round trip.
  MeasureAnswer a;
  a.state.value = InvalidState{"x"};
  a.harness_failure = "x";
  auto back = decode_measure_answer(encode(a));
  ASSERT_TRUE(back);
  EXPECT_EQ(std::get<MeasureAnswer>(*back).harness_failure, "x");
  BucketResult r;
  r.kernel = "k";
  r.bucket = "b";
  r.arch = "sm_90";
  r.harness_failure = *script.harness_failure;
  EXPECT_EQ(describe_outcome(r),
            "error: the harness fails the same way for every candidate, so the bucket stops at "
            "the first: h.cpp:12: config 'B=1' has no value 'BLOK' (it has: B); fix the harness "
            "and run again");
  nlohmann::json j = r;
  BucketResult again;
  from_json(j, again);
  EXPECT_EQ(again.harness_failure, r.harness_failure);
}

TEST(PipelineTest, TimesRoundTripThroughProtocolAndLog) {
  MeasureAnswer a;
  a.state.value = MeasuredState{1.5, 1.4, 10};
  a.times = TrialTimes{1, 2, 3, 4, 5, 6};
  const std::string line = encode(a);
  EXPECT_EQ(line.find("wall_ms"), std::string::npos);  // the supervisor's to measure
  auto back = decode_measure_answer(line);
  ASSERT_TRUE(back);
  const MeasureAnswer& m = std::get<MeasureAnswer>(*back);
  EXPECT_EQ(m.times, (TrialTimes{1, 2, 3, 4, 5, 0}));
  // An answer without times (a worker from before them) has none.
  auto old = decode_measure_answer(R"({"state":"measured","median_ms":1,"min_ms":1,"reps":3})");
  ASSERT_TRUE(old);
  EXPECT_FALSE(std::get<MeasureAnswer>(*old).times);

  Trial t = m.to_trial();
  t.config = Config{{"BLOCK", 64}};
  t.times->wall_ms = 40;
  const nlohmann::json j = to_json(t);
  EXPECT_EQ(j.at("times").at("wall_ms"), 40);
  result<Trial> read = trial_from_json(j);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->times, t.times);
  // A line from before the field reads as before.
  nlohmann::json before = j;
  before.erase("times");
  result<Trial> old_trial = trial_from_json(before);
  ASSERT_TRUE(old_trial);
  EXPECT_FALSE(old_trial->times);
  before["times"] = {{"timed_ms", -1}};
  result<Trial> bad = trial_from_json(before);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "'times.timed_ms' must be a non-negative number");

  // Compile seconds and the new times round-trip; an old line reads them as unset and zero.
  Trial costed = *old_trial;
  costed.compile_s = 4.25;
  costed.times = TrialTimes{};
  costed.times->strategy_ms = 1.5;
  costed.times->compile_wait_ms = 7;
  result<Trial> costed_back = trial_from_json(to_json(costed));
  ASSERT_TRUE(costed_back);
  EXPECT_EQ(*costed_back, costed);
  EXPECT_FALSE(old_trial->compile_s);
  nlohmann::json negative = to_json(costed);
  negative["compile_s"] = -1;
  ASSERT_FALSE(trial_from_json(negative));
  EXPECT_EQ(trial_from_json(negative).error().message,
            "'compile_s' must be a number of seconds in [0, 86400]");
  // 1e308 summed to inf and printed 300 digits: over a day is no compile time.
  negative["compile_s"] = 1e308;
  ASSERT_FALSE(trial_from_json(negative));
  negative["compile_s"] = 86400;
  EXPECT_TRUE(trial_from_json(negative));
}

TEST(PipelineTest, OverheadSummaryOfALog) {
  std::vector<Trial> trials(3);
  trials[0].times = TrialTimes{50, 5, 10, 20, 100, 200};
  trials[1].times = TrialTimes{0, 5, 10, 20, 100, 150};
  trials[2].times = TrialTimes{0, 5, 10, 20, 100, 150};
  trials.push_back(Trial{});  // from an old log: no times, not counted
  std::optional<OverheadSummary> s = summarize_overhead(trials);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->trials, 3u);
  EXPECT_DOUBLE_EQ(s->total.wall_ms, 500);
  EXPECT_DOUBLE_EQ(s->timed_share(), 0.6);
  EXPECT_DOUBLE_EQ(s->median_overhead_ms, 30);
  EXPECT_EQ(describe_overhead(*s),
            "gpu time: 60.0% of 0.5 s in timed reps (3 trials)\n"
            "per trial (median): setup 10.0 ms (fixture 0.0, load 5.0), warm-up 20.0 ms, timed "
            "100.0 ms, overhead 30.0 ms outside warm-up and timed reps");
  EXPECT_FALSE(summarize_overhead({Trial{}}));

  // The strategy's time, the waits for the compiler and the compile seconds: a third line.
  trials[0].times->strategy_ms = 1200;
  trials[1].times->compile_wait_ms = 3400;
  trials[0].compile_s = 2.5;
  trials[3].compile_s = 9.0;  // an old trial without times still says what it compiled in
  s = summarize_overhead(trials);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->compiled, 2u);
  EXPECT_DOUBLE_EQ(s->compile_s, 11.5);
  const std::string text = describe_overhead(*s);
  EXPECT_EQ(text.substr(text.rfind('\n') + 1),
            "strategy waits 1.2 s, compiler waits 3.4 s; compiles: 2 candidates, 11.5 s "
            "of compiler time (longest 9.0 s)");

  // Proposals the kernel cache had, which the search's window did not hold: counted on it.
  trials[1].cached = true;
  trials[2].cached = true;
  s = summarize_overhead(trials);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->cached, 2u);
  const std::string cached = describe_overhead(*s);
  EXPECT_EQ(cached.substr(cached.rfind('\n') + 1),
            "strategy waits 1.2 s, compiler waits 3.4 s; compiles: 2 candidates, 11.5 s "
            "of compiler time (longest 9.0 s); 2 proposals needed no compile (in the kernel "
            "cache)");
}

TEST(PipelineTest, TheWaitsForTheCompilerAreApartFromTheOverhead) {
  // A tune whose trials mostly wait for their compiles: 140 ms of each trial's 271 ms is the
  // compiler's, 11 ms is the trial's own overhead (worker, load, gate, protocol).
  std::vector<Trial> trials(3);
  for (Trial& t : trials) {
    t.times = TrialTimes{0, 2, 5, 20, 100, 271};
    t.times->compile_wait_ms = 140;
  }
  trials[2].times->compile_wait_ms = 0;  // its compile was ready
  trials[2].times->wall_ms = 131;
  trials[1].times->strategy_ms = 4;
  trials[1].times->wall_ms = 275;
  std::optional<OverheadSummary> s = summarize_overhead(trials);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->median_overhead_ms, 11);
  EXPECT_DOUBLE_EQ(s->median_waits_ms, 140);
  const std::string text = describe_overhead(*s);
  EXPECT_EQ(text.substr(0, text.find("\nstrategy waits")),
            "gpu time: 44.3% of 0.7 s in timed reps (3 trials)\n"
            "per trial (median): setup 5.0 ms (fixture 0.0, load 2.0), warm-up 20.0 ms, timed "
            "100.0 ms, waits 140.0 ms (compiler 140.0, strategy 0.0), overhead 11.0 ms outside "
            "warm-up, timed reps and waits");
}

TEST(PipelineTest, CompileAheadRunsInOrderAndLetsTheSearchJumpTheQueue) {
  std::mutex m;
  std::vector<std::size_t> began;
  std::atomic<int> running{0}, most{0};
  CompileAhead ahead(
      8,
      [&](std::size_t i) -> std::optional<std::string> {
        {
          const std::lock_guard<std::mutex> lock(m);
          began.push_back(i);
        }
        const int now = ++running;
        for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        --running;
        if (i == 5) throw error("nvcc not found");
        return i == 3 ? std::optional<std::string>("ptxas refused it") : std::nullopt;
      },
      2);
  ahead.start({0, 1, 2, 3, 4, 5});  // 6 and 7 are not expected: compiled only when asked
  EXPECT_EQ(ahead.wait(0), std::nullopt);
  EXPECT_EQ(ahead.wait(3), "ptxas refused it");
  EXPECT_EQ(ahead.wait(7), std::nullopt);  // asked, not queued: compiled next
  EXPECT_THROW(ahead.wait(5), error);
  EXPECT_EQ(ahead.wait(0), std::nullopt);  // done once, answered again
  EXPECT_LE(most.load(), 2);
  EXPECT_GE(ahead.finished(), 6u);
  const std::lock_guard<std::mutex> lock(m);
  EXPECT_EQ(std::set<std::size_t>(began.begin(), began.end()).count(6), 0u);
  EXPECT_EQ(began.size(), std::set<std::size_t>(began.begin(), began.end()).size());
}

TEST(PipelineTest, CompileJobsAreTheCoresButOneCappedByTheBuildAndSetByTheEnvironment) {
  ::unsetenv("TUNE_COMPILE_JOBS");
  const unsigned cores = std::thread::hardware_concurrency();
  const int all = static_cast<int>(cores > 1 ? cores - 1 : 1);
  EXPECT_EQ(compile_ahead_jobs(), all);
  EXPECT_EQ(compile_ahead_jobs(1), 1);
  EXPECT_EQ(compile_ahead_jobs(all + 10), all);
  ::setenv("TUNE_COMPILE_JOBS", "37", 1);
  EXPECT_EQ(compile_ahead_jobs(1), 37);  // the environment overrides the build's cap
  ::setenv("TUNE_COMPILE_JOBS", "none", 1);
  EXPECT_EQ(compile_ahead_jobs(1), 1);
  ::unsetenv("TUNE_COMPILE_JOBS");
}

TEST(PipelineTest, ThroughALauncherTheCompileJobsAskedForAreNotCappedByTheCores) {
  // A launcher (srun, icecream) may run the compiles on other hosts: --compile-jobs (the
  // build's TUNE_WARM_JOBS) is then the number, whatever this host's cores.
  ::unsetenv("TUNE_COMPILE_JOBS");
  const unsigned cores = std::thread::hardware_concurrency();
  const int all = static_cast<int>(cores > 1 ? cores - 1 : 1);
  EXPECT_EQ(compile_ahead_jobs(all + 10, true), all + 10);
  EXPECT_EQ(compile_ahead_jobs(1024, true), 1024);
  EXPECT_EQ(compile_ahead_jobs(1, true), 1);
  EXPECT_EQ(compile_ahead_jobs(std::nullopt, true), all);  // nothing asked: the cores but one
  ::setenv("TUNE_COMPILE_JOBS", "3", 1);
  EXPECT_EQ(compile_ahead_jobs(64, true), 3);  // the environment overrides, as without one
  ::unsetenv("TUNE_COMPILE_JOBS");
}

TEST(PipelineTest, TheQuickPresetShortensTheSearchOnly) {
  BenchSettings full;
  EXPECT_EQ(search_bench(full).rep_ms, 100);
  BenchSettings quick;
  quick.preset = "quick";
  const BenchSettings search = search_bench(quick);
  EXPECT_EQ(search.warmup_ms, 10);
  EXPECT_EQ(search.rep_ms, 20);
  EXPECT_EQ(search.min_reps, quick.min_reps);
  quick.rep_ms = 5;  // already shorter: kept
  EXPECT_EQ(search_bench(quick).rep_ms, 5);
}

}  // namespace
}  // namespace tune
