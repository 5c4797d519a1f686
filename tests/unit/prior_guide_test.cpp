// The prior as the strategies follow it (tuner/core/search/prior_guide.hpp): probes show every
// param value once, the correction learns how the change moved times along one param, and the
// strategies that follow it find an optimum the change moved far down the prior's ranking.
#include <tuner/core/search/prior_guide.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace tune {
namespace {

constexpr int tiles[] = {16, 32, 64, 128, 256, 512};
constexpr int warps[] = {1, 2, 4, 8, 16, 32};
constexpr int stages[] = {2, 3, 4};

// TILE x WARPS x STAGES: 108 configs.
std::vector<Config> space_configs() {
  std::vector<Config> out;
  for (int t : tiles)
    for (int w : warps)
      for (int s : stages)
        out.push_back(Config{{"STAGES", s}, {"TILE", t}, {"WARPS", w}});
  return out;
}

int position(const int* list, std::size_t n, long v) {
  return static_cast<int>(std::find(list, list + n, v) - list);
}

// Log times: a bowl over TILE (best 64) and WARPS (best 4), plus a cost per stage count. The
// old kernel liked 4 stages; the new one, with another stage scheme, likes 2, and is a little
// slower everywhere.
double log_time(const Config& c, bool changed) {
  const double t = position(tiles, 6, *c.int_param("TILE")) - 2;
  const double w = position(warps, 6, *c.int_param("WARPS")) - 2;
  const long s = *c.int_param("STAGES");
  const double old_stage = s == 4 ? 0.0 : s == 3 ? 0.13 : 0.31;
  const double new_stage = s == 2 ? 0.0 : s == 3 ? 0.21 : 0.43;
  return 0.07 * t * t + 0.05 * w * w + 0.004 * t + 0.003 * w +
         (changed ? 0.05 + new_stage : old_stage);
}

class PriorGuideTest : public ::testing::Test {
 protected:
  PriorGuideTest() : configs_(space_configs()), space_(configs_) {
    for (const Config& c : configs_) {
      prior_.push_back(log_time(c, false));
      now_.push_back(log_time(c, true));
    }
    ranked_ = prior_ranking(prior_);
    optimum_ = static_cast<std::size_t>(std::min_element(now_.begin(), now_.end()) - now_.begin());
  }

  std::size_t prior_rank(std::size_t k) const {
    return static_cast<std::size_t>(std::find(ranked_.begin(), ranked_.end(), k) -
                                    ranked_.begin()) +
           1;
  }

  std::vector<Config> configs_;
  SpaceIndex space_;
  PriorValues prior_;
  std::vector<double> now_;
  std::vector<std::size_t> ranked_;
  std::size_t optimum_ = 0;
};

TEST_F(PriorGuideTest, TheChangeMovedTheOptimumFarDownThePriorsRanking) {
  EXPECT_EQ(configs_[optimum_], (Config{{"STAGES", 2}, {"TILE", 64}, {"WARPS", 4}}));
  EXPECT_GT(prior_rank(optimum_), 20u);
}

TEST_F(PriorGuideTest, ProbesShowEveryValueOnceThenTheCorrectedOrderFollows) {
  PriorGuide guide(space_, prior_);
  Ledger ledger(space_.size());
  std::set<std::pair<std::size_t, int>> shown;
  auto tell = [&](std::size_t k) {
    ledger.propose(k);
    ledger.tell(k, now_[k]);
    guide.tell(k, now_[k]);
    for (std::size_t d = 0; d < space_.dims(); ++d)
      shown.emplace(d, space_.coords(k)[d]);
  };
  tell(ranked_[0]);  // the prior's best, measured before the strategy proposes
  std::size_t probes = 0;
  while (std::optional<std::size_t> k = guide.probe(ledger)) {
    const std::size_t before = shown.size();
    tell(*k);
    EXPECT_GT(shown.size(), before) << "a probe that shows no new value: " << configs_[*k].id();
    ++probes;
  }
  EXPECT_EQ(shown.size(), 6u + 6u + 3u);  // every value of every param
  EXPECT_LE(probes, 5u + 5u + 2u);
  // The correction: the optimum's stage count, seen once, moved it most of the way from where
  // the prior and the common shift alone put it.
  const double plain = *prior_[optimum_] + guide.shift();
  EXPECT_LT(std::abs(*guide.corrected(optimum_) - now_[optimum_]),
            0.2 * std::abs(plain - now_[optimum_]));
  EXPECT_EQ(guide.next(ledger), guide.best_open(ledger));
}

TEST_F(PriorGuideTest, TheCorrectedOrderReachesTheMovedOptimumSoon) {
  PriorGuide guide(space_, prior_);
  Ledger ledger(space_.size());
  std::size_t evaluations = 0;
  while (!ledger.told(optimum_)) {
    const std::optional<std::size_t> k = guide.next(ledger);
    ASSERT_TRUE(k);
    ledger.propose(*k);
    ledger.tell(*k, now_[*k]);
    guide.tell(*k, now_[*k]);
    ++evaluations;
  }
  // The probes (at most 13 with the prior's best) and a step or two of the corrected order,
  // against the rank the prior alone gives it.
  EXPECT_LE(evaluations, 15u);
  EXPECT_LT(2 * evaluations, prior_rank(optimum_));
}

TEST_F(PriorGuideTest, InvalidOutcomesShowValuesButCorrectNothingAndATwiceToldCountsOnce) {
  PriorGuide guide(space_, prior_);
  Ledger ledger(space_.size());
  const std::size_t best = ranked_[0];
  guide.tell(best, now_[best]);
  const double once = *guide.corrected(optimum_);
  guide.tell(best, now_[best] + 1.0);  // told again: ignored
  EXPECT_EQ(*guide.corrected(optimum_), once);
  // An invalid config shows its values: no probe for them, and no correction.
  const std::size_t other = ranked_.back();
  guide.tell(other, std::nullopt);
  EXPECT_EQ(*guide.corrected(optimum_), once);
  ledger.propose(best);
  ledger.tell(best, now_[best]);
  ledger.propose(other);
  ledger.tell(other, std::nullopt);
  const std::optional<std::size_t> probe = guide.probe(ledger);
  ASSERT_TRUE(probe);
  for (std::size_t d = 0; d < space_.dims(); ++d)
    if (space_.coords(*probe)[d] == space_.coords(other)[d] &&
        space_.coords(*probe)[d] != space_.coords(best)[d])
      ADD_FAILURE() << "probes a value the invalid config showed: " << configs_[*probe].id();
}

TEST_F(PriorGuideTest, WithoutAPriorItProposesNothing) {
  PriorGuide guide(space_, {});
  Ledger ledger(space_.size());
  EXPECT_TRUE(guide.empty());
  guide.tell(0, 1.0);
  EXPECT_EQ(guide.next(ledger), std::nullopt);
  EXPECT_EQ(guide.corrected(0), std::nullopt);
  EXPECT_THROW(PriorGuide(space_, PriorValues(3, 1.0)), std::exception);
}

// The strategies that follow the prior (grid and random), walk by it (anneal) or take it as their
// mean (bayes) find the moved optimum in a small share of the space, where the prior's plain
// ranking would take many more; the same seed gives the same sequence.
TEST_F(PriorGuideTest, StrategiesWithThePriorFindTheMovedOptimumSoon) {
  for (const char* name : {"grid", "random", "anneal", "bayes"}) {
    SearchSettings s;
    s.strategy = name;
    s.seed = 5;
    auto run = [&] {
      std::unique_ptr<Strategy> strategy = make_strategy(s, space_, prior_);
      std::vector<std::size_t> sequence;
      while (sequence.empty() || sequence.back() != optimum_) {
        const std::optional<std::size_t> k = strategy->next();
        if (!k) break;
        sequence.push_back(*k);
        strategy->tell(*k, now_[*k]);
      }
      return sequence;
    };
    const std::vector<std::size_t> sequence = run();
    ASSERT_FALSE(sequence.empty()) << name;
    EXPECT_EQ(sequence.back(), optimum_) << name;
    EXPECT_LE(sequence.size(), 18u) << name;
    EXPECT_EQ(run(), sequence) << name;
  }
}

}  // namespace
}  // namespace tune
