#include <tuner/core/record/bucket_result.hpp>

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_dir.hpp"

namespace tune {
namespace {

BucketResult sample() {
  BucketResult r;
  r.kernel = "saxpy";
  r.bucket = "n<=4096";
  r.arch = "sm_90";
  r.pruned_space_hash = "0123456789abcdef";
  r.device = "Fake GPU";
  r.driver = "999.1";
  r.trials = 7;
  r.resumed = 2;
  r.invalid = 3;
  RunoffStats stats;
  stats.pairs = 20;
  stats.outcome = RunoffOutcome::challenger_wins;
  stats.incumbent = "BLOCK=64";
  stats.challenger = "BLOCK=512";
  stats.winner = "BLOCK=512";
  r.runoff = stats;
  r.best = MeasuredWinner{Config{{"BLOCK", 512}}, 1.95, 1.9, 50, L2Key{"k1", "abcd"}, std::nullopt};
  r.workers_started = 4;
  return r;
}

TEST(BucketResultTest, RoundTripsThroughItsFile) {
  const auto dir = test::fresh_test_dir("BucketResultTest");
  const BucketResult r = sample();
  r.save(dir / "b.result.json");
  result<BucketResult> back = BucketResult::load(dir / "b.result.json");
  ASSERT_TRUE(back) << back.error().str();
  EXPECT_EQ(back->dump(), r.dump());
  EXPECT_EQ(back->best, r.best);
  EXPECT_EQ(back->runoff->winner, "BLOCK=512");
  const nlohmann::json j = nlohmann::json::parse(r.dump());
  EXPECT_EQ(j["best"]["config_id"], "BLOCK=512");
  EXPECT_EQ(j["best"]["key_schema"], "k1");
  EXPECT_EQ(j["schema_version"], 1);

  BucketResult none = r;
  none.best.reset();
  none.runoff.reset();
  none.save(dir / "none.json");
  EXPECT_FALSE(BucketResult::load(dir / "none.json")->best);
}

TEST(BucketResultTest, UnreadableResultsAreDiagnostics) {
  const auto dir = test::fresh_test_dir("BucketResultTest");
  std::ofstream(dir / "bad.json") << "{\"schema_version\": 2}";
  result<BucketResult> r = BucketResult::load(dir / "bad.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().path, (dir / "bad.json").string());
  EXPECT_FALSE(BucketResult::load(dir / "missing.json"));
  // A key said twice, as every reader refuses it: a parser would keep the last.
  std::ofstream(dir / "twice.json") << "{\"schema_version\": 1, \"schema_version\": 1}";
  r = BucketResult::load(dir / "twice.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().str(), (dir / "twice.json").string() +
                                 ": error: not a bucket result: key 'schema_version' appears twice "
                                 "in one object: keep one of them (a reader would silently take "
                                 "the last)");
}

TEST(BucketResultTest, AssembledRecordHasOneMeasuredEntryPerBucket) {
  Workspace w;
  w.kernel = "saxpy";
  w.arch = "sm_90";
  w.source_hash = "s";
  w.space_hash = "h";
  w.toolchain = "nvcc 13.0.88, ptxas 13.0.88";
  BucketResult large = sample();
  large.bucket = "large";
  large.runoff.reset();
  large.device = "Fake GPU 2";
  const Record rec = assemble_record(w, {sample(), large});
  ASSERT_EQ(rec.entries().size(), 2u);
  EXPECT_EQ(rec.entries()[0].bucket, "large");  // sorted by bucket
  const RecordEntry* e = rec.get("n<=4096");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->config.id(), "BLOCK=512");
  EXPECT_EQ(e->samples, 50);
  EXPECT_EQ(e->cache_key, (L2Key{"k1", "abcd"}));
  EXPECT_EQ(e->source, "measured");
  EXPECT_EQ(e->runoff["winner"], "BLOCK=512");
  EXPECT_TRUE(rec.get("large")->runoff.is_null());
  EXPECT_EQ(rec.kernel, "saxpy");
  EXPECT_EQ(rec.toolchain, w.toolchain);
  EXPECT_EQ(rec.context.device, "Fake GPU 2");
  EXPECT_TRUE(rec.context.date);

  BucketResult no_winner = sample();
  no_winner.best.reset();
  EXPECT_THROW(assemble_record(w, {no_winner}), error);
}

// Issue 35: a median another machine measured was written as `source: measured`. It says
// `adopted` and where it came from, through the result file and the record, and reads back.
TEST(BucketResultTest, AnAdoptedMedianIsMarkedWithItsOrigin) {
  const auto dir = test::fresh_test_dir("BucketResultTest");
  BucketResult r = sample();
  r.best->adopted_from = "shard 2/4";
  r.save(dir / "b.result.json");
  result<BucketResult> back = BucketResult::load(dir / "b.result.json");
  ASSERT_TRUE(back) << back.error().str();
  EXPECT_EQ(back->best->adopted_from, std::optional<std::string>("shard 2/4"));
  Workspace w;
  w.kernel = "saxpy";
  w.arch = "sm_90";
  const Record rec = assemble_record(w, {*back});
  const RecordEntry* e = rec.get("n<=4096");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->source, "adopted");
  EXPECT_EQ(e->origin, std::optional<std::string>("shard 2/4"));
  nlohmann::json j = rec.to_json();
  EXPECT_EQ(j["entries"][0]["origin"], "shard 2/4");
  result<Record> again = Record::parse(rec.dump(), "r.json");
  ASSERT_TRUE(again) << again.error().str();
  EXPECT_EQ(again->dump(), rec.dump());
  // Measured here: no origin written, as before.
  EXPECT_FALSE(assemble_record(w, {sample()}).to_json()["entries"][0].contains("origin"));
  // `adopted` without saying from where is refused, naming the field.
  j["entries"][0].erase("origin");
  result<Record> bad = Record::parse(j.dump(), "r.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("field 'entries[0].origin' must be where the adopted median "
                                     "came from"),
            std::string::npos)
      << bad.error().str();
  j["entries"][0]["source"] = "forged";
  EXPECT_NE(Record::parse(j.dump(), "r.json")
                .error()
                .message.find("must be 'measured', 'adopted' or 'pinned'"),
            std::string::npos);
}

}  // namespace
}  // namespace tune
