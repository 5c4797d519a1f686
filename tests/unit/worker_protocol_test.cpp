#include <tuner/core/search/worker_protocol.hpp>

#include <string>

#include <gtest/gtest.h>

namespace tune {
namespace {

TEST(WorkerProtocolTest, HelloRoundTrip) {
  WorkerHello h;
  h.ready = true;
  h.pid = 42;
  h.device = "NVIDIA H200";
  h.driver = "580.159.04";
  h.arch = "sm_90";
  EXPECT_EQ(encode(h), R"({"arch":"sm_90","device":"NVIDIA H200","driver":"580.159.04",)"
                       R"("pid":42,"protocol":1,"ready":true})");
  result<WorkerHello> back = decode_hello(encode(h));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->protocol, worker_protocol_version);
  EXPECT_TRUE(back->ready);
  EXPECT_EQ(back->pid, 42);
  EXPECT_EQ(back->device, "NVIDIA H200");
  EXPECT_EQ(back->arch, "sm_90");

  WorkerHello no;
  no.error = "no CUDA driver";
  EXPECT_EQ(encode(no), R"({"error":"no CUDA driver","protocol":1,"ready":false})");
  // A hello without a version is protocol 0: an old runner.
  EXPECT_EQ(decode_hello(R"({"ready":true})")->protocol, 0);
  EXPECT_FALSE(decode_hello("nonsense"));
  EXPECT_EQ(decode_hello("[1]").error().message, "not a JSON object in '[1]'");
  EXPECT_EQ(decode_hello(R"({"ready":"yes"})").error().message,
            R"(not a worker's hello in '{"ready":"yes"}')");
}

TEST(WorkerProtocolTest, RequestsRoundTrip) {
  const CandidateRef a{Config{{"BM", 64}, {"LAYOUT", "row"}}, "aa"};
  const CandidateRef b{Config{{"BM", 128}, {"LAYOUT", "col"}}, "bb"};
  EXPECT_EQ(encode(WorkerRequest{MeasureRequest{a}}),
            R"({"config":{"BM":64,"LAYOUT":"row"},"key":"aa","op":"measure"})");
  result<WorkerRequest> m = decode_request(encode(WorkerRequest{MeasureRequest{a}}));
  ASSERT_TRUE(m);
  ASSERT_TRUE(std::holds_alternative<MeasureRequest>(*m));
  EXPECT_EQ(std::get<MeasureRequest>(*m).candidate.config, a.config);
  EXPECT_EQ(std::get<MeasureRequest>(*m).candidate.key, "aa");

  result<WorkerRequest> r = decode_request(encode(WorkerRequest{RunoffRequest{a, b}}));
  ASSERT_TRUE(r);
  const auto& runoff = std::get<RunoffRequest>(*r);
  EXPECT_EQ(runoff.incumbent.config, a.config);
  EXPECT_EQ(runoff.challenger.key, "bb");

  EXPECT_EQ(decode_request(R"({"op":"dance"})").error().message,
            R"(unknown op 'dance' in '{"op":"dance"}')");
  EXPECT_EQ(decode_request(R"({"op":"measure"})").error().message,
            R"(not a request in '{"op":"measure"}')");
}

TEST(WorkerProtocolTest, MeasureAnswers) {
  MeasureAnswer a;
  a.state.value = MeasuredState{1.5, 1.25, 40};
  a.batched = true;
  a.warnings = {"busy"};
  a.device = "Fake GPU";
  auto back = decode_measure_answer(encode(a));
  ASSERT_TRUE(back);
  const auto& m = std::get<MeasureAnswer>(*back);
  EXPECT_EQ(*m.state.measured(), (MeasuredState{1.5, 1.25, 40}));
  EXPECT_TRUE(m.batched);
  EXPECT_EQ(m.warnings, std::vector<std::string>{"busy"});
  EXPECT_FALSE(m.exiting);
  const Trial t = m.to_trial();
  EXPECT_TRUE(t.is_measured());
  EXPECT_EQ(t.device, "Fake GPU");

  MeasureAnswer bad;
  bad.state.value = InvalidState{"CUDA_ERROR_ILLEGAL_ADDRESS: boom"};
  bad.exiting = true;
  EXPECT_EQ(encode(bad),
            R"({"exiting":true,"reason":"CUDA_ERROR_ILLEGAL_ADDRESS: boom","state":"invalid"})");
  const auto decoded_bad = decode_measure_answer(encode(bad));
  const auto& b = std::get<MeasureAnswer>(*decoded_bad);
  EXPECT_TRUE(b.exiting);
  EXPECT_EQ(b.to_trial().state.invalid()->reason, "CUDA_ERROR_ILLEGAL_ADDRESS: boom");

  // Timings the search cannot use make the trial invalid, as Trial::measured says.
  MeasureAnswer nan;
  nan.state.value = MeasuredState{-1, 1, 3};
  EXPECT_EQ(nan.to_trial().state.invalid()->reason, "non-positive median_ms '-1'");

  auto refused = decode_measure_answer(R"({"error":"bad request"})");
  ASSERT_TRUE(refused);
  EXPECT_EQ(std::get<RefusedAnswer>(*refused).error, R"("bad request")");
  EXPECT_EQ(decode_measure_answer(R"({"state":"measured"})").error().message,
            R"(not a measure answer in '{"state":"measured"}')");
  EXPECT_EQ(decode_measure_answer("nonsense").error().message, "not JSON in 'nonsense'");
}

TEST(WorkerProtocolTest, RunoffAnswers) {
  RunoffAnswer a;
  a.pairs.incumbent_ms = {1, 2};
  a.pairs.challenger_ms = {3, 4};
  a.pairs.device = "Fake GPU";
  const auto decoded = decode_runoff_answer(encode(a));
  const auto& r = std::get<RunoffAnswer>(*decoded);
  EXPECT_EQ(r.pairs.challenger_ms, (std::vector<double>{3, 4}));
  EXPECT_EQ(r.pairs.device, "Fake GPU");
  EXPECT_FALSE(r.pairs.incumbent_alone_ms);
  a.pairs.incumbent_alone_ms = 1.5;
  a.pairs.challenger_alone_ms = 3.5;
  const auto alone = decode_runoff_answer(encode(a));
  EXPECT_EQ(std::get<RunoffAnswer>(*alone).pairs.incumbent_alone_ms, 1.5);
  EXPECT_EQ(std::get<RunoffAnswer>(*alone).pairs.challenger_alone_ms, 3.5);

  RunoffAnswer forfeit;
  forfeit.pairs.challenger_failure = "check failed";
  EXPECT_EQ(encode(forfeit), R"({"challenger_failure":"check failed"})");
  const auto decoded_forfeit = decode_runoff_answer(encode(forfeit));
  const auto& f = std::get<RunoffAnswer>(*decoded_forfeit);
  EXPECT_EQ(f.pairs.challenger_failure, "check failed");
  EXPECT_FALSE(f.pairs.incumbent_failure);

  // Pairs of unequal length, or none without a failure, are not an answer.
  EXPECT_FALSE(decode_runoff_answer(R"({"incumbent_ms":[1],"challenger_ms":[]})"));
  EXPECT_EQ(decode_runoff_answer("{}").error().message, "no paired timings in '{}'");
}

TEST(WorkerProtocolTest, TextFromOutsideNeverBreaksALine) {
  // A reason with bytes that are not UTF-8 (a harness's message) still encodes to one line of
  // valid JSON: the bytes become replacement characters.
  MeasureAnswer a;
  a.state.value = InvalidState{"bad \xff byte\nand a newline"};
  const std::string line = encode(a);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const auto decoded = decode_measure_answer(line);
  const auto& back = std::get<MeasureAnswer>(*decoded);
  EXPECT_EQ(back.state.invalid()->reason, "bad \xef\xbf\xbd byte\nand a newline");
}

}  // namespace
}  // namespace tune
