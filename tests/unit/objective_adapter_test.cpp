// ForwardingObjective, the base of the objective adapters (SharedTrials, a shard's search
// without its runoff): every virtual of Objective reaches the wrapped objective, with its
// arguments, and its answer comes back; an adapter changes only what it overrides.
#include <tuner/core/search/autotuner.hpp>

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tune {
namespace {

/// Answers every virtual of Objective with a value of its own and records each call with its
/// arguments.
class RecordingObjective : public Objective {
 public:
  RecordingObjective() : configs_{Config{{"BN", 64}}, Config{{"BN", 128}}} {}

  const std::vector<Config>& configs() override {
    calls.push_back("configs");
    return configs_;
  }
  Trial measure(std::size_t index) override {
    calls.push_back("measure " + std::to_string(index));
    return Trial::measured(2.5, 2.0, 7);
  }
  std::optional<double> budget_remaining() override {
    calls.push_back("budget_remaining");
    return 42.0;
  }
  std::optional<std::string> cache_key(std::size_t index) override {
    calls.push_back("cache_key " + std::to_string(index));
    return "key" + std::to_string(index);
  }
  std::optional<RunoffPairs> runoff(std::size_t incumbent, std::size_t challenger) override {
    calls.push_back("runoff " + std::to_string(incumbent) + " " + std::to_string(challenger));
    RunoffPairs p;
    p.incumbent_ms = {1.0};
    p.challenger_ms = {2.0};
    return p;
  }
  bool has_runoff() override {
    calls.push_back("has_runoff");
    return true;
  }
  std::size_t window() override {
    calls.push_back("window");
    return 6;
  }
  void prepare(const std::vector<std::size_t>& indices) override {
    calls.push_back("prepare " + std::to_string(indices.size()));
  }
  void drop(const std::vector<std::size_t>& indices) override {
    calls.push_back("drop " + std::to_string(indices.size()));
  }
  std::size_t pick(const std::vector<std::size_t>& pending) override {
    calls.push_back("pick " + std::to_string(pending.size()));
    return pending.size() - 1;
  }

  std::vector<std::string> calls;

 private:
  std::vector<Config> configs_;
};

TEST(ForwardingObjective, EveryVirtualReachesTheInnerObjective) {
  RecordingObjective inner;
  ForwardingObjective wrapper(inner);
  Objective& objective = wrapper;  // called as the search calls it

  EXPECT_EQ(&objective.configs(), &inner.configs());
  inner.calls.clear();
  EXPECT_EQ(objective.configs().size(), 2u);
  const Trial t = objective.measure(1);
  ASSERT_TRUE(t.is_measured());
  EXPECT_EQ(t.state.measured()->median_ms, 2.5);
  EXPECT_EQ(objective.budget_remaining(), 42.0);
  EXPECT_EQ(objective.cache_key(1), "key1");
  const std::optional<RunoffPairs> pairs = objective.runoff(0, 1);
  ASSERT_TRUE(pairs.has_value());
  EXPECT_EQ(pairs->challenger_ms, std::vector<double>{2.0});
  // The pipeline's virtuals (docs/search.md "The pipeline").
  EXPECT_TRUE(objective.has_runoff());
  EXPECT_EQ(objective.window(), 6u);
  objective.prepare({0, 1});
  objective.drop({1});
  EXPECT_EQ(objective.pick({0, 1, 0}), 2u);

  EXPECT_EQ(inner.calls, (std::vector<std::string>{"configs", "measure 1", "budget_remaining",
                                                   "cache_key 1", "runoff 0 1", "has_runoff",
                                                   "window", "prepare 2", "drop 1", "pick 3"}));
}

// An adapter as a shard's search uses one: no runoff, everything else the inner objective's.
class NoRunoff : public ForwardingObjective {
 public:
  using ForwardingObjective::ForwardingObjective;
  std::optional<RunoffPairs> runoff(std::size_t, std::size_t) override { return std::nullopt; }
};

TEST(ForwardingObjective, AnAdapterChangesOnlyWhatItOverrides) {
  RecordingObjective inner;
  NoRunoff adapter(inner);
  Objective& objective = adapter;
  EXPECT_FALSE(objective.runoff(0, 1).has_value());
  EXPECT_EQ(objective.budget_remaining(), 42.0);
  EXPECT_EQ(objective.cache_key(0), "key0");
  EXPECT_TRUE(objective.measure(0).is_measured());
  EXPECT_EQ(inner.calls,
            (std::vector<std::string>{"budget_remaining", "cache_key 0", "measure 0"}));
}

}  // namespace
}  // namespace tune
