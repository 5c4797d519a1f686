#include <tuner/core/search/trial.hpp>

#include <cmath>
#include <limits>
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tune {
namespace {

std::string reason_of(const Trial& t) {
  return t.state.invalid() != nullptr ? t.state.invalid()->reason : "(measured)";
}

TEST(TrialTest, MeasuredKeepsItsTimings) {
  Trial t = Trial::measured(1.5, 1.25, 200);
  ASSERT_TRUE(t.is_measured());
  EXPECT_EQ(*t.state.measured(), (TrialState::Measured{1.5, 1.25, 200}));
  EXPECT_EQ(t.state.invalid(), nullptr);
}

TEST(TrialTest, UnusableTimingsMakeTheTrialInvalid) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(reason_of(Trial::measured(nan, 1, 5)), "non-finite median_ms 'nan'");
  EXPECT_EQ(reason_of(Trial::measured(inf, 1, 5)), "non-finite median_ms 'inf'");
  EXPECT_EQ(reason_of(Trial::measured(1, -inf, 5)), "non-finite min_ms '-inf'");
  EXPECT_EQ(reason_of(Trial::measured(0, 1, 5)), "non-positive median_ms '0'");
  EXPECT_EQ(reason_of(Trial::measured(1, -0.5, 5)), "non-positive min_ms '-0.5'");
  EXPECT_EQ(reason_of(Trial::measured(1, 1, 0)), "no timed reps (reps 0)");
  EXPECT_EQ(reason_of(Trial::measured(1, 1, -3)), "no timed reps (reps -3)");
}

TEST(TrialTest, DefaultTrialIsNotMeasured) {
  Trial t;
  EXPECT_FALSE(t.is_measured());
  EXPECT_EQ(reason_of(t), "not measured");
}

TEST(TrialTest, PhasesRoundTrip) {
  for (Phase p : {Phase::required, Phase::search, Phase::runoff})
    EXPECT_EQ(parse_phase(to_string(p)), p);
  EXPECT_EQ(parse_phase("grid"), std::nullopt);
}

TEST(TrialTest, UtcTimeIsIso8601) {
  EXPECT_TRUE(std::regex_match(utc_now_iso8601(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << utc_now_iso8601();
}

Trial sample_measured() {
  Trial t = Trial::measured(0.1234, 0.12, 200);
  t.config = Config{{"BN", 128}, {"BM", 64}, {"LAYOUT", "row"}};
  t.cache_key = "abc123";
  t.phase = Phase::required;
  t.device = "NVIDIA H200";
  t.time = "2026-11-29T10:00:00Z";
  t.warnings = {"gpu busy"};
  t.batched = true;
  return t;
}

TEST(TrialTest, ATimeThatIsNoRealTimeReadsAsNone) {
  // Export wrote `"timestamp": "2026-13-45T99:99:99Z"` as the log said it.
  EXPECT_TRUE(is_utc_time("2026-12-03T21:02:54Z"));
  EXPECT_TRUE(is_utc_time("2024-02-29T23:59:60Z"));
  for (const char* bad : {"2026-13-45T99:99:99Z", "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z",
                          "2026-12-03T24:00:00Z", "2026-12-03 21:02:54Z", "2026-12-03T21:02:54", "",
                          "2026-1-29T10:00:02Z", "202H200"})
    EXPECT_FALSE(is_utc_time(bad)) << bad;
  nlohmann::json j = to_json(sample_measured());
  j["time"] = "2026-13-45T99:99:99Z";
  result<Trial> t = trial_from_json(j);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->time, "");
}

TEST(TrialTest, MeasuredIsOneSortedJsonLine) {
  EXPECT_EQ(to_json_line(sample_measured()),
            R"({"batched":true,"cache_key":"abc123","config_id":"BM=64,BN=128,LAYOUT=\"row\"",)"
            R"("device":"NVIDIA H200","median_ms":0.1234,"min_ms":0.12,)"
            R"("params":{"BM":64,"BN":128,"LAYOUT":"row"},"phase":"required","reps":200,)"
            R"("state":"measured","time":"2026-11-29T10:00:00Z","warnings":["gpu busy"]})");
}

TEST(TrialTest, InvalidIsOneJsonLineWithNulls) {
  Trial t = Trial::invalid("exit status 3: boom");
  t.config = Config{{"A", 1}};
  t.time = "2026-11-29T10:00:00Z";
  EXPECT_EQ(to_json_line(t), R"({"batched":false,"cache_key":null,"config_id":"A=1","device":null,)"
                             R"("params":{"A":1},"phase":"search","reason":"exit status 3: boom",)"
                             R"("state":"invalid","time":"2026-11-29T10:00:00Z","warnings":[]})");
}

TEST(TrialTest, JsonRoundTrip) {
  Trial measured = sample_measured();
  measured.runoff = nlohmann::json{{"pairs", 20}};
  measured.phase = Phase::runoff;
  auto back = trial_from_json(nlohmann::json::parse(to_json_line(measured)));
  ASSERT_TRUE(back.has_value()) << back.error().str();
  EXPECT_EQ(*back, measured);

  Trial invalid = Trial::invalid("timed out after 2 s");
  invalid.config = Config{{"X", "a,b"}};
  back = trial_from_json(to_json(invalid));
  ASSERT_TRUE(back.has_value()) << back.error().str();
  EXPECT_EQ(*back, invalid);
}

TEST(TrialTest, UnknownFieldsAreIgnoredAndOptionalOnesDefault) {
  auto t = trial_from_json(nlohmann::json::parse(
      R"({"config_id":"A=1","params":{"A":1},"state":"measured","median_ms":2,"min_ms":1,)"
      R"("reps":3,"phase":"search","future":{"x":1}})"));
  ASSERT_TRUE(t.has_value()) << t.error().str();
  EXPECT_EQ(*t->state.measured(), (TrialState::Measured{2, 1, 3}));
  EXPECT_EQ(t->cache_key, std::nullopt);
  EXPECT_EQ(t->time, "");
  EXPECT_FALSE(t->batched);
}

std::string parse_error(const std::string& text) {
  auto t = trial_from_json(nlohmann::json::parse(text));
  return t.has_value() ? "(parsed)" : t.error().message;
}

TEST(TrialTest, MalformedTrialsAreRejectedWithTheReason) {
  EXPECT_EQ(parse_error("[1]"), "a trial must be a JSON object");
  EXPECT_EQ(parse_error(R"({"params":{"A":1},"state":"invalid","reason":"x","phase":"search"})"),
            "missing 'config_id'");
  EXPECT_EQ(parse_error(R"({"config_id":"A=2","params":{"A":1},"state":"invalid","reason":"x",)"
                        R"("phase":"search"})"),
            "'config_id' 'A=2' does not match its params ('A=1')");
  EXPECT_EQ(parse_error(R"({"config_id":"A=1","params":{"A":1.5},"state":"invalid",)"
                        R"("reason":"x","phase":"search"})"),
            "'params' must be an object of integers and strings");
  EXPECT_EQ(parse_error(R"({"config_id":"A=1","params":{"A":1},"state":"done","phase":"search"})"),
            R"('state' must be 'measured' or 'invalid', got "done")");
  EXPECT_EQ(parse_error(R"({"config_id":"A=1","params":{"A":1},"state":"measured",)"
                        R"("median_ms":1,"reps":2,"phase":"search"})"),
            "missing 'min_ms'");
  EXPECT_EQ(parse_error(R"({"config_id":"A=1","params":{"A":1},"state":"measured",)"
                        R"("median_ms":0,"min_ms":1,"reps":2,"phase":"search"})"),
            "measured trial with non-positive median_ms '0'");
  EXPECT_EQ(parse_error(R"({"config_id":"A=1","params":{"A":1},"state":"invalid",)"
                        R"("reason":"x","phase":"warmup"})"),
            R"('phase' must be 'required', 'search' or 'runoff', got "warmup")");
  EXPECT_EQ(parse_error(R"({"config_id":"A=1","params":{"A":1},"state":"invalid",)"
                        R"("reason":"x","phase":"search","cache_key":5})"),
            "'cache_key' must be a string or null");
  EXPECT_EQ(parse_error(R"({"config_id":"A=1","params":{"A":1},"state":"invalid",)"
                        R"("reason":"x","phase":"search","warnings":"busy"})"),
            "'warnings' must be an array of strings");
}

}  // namespace
}  // namespace tune
