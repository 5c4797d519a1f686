#include <tuner/core/scale/shard.hpp>

#include <fstream>
#include <numeric>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_dir.hpp"

namespace tune {
namespace {

// Every candidate of every bucket exactly once, over all shards, in order.
void expect_partition(const std::vector<std::size_t>& sizes, const ShardPlan& plan) {
  std::vector<std::size_t> next(sizes.size(), 0);
  for (const auto& shard : plan.shards)
    for (const ShardSlice& s : shard) {
      ASSERT_LT(s.bucket, sizes.size());
      EXPECT_EQ(s.first, next[s.bucket]);
      EXPECT_LT(s.first, s.end);
      next[s.bucket] = s.end;
    }
  EXPECT_EQ(next, sizes);
}

std::size_t load(const std::vector<ShardSlice>& shard) {
  std::size_t n = 0;
  for (const ShardSlice& s : shard)
    n += s.end - s.first;
  return n;
}

TEST(ShardTest, ParsesKOfN) {
  EXPECT_EQ(parse_shard("2/4").value(), (ShardSpec{2, 4}));
  EXPECT_EQ(parse_shard("1/1").value(), (ShardSpec{1, 1}));
  EXPECT_EQ(parse_shard("2/4").value().str(), "2/4");
  EXPECT_EQ(parse_shard("0/4").error().message,
            "bad shard '0/4': the index must be between 1 and 4");
  EXPECT_EQ(parse_shard("5/4").error().message,
            "bad shard '5/4': the index must be between 1 and 4");
  EXPECT_EQ(parse_shard("1/0").error().message,
            "bad shard '1/0': the shard count must be at least 1");
  EXPECT_EQ(parse_shard("4").error().message, "bad shard '4': expected K/N, e.g. '2/4'");
  EXPECT_EQ(parse_shard("1/ 2").error().message,
            "bad shard '1/ 2': expected K/N with whole numbers, e.g. '2/4'");
  EXPECT_FALSE(parse_shard("-1/2"));
}

TEST(ShardTest, SmallBucketsStayWhole) {
  const ShardPlan plan = plan_shards({7, 7}, 2);
  ASSERT_EQ(plan.shards.size(), 2u);
  EXPECT_EQ(plan.shards[0], (std::vector<ShardSlice>{{0, 0, 7}}));
  EXPECT_EQ(plan.shards[1], (std::vector<ShardSlice>{{1, 0, 7}}));
}

TEST(ShardTest, LargeBucketIsCutIntoSlices) {
  const ShardPlan plan = plan_shards({7, 7}, 3);
  EXPECT_EQ(plan.shards[0], (std::vector<ShardSlice>{{0, 0, 5}}));
  EXPECT_EQ(plan.shards[1], (std::vector<ShardSlice>{{0, 5, 7}, {1, 0, 2}}));
  EXPECT_EQ(plan.shards[2], (std::vector<ShardSlice>{{1, 2, 7}}));
  const ShardPlan one = plan_shards({3000}, 4);
  for (const auto& shard : one.shards)
    EXPECT_EQ(load(shard), 750u);
}

TEST(ShardTest, CutsMoveToANearBucketEdge) {
  // 100 candidates in 4 shards: the cut at 25 moves to the edge at 24 (tolerance 3), the one at
  // 50 stays inside the large bucket, the one at 75 moves to 77.
  const ShardPlan plan = plan_shards({24, 53, 23}, 4);
  expect_partition({24, 53, 23}, plan);
  EXPECT_EQ(plan.shards[0], (std::vector<ShardSlice>{{0, 0, 24}}));
  EXPECT_EQ(plan.shards[1], (std::vector<ShardSlice>{{1, 0, 26}}));
  EXPECT_EQ(plan.shards[2], (std::vector<ShardSlice>{{1, 26, 53}}));
  EXPECT_EQ(plan.shards[3], (std::vector<ShardSlice>{{2, 0, 23}}));
}

TEST(ShardTest, PlansAreBalancedPartitionsForManyShapes) {
  for (const std::vector<std::size_t>& sizes :
       std::vector<std::vector<std::size_t>>{{1}, {5, 0, 9}, {1000, 3, 3, 3, 2000}, {17, 17, 17}}) {
    const std::size_t total = std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});
    for (int n : {1, 2, 3, 4, 8, 32}) {
      const ShardPlan plan = plan_shards(sizes, n);
      ASSERT_EQ(plan.shards.size(), static_cast<std::size_t>(n));
      expect_partition(sizes, plan);
      // Within an eighth of a share (the snap to an edge) and one candidate (the rounding).
      const double share = static_cast<double>(total) / n;
      for (const auto& shard : plan.shards)
        EXPECT_LE(static_cast<double>(load(shard)), share + 2.0 * (share / 8.0) + 2.0);
      EXPECT_EQ(plan_shards(sizes, n).shards, plan.shards);  // deterministic
    }
  }
}

TEST(ShardTest, MoreShardsThanCandidatesLeavesSomeEmpty) {
  const ShardPlan plan = plan_shards({2}, 4);
  expect_partition({2}, plan);
  std::size_t empty = 0;
  for (const auto& shard : plan.shards)
    empty += shard.empty() ? 1 : 0;
  EXPECT_EQ(empty, 2u);
  // The empty shards are the last ones: 256 shards of 14 candidates began with empty shards.
  const ShardPlan wide = plan_shards({7, 7}, 256);
  expect_partition({7, 7}, wide);
  for (std::size_t k = 0; k < wide.shards.size(); ++k)
    EXPECT_EQ(wide.shards[k].size(), k < 14 ? 1u : 0u) << k;
}

TEST(ShardTest, NamesItsFiles) {
  EXPECT_EQ(shard_stem({2, 4}), "shard-2-of-4");
  EXPECT_EQ(shard_summary_path("out", "sm_90", {2, 4}),
            std::filesystem::path("out/sm_90/shard-2-of-4.json"));
  EXPECT_EQ(shard_log_path("out", "sm_90", "n<=4096", {2, 4}),
            std::filesystem::path("out/sm_90/n%3C%3D4096.shard-2-of-4.trials.jsonl"));
  EXPECT_EQ(shard_log_name("n<=4096", {2, 4}), "n%3C%3D4096.shard-2-of-4.trials.jsonl");
}

TEST(ShardTest, SummaryRoundTrips) {
  const std::filesystem::path dir = test::fresh_test_dir("shard_test");
  auto write = [](const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  };
  ShardSummary s;
  s.kernel = "saxpy";
  s.arch = "sm_90";
  s.shard = {2, 3};
  s.space_hash = "aa";
  s.source_hash = "bb";
  s.toolchain = "cc";
  s.bench = bench_json(BenchSettings{});
  s.device = "Fake GPU";
  s.host = "vm";
  ShardBucket b;
  b.bucket = "large";
  b.first = 2;
  b.end = 7;
  b.log = "large.shard-2-of-3.trials.jsonl";
  b.result.kernel = "saxpy";
  b.result.bucket = "large";
  b.result.arch = "sm_90";
  b.result.trials = 6;
  s.buckets.push_back(b);
  const auto path = dir / "sm_90" / "shard-2-of-3.json";
  s.save(path);
  result<ShardSummary> back = ShardSummary::load(path);
  ASSERT_TRUE(back) << back.error().str();
  EXPECT_EQ(back->dump(), s.dump());
  EXPECT_EQ(back->path, path);
  EXPECT_EQ(back->buckets.at(0).result.trials, 6u);

  nlohmann::json j = nlohmann::json::parse(s.dump());
  j["schema_version"] = 2;
  write(path, j.dump());
  EXPECT_EQ(ShardSummary::load(path).error().message,
            "shard summary schema 2 is not 1, the one this tuner reads");
  j["schema_version"] = 1;
  j["buckets"][0]["log"] = "../escape.jsonl";
  write(path, j.dump());
  EXPECT_EQ(ShardSummary::load(path).error().message,
            "bad log name '../escape.jsonl' in a shard summary");
  // `"shard": 1, "shard": 2` was merged as shard 2: a key said twice is refused.
  std::string twice = s.dump();
  const std::size_t at = twice.find("\"shard\":");
  ASSERT_NE(at, std::string::npos);
  twice.insert(at, "\"shard\": 1, ");
  write(path, twice);
  EXPECT_EQ(ShardSummary::load(path).error().message,
            "key 'shard' appears twice in one object: keep one of them (a reader would silently "
            "take the last)");
}

// Found while writing the shard_summary fuzz target: a summary whose `bench` nests 200,000
// arrays deep parsed, then overflowed the stack when it was copied. Refused before parsing now,
// as every other JSON reader does.
TEST(ShardTest, DeepSummaryIsRefusedNotCrashed) {
  const std::filesystem::path dir = test::fresh_test_dir("shard_test_deep");
  const auto path = dir / "shard-1-of-2.json";
  std::ofstream(path, std::ios::binary)
      << R"({"schema_version": 1, "bench": )" << std::string(200000, '[')
      << std::string(200000, ']') << "}";
  result<ShardSummary> back = ShardSummary::load(path);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().message, "arrays and objects nest deeper than 64 levels");
  EXPECT_EQ(back.error().column, 32 + 63);  // the 64th bracket: the summary is the first level
}

TEST(ShardTest, ParsesDeviceLists) {
  EXPECT_EQ(parse_device_list("0,1, 3").value(), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(parse_device_list("2").value(), (std::vector<int>{2}));
  EXPECT_EQ(parse_device_list(" ").error().message,
            "empty device list: expected e.g. '0,1' or 'all'");
  EXPECT_EQ(parse_device_list("0,,1").error().message,
            "bad device '' in '0,,1': expected device numbers such as '0,1', or 'all'");
  EXPECT_EQ(parse_device_list("1,0,1").error().message, "device 1 is listed twice in '1,0,1'");
}

TEST(ShardTest, CountsTheDevicesCudaVisibleDevicesShows) {
  // Counting commas made `0,,,,` five devices and `-1` (every GPU hidden) one.
  EXPECT_EQ(visible_device_count("0,,,,"), 1u);
  EXPECT_EQ(visible_device_count("-1"), 0u);
  EXPECT_EQ(visible_device_count(""), 0u);
  EXPECT_EQ(visible_device_count("0,1,-1,2"), 2u);
  EXPECT_EQ(visible_device_count(" 2 , 0 ,3"), 3u);
  EXPECT_EQ(visible_device_count("1,x,2"), 1u);
  EXPECT_EQ(visible_device_count("0,1,01"), 2u);  // device 1 again: the driver stops there
  EXPECT_EQ(visible_device_count("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6,GPU-5f2a,1"), 3u);
  EXPECT_EQ(visible_device_count("GPU-abc,gpu-ABC"), 1u);
  EXPECT_EQ(visible_device_count("MIG-GPU-8932f937-d72c-4106-c12f-20bd9faed9f6/1/0,"
                                 "MIG-c7384736-a75d-5afc-978f-d2f1294409fd"),
            2u);
  EXPECT_EQ(visible_device_count("GPU-,0"), 0u);
  EXPECT_EQ(visible_device_count("GPU-xyz"), 0u);
}

}  // namespace
}  // namespace tune
