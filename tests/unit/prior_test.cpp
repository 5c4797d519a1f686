// Re-tunes that start from what was measured (docs/search.md "Re-tunes start from what was
// measured"): a stale log set aside as the prior, its best measured first, the strategies
// guided by it, the warm stop, and priors that cannot be used (another kernel, corrupt, configs
// no longer in the space, a best that is invalid now), none of which fails the run.
#include <tuner/core/search/prior.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include <sys/stat.h>

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/search/autotuner.hpp>
#include <tuner/core/search/trial_log.hpp>
#include <tuner/core/space/space.hpp>

#include "test_dir.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;

// A 16 x 16 space of (BM, BN) with a smooth bowl of times around (bm0, bn0).
std::vector<Config> grid_space() {
  std::vector<Config> out;
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n)
      out.push_back(Config{{"BM", 8 * (m + 1)}, {"BN", 8 * (n + 1)}});
  return out;
}

double bowl(const Config& c, int bm0, int bn0) {
  const double dm = static_cast<double>(c.find("BM")->as_int() - bm0) / 8.0;
  const double dn = static_cast<double>(c.find("BN")->as_int() - bn0) / 8.0;
  return 1.0 + 0.02 * (dm * dm + dn * dn);
}

std::string id(int bm, int bn) {
  return Config{{"BM", bm}, {"BN", bn}}.id();
}

// Scripted objective over grid_space(): a bowl, failures, a stop on one config.
class Bowl : public Objective {
 public:
  Bowl(int bm0, int bn0) : configs_(grid_space()), bm0_(bm0), bn0_(bn0) {}
  const std::vector<Config>& configs() override { return configs_; }
  Trial measure(std::size_t index) override {
    const std::string id = configs_.at(index).id();
    if (throw_on == id) throw std::runtime_error("interrupted");
    measured.push_back(id);
    if (auto it = failures.find(id); it != failures.end()) return Trial::invalid(it->second);
    const double ms = bowl(configs_[index], bm0_, bn0_);
    return Trial::measured(ms, ms * 0.9, 20);
  }

  std::vector<Config> configs_;
  int bm0_;
  int bn0_;
  std::map<std::string, std::string> failures;
  std::string throw_on;
  std::vector<std::string> measured;
};

class PriorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_test_dir("prior_test");
    log_ = dir_ / "b.trials.jsonl";
    prior_ = dir_ / "b.prior.jsonl";
  }
  void TearDown() override { fs::remove_all(dir_.parent_path()); }

  // The tune of kernel k, bucket b, for source `source`, with its prior at prior_.
  Autotuner tuner(const std::string& source, SearchSettings search = {}) {
    Autotuner t("k/b");
    t.log(log_).prior_log(prior_).source_hash(source).search(std::move(search));
    t.on_warning([this](const std::string& w) { warnings_.push_back(w); });
    return t;
  }
  Output run(Autotuner& t, Objective& objective) {
    result<Output> out = t.run_objective(objective);
    if (!out.has_value()) throw std::runtime_error(out.error().str());
    return std::move(*out);
  }
  // A full grid tune of v1, whose optimum is at (40, 48).
  void tune_v1() {
    Bowl v1(40, 48);
    Autotuner t = tuner("v1");
    Output out = run(t, v1);
    ASSERT_EQ(out.trials.size(), 256u);
    warnings_.clear();
  }
  nlohmann::json header() const {
    std::ifstream in(log_);
    std::string line;
    std::getline(in, line);
    return nlohmann::json::parse(line);
  }
  std::string all_warnings() const {
    std::string s;
    for (const std::string& w : warnings_)
      s += w + "\n";
    return s;
  }

  fs::path dir_;
  fs::path log_;
  fs::path prior_;
  std::vector<std::string> warnings_;
};

TEST_F(PriorTest, AStaleLogBecomesThePriorAndAWarmRetuneMeasuresItsBestFirst) {
  tune_v1();
  Bowl v2(48, 48);  // the optimum moved by one step
  Autotuner t = tuner("v2");
  t.require({Config{{"BM", 8}, {"BN", 8}}});
  Output out = run(t, v2);
  // The old log is the prior now, byte for byte; the new log names it.
  ASSERT_TRUE(fs::exists(prior_));
  EXPECT_EQ(read_log(prior_)->trials.size(), 256u);
  EXPECT_NE(all_warnings().find(fmt::format("{} was measured for another build (the kernel's "
                                            "sources changed; 256 trials); kept as the prior {}",
                                            log_.string(), prior_.string())),
            std::string::npos)
      << all_warnings();
  EXPECT_EQ(header()["prior"]["from"], prior_.string());
  EXPECT_EQ(header()["prior"]["configs"], 256);
  EXPECT_EQ(header()["prior"]["top_k"], 8);
  EXPECT_EQ(header()["source_hash"], "v2");
  // The incumbent, then the prior's best 8, ranked, then the strategy (grid, prior first).
  ASSERT_GT(out.trials.size(), 9u);
  EXPECT_EQ(out.trials[0].id(), id(8, 8));
  EXPECT_FALSE(out.trials[0].prior_rank);
  EXPECT_EQ(out.trials[1].id(), id(40, 48));
  EXPECT_EQ(out.trials[1].prior_rank, 1);
  for (int i = 1; i <= 8; ++i)
    EXPECT_TRUE(out.trials[static_cast<std::size_t>(i)].prior_rank) << i;
  EXPECT_FALSE(out.trials[9].prior_rank);
  // The warm stop: far fewer evaluations than the space, and still the new optimum.
  EXPECT_EQ(out.stopped_by, "warm");
  EXPECT_LT(out.trials.size(), 64u);
  EXPECT_EQ(out.best, (Config{{"BM", 48}, {"BN", 48}}));
  ASSERT_TRUE(out.prior);
  EXPECT_EQ(out.prior->top_k, 8u);
}

// What is measured before the strategy proposes goes to the objective in one batch before the
// first measurement, so that a compile pipeline compiles those side by side (on the H200 the
// prior's best 8 each waited for its own compile: 3 s of a 7 s re-tune).
class FirstBatch : public ForwardingObjective {
 public:
  using ForwardingObjective::ForwardingObjective;
  void prepare(const std::vector<std::size_t>& indices) override {
    if (measures == 0) before_first_measure.push_back(indices);
    inner_.prepare(indices);
  }
  Trial measure(std::size_t index) override {
    ++measures;
    return inner_.measure(index);
  }
  std::vector<std::vector<std::size_t>> before_first_measure;
  int measures = 0;
};

TEST_F(PriorTest, TheIncumbentsAndThePriorsBestArePreparedTogetherBeforeAnyMeasurement) {
  tune_v1();
  Bowl v2(48, 48);
  FirstBatch batch(v2);
  Autotuner t = tuner("v2");
  t.require({Config{{"BM", 8}, {"BN", 8}}});
  t.soft_incumbent(Config{{"BM", 40}, {"BN", 48}});  // also the prior's best: once
  Output out = run(t, batch);
  ASSERT_EQ(batch.before_first_measure.size(), 1u);
  std::vector<std::string> prepared;
  for (std::size_t i : batch.before_first_measure.front())
    prepared.push_back(v2.configs_.at(i).id());
  ASSERT_EQ(prepared.size(), 9u);  // the incumbent, then the prior's best 8
  EXPECT_EQ(prepared[0], id(8, 8));
  EXPECT_EQ(prepared[1], id(40, 48));
  // And they were measured in that order, the strategy's proposals after them.
  for (std::size_t i = 0; i < prepared.size(); ++i)
    EXPECT_EQ(out.trials.at(i).id(), prepared[i]) << i;
}

TEST_F(PriorTest, WithoutAPriorPlaceAStaleLogIsRefusedAsBefore) {
  tune_v1();
  Bowl v2(48, 48);
  Autotuner t("k/b");
  t.log(log_).source_hash("v2");
  result<Output> out = t.run_objective(v2);
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.error().str().find("source_hash 'v1' (log) vs 'v2' (this run)"), std::string::npos);
  EXPECT_FALSE(fs::exists(prior_));
}

TEST_F(PriorTest, AFullRetuneKeepsThePriorAsideAndDoesNotUseIt) {
  tune_v1();
  SearchSettings full;
  full.retune = "full";
  Bowl v2(48, 48);
  Autotuner t = tuner("v2", full);
  Output out = run(t, v2);
  EXPECT_TRUE(fs::exists(prior_));
  EXPECT_EQ(out.trials.size(), 256u);
  EXPECT_EQ(v2.measured.front(), id(8, 8));  // enumeration order
  EXPECT_FALSE(out.prior);
  EXPECT_TRUE(header()["prior"].is_null());
  for (const Trial& tr : out.trials)
    EXPECT_FALSE(tr.prior_rank);
}

TEST_F(PriorTest, APriorOfAnotherKernelIsNotUsed) {
  {
    Bowl other(40, 48);
    Autotuner t("other/b");
    t.log(prior_).source_hash("v1");
    run(t, other);
  }
  Bowl v2(48, 48);
  Autotuner t = tuner("v2");
  Output out = run(t, v2);
  EXPECT_NE(all_warnings().find(fmt::format("prior not used: {}:1: error: a log of kernel "
                                            "'other', not 'k': not a prior of this search",
                                            prior_.string())),
            std::string::npos)
      << all_warnings();
  EXPECT_FALSE(out.prior);
  EXPECT_EQ(out.trials.size(), 256u);
  EXPECT_EQ(out.best, (Config{{"BM", 48}, {"BN", 48}}));
}

TEST_F(PriorTest, ACorruptPriorIsNotUsed) {
  std::ofstream(prior_) << "{\"log_schema\": 1, \"tuner\": \n garbage\n";
  Bowl v2(48, 48);
  Autotuner t = tuner("v2");
  Output out = run(t, v2);
  EXPECT_NE(all_warnings().find(
                fmt::format("prior not used: {}:1: error: not a trial log", prior_.string())),
            std::string::npos)
      << all_warnings();
  EXPECT_FALSE(out.prior);
  EXPECT_EQ(out.best, (Config{{"BM", 48}, {"BN", 48}}));
}

TEST_F(PriorTest, APriorWithUnreadableLinesIsUsedWithoutThem) {
  tune_v1();
  fs::rename(log_, prior_);
  std::ofstream(prior_, std::ios::app) << "not json\n{\"config_id\": 3}\n";
  Bowl v2(48, 48);
  Autotuner t = tuner("v2");
  Output out = run(t, v2);
  ASSERT_TRUE(out.prior);
  EXPECT_EQ(out.prior->configs, 256u);
  EXPECT_NE(all_warnings().find(":258: warning: skipped a line that is not valid JSON"),
            std::string::npos)
      << all_warnings();
}

TEST_F(PriorTest, APriorOfConfigsNoLongerInTheSpaceSkipsThem) {
  tune_v1();
  // The space loses BM=40 (the prior's best row): the prior's best in the space come first.
  Bowl v2(48, 48);
  Autotuner t = tuner("v2");
  t.prune([](const Config& c) { return c.find("BM")->as_int() != 40; });
  Output out = run(t, v2);
  ASSERT_TRUE(out.prior);
  EXPECT_EQ(out.prior->configs, 240u);
  for (const Trial& tr : out.trials)
    EXPECT_NE(tr.config.find("BM")->as_int(), 40);
  EXPECT_EQ(out.trials[0].prior_rank, 2);  // rank 1, (40, 48), left the space
  EXPECT_EQ(out.best, (Config{{"BM", 48}, {"BN", 48}}));

  // A prior none of whose configs is in the space is not used.
  fs::remove(log_);
  Autotuner none = tuner("v3");
  none.prune([](const Config& c) { return c.find("BM")->as_int() > 200; });
  Bowl v3(48, 48);
  result<Output> empty = none.run_objective(v3);
  ASSERT_TRUE(empty.has_value());
  EXPECT_NE(all_warnings().find("none of its configs is in the space now"), std::string::npos)
      << all_warnings();
}

TEST_F(PriorTest, APriorWhoseBestIsInvalidNowDoesNotFailTheRun) {
  tune_v1();
  Bowl v2(40, 56);
  v2.failures = {{id(40, 48), "too many registers"}};
  Autotuner t = tuner("v2");
  Output out = run(t, v2);
  EXPECT_EQ(out.trials[0].id(), id(40, 48));
  EXPECT_FALSE(out.trials[0].is_measured());
  EXPECT_EQ(out.trials[0].prior_rank, 1);
  EXPECT_FALSE(out.incumbent_failure);
  EXPECT_EQ(out.best, (Config{{"BM", 40}, {"BN", 56}}));
}

TEST_F(PriorTest, AWarmRetuneResumesWhereItStopped) {
  tune_v1();
  // Uninterrupted, for reference (another folder).
  std::vector<std::string> reference;
  {
    const fs::path log = log_;
    const fs::path prior = prior_;
    log_ = dir_ / "ref" / "b.trials.jsonl";
    prior_ = dir_ / "ref" / "b.prior.jsonl";
    fs::create_directories(log_.parent_path());
    fs::copy_file(log, prior_);
    Bowl v2(48, 48);
    SearchSettings s;
    s.strategy = "anneal";
    Autotuner t = tuner("v2", s);
    run(t, v2);
    reference = v2.measured;
    log_ = log;
    prior_ = prior;
  }
  ASSERT_GT(reference.size(), 14u);
  SearchSettings s;
  s.strategy = "anneal";
  Bowl first(48, 48);
  first.throw_on = reference[12];  // stops inside the strategy's proposals
  Autotuner t = tuner("v2", s);
  EXPECT_THROW(t.run_objective(first), std::runtime_error);
  EXPECT_TRUE(fs::exists(prior_));
  Bowl second(48, 48);
  Output out = run(t, second);
  EXPECT_EQ(out.resumed, 12u);
  std::vector<std::string> all = first.measured;
  all.insert(all.end(), second.measured.begin(), second.measured.end());
  EXPECT_EQ(all, reference);
  EXPECT_EQ(header()["prior"]["from"], prior_.string());
}

TEST_F(PriorTest, AFallbackOfAnotherBucketIsUsedWhenTheBucketHasNone) {
  const fs::path other = dir_ / "other.trials.jsonl";
  {
    Bowl v1(40, 48);
    Autotuner t("k/other");
    t.log(other).source_hash("v2");
    run(t, v1);
  }
  Bowl here(40, 56);
  Autotuner t = tuner("v2");
  t.prior_fallbacks({dir_ / "missing.trials.jsonl", other});
  Output out = run(t, here);
  ASSERT_TRUE(out.prior);
  EXPECT_EQ(out.prior->from, other.string());
  EXPECT_EQ(out.prior->tuner, "k/other");
  EXPECT_EQ(out.trials[0].id(), id(40, 48));
  EXPECT_EQ(out.best, (Config{{"BM", 40}, {"BN", 56}}));
  // The other bucket's log as the bucket's own prior is another search's: not used.
  fs::remove(log_);
  fs::copy_file(other, prior_);
  Autotuner own = tuner("v2");
  Bowl again(40, 56);
  out = run(own, again);
  EXPECT_FALSE(out.prior);
  EXPECT_NE(all_warnings().find("a log of 'k/other', not 'k/b'"), std::string::npos)
      << all_warnings();
}

TEST_F(PriorTest, AHeaderOnlyStaleLogIsRemovedAndAnotherSearchsLogStillRefused) {
  {
    Bowl v1(40, 48);
    Autotuner t = tuner("v1");
    t.budget(0);
    run(t, v1);
  }
  Bowl v2(48, 48);
  Autotuner t = tuner("v2");
  run(t, v2);
  EXPECT_FALSE(fs::exists(prior_));
  EXPECT_NE(
      all_warnings().find("held no trial of this build (the kernel's sources changed); removed"),
      std::string::npos)
      << all_warnings();
  // Another arch is another search: refused, not set aside.
  Autotuner arch = tuner("v2");
  arch.arch("sm_100");
  Bowl v3(48, 48);
  result<Output> out = arch.run_objective(v3);
  ASSERT_FALSE(out.has_value());
  EXPECT_FALSE(fs::exists(prior_));
}

// What is at a prior's path and is no trial log is skipped with one warning naming it; the tune
// goes on without a prior (hostile-input N14). Nothing at the path at all says nothing.
TEST_F(PriorTest, APriorThatIsADirectoryIsSkippedWithAWarning) {
  fs::create_directories(prior_ / "inside");
  Bowl v2(48, 48);
  Autotuner t = tuner("v2");
  Output out = run(t, v2);
  EXPECT_FALSE(out.prior);
  EXPECT_EQ(out.best, (Config{{"BM", 48}, {"BN", 48}}));
  ASSERT_EQ(warnings_.size(), 1u) << all_warnings();
  EXPECT_EQ(warnings_[0], fmt::format("prior not used: {}: error: is a directory, not a trial "
                                      "log: remove it or move it away",
                                      prior_.string()));
}

TEST_F(PriorTest, APriorThatIsAFifoIsSkippedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(prior_.c_str(), 0644), 0);
  const fs::path fallback = dir_ / "fifo.trials.jsonl";
  ASSERT_EQ(::mkfifo(fallback.c_str(), 0644), 0);
  Bowl v2(48, 48);
  Autotuner t = tuner("v2");
  t.prior_fallbacks({fallback});
  Output out = run(t, v2);  // with no writer, an open that blocked would never return
  EXPECT_FALSE(out.prior);
  ASSERT_EQ(warnings_.size(), 2u) << all_warnings();
  for (const fs::path& p : {prior_, fallback})
    EXPECT_NE(all_warnings().find(fmt::format("prior not used: {}: error: is not a regular file (a "
                                              "FIFO, a device or a socket), not a trial log: "
                                              "remove it",
                                              p.string())),
              std::string::npos)
        << all_warnings();
  EXPECT_EQ(read_prior("/dev/null", "k/b", false, false).error().message,
            "is not a regular file (a FIFO, a device or a socket), not a trial log: remove it");
}

TEST_F(PriorTest, ADanglingLinkAsAPriorIsSkippedWithAWarning) {
  fs::create_symlink(dir_ / "gone.trials.jsonl", prior_);
  Bowl v2(48, 48);
  Autotuner t = tuner("v2");
  t.prior_fallbacks({dir_ / "missing.trials.jsonl"});  // nothing there: no warning
  Output out = run(t, v2);
  EXPECT_FALSE(out.prior);
  ASSERT_EQ(warnings_.size(), 1u) << all_warnings();
  EXPECT_EQ(warnings_[0], fmt::format("prior not used: {}: error: is a symbolic link to '{}', "
                                      "which does not exist: remove the link",
                                      prior_.string(), (dir_ / "gone.trials.jsonl").string()));
  EXPECT_TRUE(prior_absent(dir_ / "missing.trials.jsonl"));
  EXPECT_FALSE(prior_absent(prior_));
}

// The size is checked before a byte is read (a sparse file: nothing is written).
TEST_F(PriorTest, APriorOverTheSizeLimitIsSkippedNamingItsSizeAndTheLimit) {
  tune_v1();
  fs::rename(log_, prior_);
  fs::resize_file(prior_, max_prior_bytes + 1);  // its trials, then zeros without a newline
  Bowl v2(48, 48);
  Autotuner t = tuner("v2");
  Output out = run(t, v2);
  EXPECT_FALSE(out.prior);
  ASSERT_EQ(warnings_.size(), 1u) << all_warnings();
  EXPECT_EQ(warnings_[0], fmt::format("prior not used: {}: error: the file is {} bytes, more than "
                                      "the 256 MiB a prior may hold",
                                      prior_.string(), max_prior_bytes + 1));
  fs::resize_file(prior_, max_prior_bytes);  // at the limit it is read (the zeros: a torn line)
  EXPECT_TRUE(read_prior(prior_, "k/b", false, false).has_value());
}

// A run never takes the log it writes as its prior (hostile-input N19): `[search] prior =
// "bucket:b"` in bucket b names its own log, and a link at the prior's place may lead to it.
// Compared as files (device and inode), not by name.
TEST_F(PriorTest, TheLogARunWritesIsNotItsOwnPrior) {
  tune_v1();
  auto own_log = [&] {
    return fmt::format(
        "is the same file as '{}', the log this run writes: a log is not its own "
        "prior (when [search] prior names this bucket or this arch, name another)",
        log_.string());
  };
  const fs::path link = dir_ / "link.trials.jsonl";
  fs::create_symlink(log_, link);
  for (const fs::path& fallback : {log_, link}) {
    warnings_.clear();
    Bowl same(40, 48);
    Autotuner t = tuner("v1");  // the same source: the log is resumed, not set aside
    t.prior_fallbacks({fallback});
    Output out = run(t, same);
    EXPECT_FALSE(out.prior) << fallback;
    EXPECT_EQ(out.resumed, 256u);
    ASSERT_EQ(warnings_.size(), 1u) << all_warnings();
    EXPECT_EQ(warnings_[0],
              fmt::format("prior not used: {}: error: {}", fallback.string(), own_log()));
  }
  // A hard link at the bucket's own prior.
  fs::create_hard_link(log_, prior_);
  warnings_.clear();
  Bowl same(40, 48);
  Autotuner t = tuner("v1");
  Output out = run(t, same);
  EXPECT_FALSE(out.prior);
  ASSERT_EQ(warnings_.size(), 1u) << all_warnings();
  EXPECT_EQ(warnings_[0], fmt::format("prior not used: {}: error: {}", prior_.string(), own_log()));
  // The same file is a prior of another run.
  EXPECT_TRUE(read_prior(prior_, "k/b", false, false).has_value());
}

// A prior is read a line at a time and keeps each config's best: many lines of few configs give
// few entries (hostile-input N13; tests/cli/stream_cli.py measures the memory of `tuner status`).
// An adopted trial that a later measurement checked does not count, wherever the check is.
TEST_F(PriorTest, APriorOfManyLinesKeepsEachConfigsBest) {
  auto line = [](int bm, double ms, Phase phase = Phase::search) {
    Trial t = Trial::measured(ms, ms * 0.9, 20);
    t.config = Config{{"BM", bm}, {"BN", 8}};
    t.phase = phase;
    return to_json_line(t) + "\n";
  };
  {
    std::ofstream out(prior_);
    out << R"({"arch":"sm_90","log_schema":1,"objective":"minimize","space_hash":"h",)"
        << R"("source_hash":"v1","toolchain":null,"tuner":"k/b"})"
        << "\n";
    Trial adopted = Trial::measured(0.5, 0.45, 20);
    adopted.config = Config{{"BM", 16}, {"BN", 8}};
    adopted.remote = "gpu-b";
    out << to_json_line(adopted) << "\n";
    out << line(24, 0.1, Phase::runoff);  // runoffs are left out
    for (int n = 0; n < 30000; ++n) {
      out << line(8, 1.0 + (n % 7) / 10.0);
      out << line(24, 0.9 + (n % 3) / 10.0);
      if (n % 2000 == 0) out << "not json\n";  // 15 of them
    }
    out << line(32, 1.5) << line(40, 1.5);  // a tie: the first logged first
    Trial check = Trial::measured(0.8, 0.7, 20);
    check.config = Config{{"BM", 16}, {"BN", 8}};
    check.checks = AdoptedCheck{"the remote store (measured on gpu-b)", 0.5, false};
    out << to_json_line(check) << "\n";
    Trial invalid = Trial::invalid("too many registers");
    invalid.config = Config{{"BM", 48}, {"BN", 8}};
    out << to_json_line(invalid) << "\n";
    out << R"({"config_id": "BM=56,BN=8", "sta)";  // torn: no newline
  }
  result<Prior> p = read_prior(prior_, "k/b", false, false);
  ASSERT_TRUE(p.has_value()) << p.error().str();
  std::vector<std::pair<std::string, double>> ranked;
  for (const auto& [config, ms] : p->ranked)
    ranked.emplace_back(config.id(), ms);
  EXPECT_EQ(ranked, (std::vector<std::pair<std::string, double>>{{"BM=16,BN=8", 0.8},
                                                                 {"BM=24,BN=8", 0.9},
                                                                 {"BM=8,BN=8", 1.0},
                                                                 {"BM=32,BN=8", 1.5},
                                                                 {"BM=40,BN=8", 1.5}}));
  // The first skipped lines one by one, then a count of the rest (the torn line among them).
  ASSERT_EQ(p->warnings.size(), max_prior_warnings + 1) << fmt::format("{}", p->warnings.size());
  EXPECT_EQ(p->warnings[0],
            fmt::format("{}:6: warning: skipped a line that is not valid JSON", prior_.string()));
  EXPECT_EQ(p->warnings.back(), fmt::format("{}: warning: skipped 6 more lines that do not read "
                                            "(only the first 10 are named)",
                                            prior_.string()));
}

// Each strategy reaches the new optimum, one step from the prior's, in a small share of the
// space; without the prior, grid needs most of it.
TEST_F(PriorTest, EveryStrategyWithAPriorFindsANearbyOptimumQuickly) {
  for (const char* name : {"grid", "random", "anneal", "bayes"}) {
    log_ = dir_ / fmt::format("{}.trials.jsonl", name);
    prior_ = dir_ / fmt::format("{}.prior.jsonl", name);
    {
      Bowl v1(40, 48);
      Autotuner t = tuner("v1");
      run(t, v1);
    }
    SearchSettings s;
    s.strategy = name;
    s.seed = 3;
    Bowl v2(48, 48);
    Autotuner t = tuner("v2", s);
    Output out = run(t, v2);
    EXPECT_EQ(out.best, (Config{{"BM", 48}, {"BN", 48}})) << name;
    EXPECT_LT(out.trials.size(), 64u) << name;
    EXPECT_EQ(out.stopped_by, "warm") << name;
  }
}

}  // namespace
}  // namespace tune
