#include <tuner/core/record/record.hpp>

#include <csignal>
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include <tuner/core/base/hash.hpp>

namespace tune {
namespace {

namespace fs = std::filesystem;

const char* current_toolchain = "nvcc 13.0.88, ptxas 13.0.88";

// A workspace of two buckets whose keys are a digest of the config id, as a stand-in for
// compute_cache_key (which the cache key tests cover).
Workspace workspace() {
  Workspace w;
  w.kernel = "gemm";
  w.arch = "sm_90";
  w.source_hash = "src1";
  w.space_hash = "space1";
  w.toolchain = current_toolchain;
  w.context.host_compiler = "GNU 12.2.0";
  w.buckets = {{"m<=512", "aaaaaaaaaaaaaaaa", {"BM=64", "BM=128"}},
               {"large", "bbbbbbbbbbbbbbbb", {"BM=128", "BM=256"}}};
  w.retune_command = "cmake --build /src/build --target tune.gemm";
  return w;
}

L2Key key_of(const Config& c) {
  return L2Key{"k1", sha256_hex(c.id())};
}
L2Key recompute(const RecordEntry& e) {
  return key_of(e.config);
}

RecordEntry entry(std::string bucket, std::string hash, std::int64_t bm, double median = 0.5) {
  RecordEntry e;
  e.bucket = std::move(bucket);
  e.pruned_space_hash = std::move(hash);
  e.config = Config{{"BM", bm}};
  e.median_ms = median;
  e.samples = 200;
  e.cache_key = key_of(e.config);
  return e;
}

Record fresh_record() {
  Workspace w = workspace();
  w.context.device = "NVIDIA H200";
  w.context.driver = "580.159.04";
  w.context.machine = "gpu-host";
  w.context.date = "2026-11-29";
  Record r(w);
  r.insert(entry("m<=512", "aaaaaaaaaaaaaaaa", 64, 0.1234));
  r.insert(entry("large", "bbbbbbbbbbbbbbbb", 256, 1.5));
  return r;
}

std::vector<std::string> errors_of(const Record& r, const Workspace& w = workspace(),
                                   VerifyOptions o = {}) {
  Verification v = verify_record(r, w, recompute, o);
  EXPECT_EQ(v.state, RecordState::stale);
  EXPECT_FALSE(v.record.has_value());
  return v.errors;
}

using Lines = std::vector<std::string>;

class RecordFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("tune_record_test." + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
};

TEST(RecordTest, DumpIsSortedAndStable) {
  Record r = fresh_record();
  EXPECT_EQ(r.dump(), R"({
  "arch": "sm_90",
  "context": {
    "date": "2026-11-29",
    "device": "NVIDIA H200",
    "driver": "580.159.04",
    "host_compiler": "GNU 12.2.0",
    "machine": "gpu-host"
  },
  "entries": [
    {
      "bucket": "large",
      "cache_key": {
        "digest": ")" + sha256_hex("BM=256") +
                          R"(",
        "schema": "k1"
      },
      "config": {
        "id": "BM=256",
        "params": {
          "BM": 256
        }
      },
      "median_ms": 1.5,
      "pruned_space_hash": "bbbbbbbbbbbbbbbb",
      "runoff": null,
      "samples": 200,
      "source": "measured"
    },
    {
      "bucket": "m<=512",
      "cache_key": {
        "digest": ")" + sha256_hex("BM=64") +
                          R"(",
        "schema": "k1"
      },
      "config": {
        "id": "BM=64",
        "params": {
          "BM": 64
        }
      },
      "median_ms": 0.1234,
      "pruned_space_hash": "aaaaaaaaaaaaaaaa",
      "runoff": null,
      "samples": 200,
      "source": "measured"
    }
  ],
  "kernel": "gemm",
  "schema_version": 1,
  "source_hash": "src1",
  "space_hash": "space1",
  "toolchain": "nvcc 13.0.88, ptxas 13.0.88",
  "tuner_version": "0.1.0"
}
)");
}

TEST(RecordTest, TheIncumbentRoundTripsAndGivesTheSpeedUp) {
  Record r = fresh_record();
  RecordEntry e = *r.get("m<=512");
  e.incumbent = IncumbentTiming{"BM=128", 0.2468};
  r.insert(e);
  const std::string text = r.dump();
  EXPECT_NE(text.find("\"incumbent\": {\n        \"config_id\": \"BM=128\",\n        "
                      "\"median_ms\": 0.2468\n      },"),
            std::string::npos)
      << text;
  result<Record> back = Record::parse(text, "r.json");
  ASSERT_TRUE(back) << back.error().str();
  EXPECT_EQ(back->get("m<=512")->incumbent, e.incumbent);
  EXPECT_FALSE(back->get("large")->incumbent);  // absent: not written, not read
  EXPECT_EQ(describe_speedup(*e.incumbent, "BM=64", 0.1234),
            "speed-up 2.00x over the incumbent BM=128 (0.2468 ms)");
  EXPECT_EQ(describe_speedup(*e.incumbent, "BM=128", 0.2468), "the incumbent itself");
  EXPECT_EQ(describe_speedup(IncumbentTiming{"S=1", 2.0}, "S=2", 3.0, true),
            "1.50x the score of the incumbent S=1 (2)");
  // A median that is not a positive number is refused where it is written.
  std::string bad = text;
  bad.replace(bad.find("0.2468"), 6, "-1");
  result<Record> refused = Record::parse(bad, "r.json");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("incumbent.median_ms"), std::string::npos)
      << refused.error().str();
}

TEST(RecordTest, InsertReplacesAndGetMatchesExactly) {
  Record r = fresh_record();
  r.insert(entry("large", "bbbbbbbbbbbbbbbb", 128, 1.25));
  ASSERT_EQ(r.entries().size(), 2u);
  ASSERT_NE(r.get("large"), nullptr);
  EXPECT_EQ(r.get("large")->config_id, "BM=128");
  EXPECT_EQ(r.get("Large"), nullptr);
  EXPECT_EQ(r.entries()[0].bucket, "large");
  EXPECT_EQ(r.entries()[1].bucket, "m<=512");
}

TEST_F(RecordFileTest, SavesIdenticalBytesAndLoadsBack) {
  Record r = fresh_record();
  r.insert([] {
    RecordEntry e = entry("large", "bbbbbbbbbbbbbbbb", 128, 0.1 + 0.2);
    e.runoff = nlohmann::json{{"pairs", 50}, {"p_value", 0.01}, {"outcome", "win"}};
    return e;
  }());
  r.save(dir / "a.json");
  // Inserted in the other order: the same bytes.
  Record again(workspace());
  again.context = r.context;
  again.insert(r.entries()[1]);
  again.insert(r.entries()[0]);
  again.save(dir / "b.json");
  EXPECT_EQ(read_file(dir / "a.json"), read_file(dir / "b.json"));
  Record loaded = Record::load(dir / "a.json").value();
  loaded.save(dir / "c.json");
  EXPECT_EQ(read_file(dir / "c.json"), read_file(dir / "a.json"));
  EXPECT_EQ(loaded.get("large")->median_ms, 0.1 + 0.2);
  EXPECT_EQ(loaded.get("large")->runoff["pairs"], 50);
  EXPECT_EQ(read_file(dir / "a.json").back(), '\n');
  // No temporary file is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 3);
}

TEST_F(RecordFileTest, ACrashDuringSaveLeavesTheOldRecord) {
  Record r = fresh_record();
  r.save(dir / "gemm.json");
  std::string before = read_file(dir / "gemm.json");
  Record changed = r;
  changed.insert(entry("large", "bbbbbbbbbbbbbbbb", 128, 9.0));
  EXPECT_EXIT(
      {
        ::setenv("TUNE_FAULT_INJECT", "record-save-before-rename", 1);
        changed.save(dir / "gemm.json");
      },
      ::testing::KilledBySignal(SIGKILL), "");
  EXPECT_EQ(read_file(dir / "gemm.json"), before);
  changed.save(dir / "gemm.json");  // without the switch the save goes through
  EXPECT_EQ(read_file(dir / "gemm.json"), changed.dump());
}

TEST(RecordTest, AFreshRecordVerifies) {
  Verification v = verify_record(fresh_record(), workspace(), recompute);
  EXPECT_EQ(v.state, RecordState::fresh);
  EXPECT_TRUE(v.errors.empty());
  EXPECT_TRUE(v.warnings.empty());
  ASSERT_TRUE(v.record.has_value());
  EXPECT_EQ(v.record->get("m<=512")->config_id, "BM=64");
}

TEST(RecordTest, IdentityMismatchesAreErrors) {
  Record r = fresh_record();
  r.kernel = "gemv";
  r.arch = "sm_80";
  r.source_hash = "src0";
  r.space_hash = "space0";
  EXPECT_EQ(errors_of(r), (Lines{"kernel: record has 'gemv', current is 'gemm'",
                                 "arch: record has 'sm_80', current is 'sm_90'",
                                 "source_hash: record has 'src0', current is 'src1'",
                                 "space_hash: record has 'space0', current is 'space1'"}));
}

TEST(RecordTest, AnotherSchemaIsAnError) {
  Record r = fresh_record();
  r.schema_version = 2;
  EXPECT_EQ(errors_of(r), (Lines{"schema_version: record has '2', current is '1'"}));
}

TEST(RecordTest, DuplicateBucket) {
  Record r = Record::parse(R"({"schema_version":1,"kernel":"gemm","arch":"sm_90",
    "source_hash":"src1","space_hash":"space1","toolchain":"nvcc 13.0.88, ptxas 13.0.88",
    "tuner_version":"0.1.0","entries":[
    {"bucket":"large","pruned_space_hash":"bbbbbbbbbbbbbbbb","config":{"id":"BM=128","params":{"BM":128}},
     "cache_key":null},
    {"bucket":"large","pruned_space_hash":"bbbbbbbbbbbbbbbb","config":{"id":"BM=256","params":{"BM":256}},
     "cache_key":null},
    {"bucket":"m<=512","pruned_space_hash":"aaaaaaaaaaaaaaaa","config":{"id":"BM=64","params":{"BM":64}},
     "cache_key":{"schema":"k1","digest":")" +
                               sha256_hex("BM=64") + R"("}}]})",
                           "r.json")
                 .value();
  EXPECT_EQ(errors_of(r),
            (Lines{"entries: record has bucket 'large' 2 times, current is one entry per bucket"}));
}

TEST(RecordTest, MissingAndUnknownBuckets) {
  Record r = fresh_record();
  Record only(workspace());
  only.insert(*r.get("m<=512"));
  only.insert(entry("tiny", "cccccccccccccccc", 64));
  EXPECT_EQ(errors_of(only),
            (Lines{"entries: record has bucket 'tiny', which the current space lacks (it has "
                   "'m<=512', 'large')",
                   "entries: record has no entry for bucket 'large', current space declares it"}));
}

TEST(RecordTest, IdThatDoesNotMatchItsParams) {
  Record r = fresh_record();
  RecordEntry e = *r.get("large");
  e.config_id = "BM=128";  // params say 256
  r.insert(e);
  EXPECT_EQ(errors_of(r),
            (Lines{"entry 'large' config.id: record has 'BM=128', its params give 'BM=256'"}));
}

TEST(RecordTest, PrunedSpaceAndMembership) {
  Record r = fresh_record();
  RecordEntry e = entry("large", "0000000000000000", 64);  // 64 is pruned for 'large'
  r.insert(e);
  EXPECT_EQ(errors_of(r),
            (Lines{"entry 'large' pruned_space_hash: record has '0000000000000000', current is "
                   "'bbbbbbbbbbbbbbbb'",
                   "entry 'large' config: record has 'BM=64', current pruned space of the bucket "
                   "does not contain it"}));
}

TEST(RecordTest, DeletedOrChangedKeysAreErrorsNamingTheBucket) {
  Record r = fresh_record();
  RecordEntry e = *r.get("large");
  e.cache_key.reset();
  r.insert(e);
  RecordEntry m = *r.get("m<=512");
  m.cache_key->digest = "0123";
  r.insert(m);
  EXPECT_EQ(errors_of(r), (Lines{"entry 'large' cache_key: record has none, current is 'k1:" +
                                     sha256_hex("BM=256") + "'",
                                 "entry 'm<=512' cache_key: record has 'k1:0123', current is 'k1:" +
                                     sha256_hex("BM=64") + "'"}));
}

TEST(RecordTest, AKeyOfAnotherSchemaWarns) {
  Record r = fresh_record();
  RecordEntry e = *r.get("large");
  e.cache_key = L2Key{"k0", "abc"};
  r.insert(e);
  Verification v = verify_record(r, workspace(), recompute);
  EXPECT_EQ(v.state, RecordState::fresh);
  EXPECT_EQ(v.warnings, (Lines{"entry 'large' cache_key: record has key schema 'k0', current is "
                               "'k1' (incomparable, not checked)"}));
}

TEST(RecordTest, ToolchainDriftFailsUnlessAllowed) {
  Record r = fresh_record();
  r.toolchain = "nvcc 12.4.131, ptxas 12.4.131";
  RecordEntry e = *r.get("large");
  e.cache_key->digest = "stale-but-not-compared";
  r.insert(e);
  EXPECT_EQ(errors_of(r), (Lines{"toolchain: record has 'nvcc 12.4.131, ptxas 12.4.131', current "
                                 "is 'nvcc 13.0.88, ptxas 13.0.88'"}));
  Verification v = verify_record(r, workspace(), recompute, VerifyOptions{true});
  EXPECT_EQ(v.state, RecordState::fresh);
  EXPECT_EQ(v.warnings, (Lines{"toolchain: record has 'nvcc 12.4.131, ptxas 12.4.131', current is "
                               "'nvcc 13.0.88, ptxas 13.0.88' (drift allowed: cache keys not "
                               "compared)"}));
}

TEST(RecordTest, DeviceDriverHostCompilerAndTunerVersionDriftWarn) {
  Workspace w = workspace();
  w.context.device = "NVIDIA H100 80GB HBM3";
  w.context.driver = "575.57.08";
  w.context.host_compiler = "Clang 14.0.6";
  w.tuner_version = "0.2.0";
  w.context.machine = "another-host";  // informational only: never warns
  w.context.date = "2027-01-01";
  Verification v = verify_record(fresh_record(), w, recompute);
  EXPECT_EQ(v.state, RecordState::fresh);
  EXPECT_EQ(v.warnings,
            (Lines{"context.device: record has 'NVIDIA H200', current is 'NVIDIA H100 80GB HBM3'",
                   "context.driver: record has '580.159.04', current is '575.57.08'",
                   "context.host_compiler: record has 'GNU 12.2.0', current is 'Clang 14.0.6'",
                   "tuner_version: record has '0.1.0', current is '0.2.0'"}));
  // An unknown current device (a CPU-only CI machine) does not warn.
  EXPECT_TRUE(verify_record(fresh_record(), workspace(), recompute).warnings.empty());
}

TEST(RecordTest, ReportNamesEveryReasonAndTheRetuneCommand) {
  Record r = fresh_record();
  r.source_hash = "src0";
  r.tuner_version = "0.0.9";
  Verification v = verify_record(r, workspace(), recompute);
  EXPECT_EQ(v.report("records/gemm.json"),
            "records/gemm.json: warning: tuner_version: record has '0.0.9', current is '0.1.0'\n"
            "records/gemm.json: error: source_hash: record has 'src0', current is 'src1'\n"
            "records/gemm.json: note: re-tune with: cmake --build /src/build --target tune.gemm\n");
}

TEST_F(RecordFileTest, MissingAndUnreadableRecords) {
  Verification missing = load_verified(dir / "none.json", workspace(), recompute);
  EXPECT_EQ(missing.state, RecordState::missing);
  EXPECT_EQ(missing.errors, (Lines{"record: missing for kernel 'gemm' arch 'sm_90', expected at '" +
                                   (dir / "none.json").string() + "'"}));
  std::ofstream(dir / "bad.json") << R"({"schema_version":1,"kernel":"gemm","arch":"sm_90",
    "source_hash":"s","space_hash":"s","toolchain":"t","tuner_version":"v","entries":[
    {"bucket":"b","pruned_space_hash":"h","config":{"id":"A=1","params":{"A":1.5}}}]})";
  Verification bad = load_verified(dir / "bad.json", workspace(), recompute);
  EXPECT_EQ(bad.state, RecordState::unreadable);
  EXPECT_EQ(bad.errors, (Lines{"field 'entries[0].config.params' must be an object of integer or "
                               "string values, got {\"A\":1.5}"}));
  std::ofstream(dir / "notjson.json") << "{";
  EXPECT_EQ(load_verified(dir / "notjson.json", workspace(), recompute).state,
            RecordState::unreadable);
}

TEST(RecordTest, LoadIgnoresUnknownFieldsAndNamesBadOnes) {
  Record r = fresh_record();
  nlohmann::json j = r.to_json();
  j["a_future_field"] = 1;
  j["entries"][0]["another"] = {1, 2};
  Record loaded = Record::parse(j.dump(), "r.json").value();
  EXPECT_EQ(loaded.dump(), r.dump());
  j["entries"][0]["samples"] = "many";
  const std::string text = j.dump();
  result<Record> bad = Record::parse(text, "r.json");
  ASSERT_FALSE(bad.has_value());
  // The place of the bad value in the text, and of the object that lacks a field.
  EXPECT_EQ(bad.error().str(),
            "r.json:1:" + std::to_string(text.find("\"many\"") + 1) +
                ": error: field 'entries[0].samples' must be an integer, got \"many\"");
  j = r.to_json();
  j.erase("space_hash");
  EXPECT_EQ(Record::parse(j.dump(), "r.json").error().str(),
            "r.json:1:1: error: missing required field 'space_hash'");
}

}  // namespace
}  // namespace tune
