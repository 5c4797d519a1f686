#include <tuner/core/record/t4_export.hpp>

#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/version.hpp>

namespace tune {
namespace {

using nlohmann::json;

const char* const header_line =
    R"({"arch":"sm_90","log_schema":1,"objective":"minimize","source_hash":null,)"
    R"("space_hash":"abc","toolchain":null,"tuner":"gemm/m<=512"})";

Trial measured(double median_ms, double min_ms, std::int64_t reps) {
  Trial t = Trial::measured(median_ms, min_ms, reps);
  t.config = Config{{"BM", 64}, {"LAYOUT", "row"}};
  t.device = "NVIDIA H200";
  t.time = "2026-11-29T10:00:00Z";
  return t;
}

Trial invalid(std::string reason, Phase phase = Phase::search) {
  Trial t = Trial::invalid(std::move(reason));
  t.config = Config{{"BM", 128}, {"LAYOUT", "col"}};
  t.phase = phase;
  t.time = "2026-11-29T10:00:01Z";
  return t;
}

ExportLog log_of(std::string path, std::vector<Trial> trials, LogHeader header = {}) {
  if (header.tuner.empty()) {
    header.tuner = "gemm/m<=512";
    header.space_hash = "abc";
    header.arch = "sm_90";
  }
  return ExportLog{std::move(path), std::move(header), std::move(trials), {}};
}

TEST(T4ExportTest, ReasonsMapToTheT4ErrorKinds) {
  auto kind = [](std::string_view reason) {
    return std::string(to_string(classify_invalid_reason(reason)));
  };
  // The supervisor's and `tuner exec`'s timeouts.
  EXPECT_EQ(kind("timed out after 20 s"), "timeout");
  // The kernel cache: compiler failures and a candidate never compiled.
  EXPECT_EQ(kind("the compiler exited with status 1: kernel.cu(12): error: expected a ';'"),
            "compile");
  EXPECT_EQ(kind("the compiler was killed by signal SIGKILL"), "compile");
  EXPECT_EQ(kind("the compiler exited with status 0 but wrote no cubin to '/c/k.cubin'"),
            "compile");
  EXPECT_EQ(kind("not compiled: run the warm target (cmake --build b --target warm.gemm)"),
            "compile");
  // The kernel cache: over the architecture's limits.
  EXPECT_EQ(kind("function 'gemm' uses 300 registers per thread, over the limit of 255 on sm_90"),
            "constraints");
  EXPECT_EQ(kind("function 'gemm' uses 240000 bytes of shared memory, over the limit of 232448 "
                 "bytes per block on sm_90"),
            "constraints");
  // The harness's correctness gate.
  EXPECT_EQ(kind("'C' is wrong: relative error 3.1e-01 exceeds 1e-05 (worst at index 17: got "
                 "nan, expected 0.5)"),
            "correctness");
  // Everything else failed while running.
  EXPECT_EQ(kind("CUDA_ERROR_ILLEGAL_ADDRESS: cuCtxSynchronize() failed"), "runtime");
  EXPECT_EQ(kind("worker died: killed by signal SIGSEGV: segfault in tile loop"), "runtime");
  EXPECT_EQ(kind("exit status 3: out of shared memory"), "runtime");
  EXPECT_EQ(kind("unreadable result 'fast!'"), "runtime");
  EXPECT_EQ(kind("setup returned an empty launch closure"), "runtime");
  EXPECT_EQ(kind("no timed reps (reps 0)"), "runtime");
  // A runoff's failed setup is classified by its cause.
  EXPECT_EQ(kind("runoff setup failed: timed out after 60 s"), "timeout");
  // Near misses of the patterns stay runtime.
  EXPECT_EQ(kind("function 'gemm' failed"), "runtime");
  EXPECT_EQ(kind("output is wrong"), "runtime");
}

TEST(T4ExportTest, AMeasuredTrialKeepsItsConfigTimesAndDevice) {
  Trial t = measured(0.1234, 0.12, 200);
  t.warnings = {"gpu busy"};
  const json r = t4_result(t, "minimize");
  EXPECT_EQ(r, json::parse(R"({
    "configuration": {"BM": 64, "LAYOUT": "row"},
    "correctness": 1,
    "invalidity": "correct",
    "measurements": [
      {"name": "time", "unit": "ms", "value": 0.1234},
      {"name": "time_min", "unit": "ms", "value": 0.12},
      {"name": "reps", "unit": "", "value": 200},
      {"name": "phase", "unit": "", "value": "search"},
      {"name": "device", "unit": "", "value": "NVIDIA H200"},
      {"name": "warnings", "unit": "", "value": ["gpu busy"]}
    ],
    "objectives": ["time"],
    "timestamp": "2026-11-29T10:00:00Z",
    "times": {"runtimes": []}
  })"));
}

TEST(T4ExportTest, AnInvalidTrialKeepsItsReasonAndClass) {
  const json r =
      t4_result(invalid("'C' is wrong: relative error 1.0e+00 exceeds 1e-05"), "minimize");
  EXPECT_EQ(r["invalidity"], "correctness");
  EXPECT_EQ(r["correctness"], 0);
  EXPECT_EQ(r["configuration"], json::parse(R"({"BM": 128, "LAYOUT": "col"})"));
  EXPECT_EQ(r["measurements"], json::parse(R"([
    {"name": "error", "unit": "", "value": "'C' is wrong: relative error 1.0e+00 exceeds 1e-05"},
    {"name": "phase", "unit": "", "value": "search"}
  ])"));
  const json timeout = t4_result(invalid("timed out after 20 s"), "minimize");
  EXPECT_EQ(timeout["invalidity"], "timeout");
  EXPECT_EQ(timeout["correctness"], 1);
}

TEST(T4ExportTest, AMaximizingLogExportsAScore) {
  const json r = t4_result(measured(42, 42, 1), "maximize");
  EXPECT_EQ(r["objectives"], json::array({"score"}));
  EXPECT_EQ(r["measurements"][0], json::parse(R"({"name": "score", "unit": "", "value": 42.0})"));
  EXPECT_EQ(r["measurements"][1]["name"], "reps");  // a score has no min time
}

TEST(T4ExportTest, ATrialWithoutTimeOrDeviceLeavesThemOut) {
  Trial t = measured(1, 1, 1);
  t.time.clear();
  t.device.reset();
  const json r = t4_result(t, "minimize");
  EXPECT_FALSE(r.contains("timestamp"));
  for (const json& m : r["measurements"])
    EXPECT_NE(m["name"], "device");
}

TEST(T4ExportTest, TheDocumentHoldsTheSearchAndLeavesTheRunoffOut) {
  Trial runoff = measured(0.1, 0.1, 50);
  runoff.phase = Phase::runoff;
  Trial required = measured(0.2, 0.19, 100);
  required.phase = Phase::required;
  result<T4Export> out = export_t4({log_of(
      "a.jsonl", {required, invalid("timed out after 1 s"), runoff, measured(0.1, 0.1, 200)})});
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_EQ(out->runoff_trials, 1u);
  const json& doc = out->document;
  EXPECT_EQ(doc["schema_version"], "1.0.0");
  ASSERT_EQ(doc["results"].size(), 3u);
  EXPECT_EQ(doc["results"][0]["measurements"][3]["value"], "required");
  EXPECT_EQ(doc["results"][1]["invalidity"], "timeout");
  EXPECT_EQ(doc["results"][2]["measurements"][0]["value"], 0.1);
  EXPECT_EQ(doc["metadata"], json({{"timeunit", "milliseconds"},
                                   {"tuner", "gemm/m<=512"},
                                   {"arch", "sm_90"},
                                   {"space_hash", "abc"},
                                   {"objective", "minimize"},
                                   {"source_hash", nullptr},
                                   {"toolchain", nullptr},
                                   {"exported_by", "tune " + std::string(tuner_version)},
                                   {"runoff_trials_left_out", 1}}));
}

TEST(T4ExportTest, LogsOfOneSearchMergeInOrder) {
  LogHeader with_source;
  with_source.tuner = "gemm/m<=512";
  with_source.space_hash = "abc";
  with_source.arch = "sm_90";
  with_source.source_hash = "5eed";
  result<T4Export> out = export_t4({log_of("a.jsonl", {measured(2, 2, 1)}),
                                    log_of("b.jsonl", {measured(1, 1, 1)}, with_source)});
  ASSERT_TRUE(out) << out.error().str();
  ASSERT_EQ(out->document["results"].size(), 2u);
  EXPECT_EQ(out->document["results"][0]["measurements"][0]["value"], 2.0);
  EXPECT_EQ(out->document["results"][1]["measurements"][0]["value"], 1.0);
  EXPECT_EQ(out->document["metadata"]["source_hash"], "5eed");
}

TEST(T4ExportTest, LogsOfDifferentSearchesAreRefusedNamingEveryDifference) {
  LogHeader other;
  other.tuner = "gemm/big";
  other.space_hash = "def";
  other.arch = "sm_90";
  other.objective = "maximize";
  result<T4Export> out = export_t4({log_of("a.jsonl", {}), log_of("b.jsonl", {}, other)});
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().str(),
            "b.jsonl:1: error: cannot merge with 'a.jsonl', a log of another search: tuner "
            "'gemm/big' (this log) vs 'gemm/m<=512' ('a.jsonl'), space_hash 'def' (this log) vs "
            "'abc' ('a.jsonl'), objective 'maximize' (this log) vs 'minimize' ('a.jsonl')");
}

TEST(T4ExportTest, SourceHashesDifferOnlyWhenBothAreKnown) {
  LogHeader a, b;
  for (LogHeader* h : {&a, &b}) {
    h->tuner = "gemm/m<=512";
    h->space_hash = "abc";
    h->arch = "sm_90";
  }
  a.source_hash = "1111";
  b.source_hash = "2222";
  result<T4Export> out = export_t4({log_of("a.jsonl", {}, a), log_of("b.jsonl", {}, b)});
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().message,
            "cannot merge with 'a.jsonl', a log of another search: source_hash '2222' (this log) "
            "vs '1111' ('a.jsonl')");
}

TEST(T4ExportTest, ASourceHashLearntFromALaterLogIsComparedToo) {
  LogHeader none, one, two;
  for (LogHeader* h : {&none, &one, &two}) {
    h->tuner = "gemm/m<=512";
    h->space_hash = "abc";
    h->arch = "sm_90";
  }
  one.source_hash = "1111";
  two.source_hash = "2222";
  result<T4Export> out = export_t4(
      {log_of("a.jsonl", {}, none), log_of("b.jsonl", {}, one), log_of("c.jsonl", {}, two)});
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().str(),
            "c.jsonl:1: error: cannot merge with 'a.jsonl', a log of another search: source_hash "
            "'2222' (this log) vs '1111' ('b.jsonl')");
}

TEST(T4ExportTest, ParsingReadsTheHeaderAndSkipsBadLines) {
  const std::string text = std::string(header_line) + "\n" + to_json_line(measured(1.5, 1.25, 7)) +
                           "\n" + "not json\n" + R"({"state":"measured"})" + "\n\n" +
                           to_json_line(invalid("x"));
  result<ExportLog> log = parse_export_log("g.jsonl", text);
  ASSERT_TRUE(log) << log.error().str();
  EXPECT_EQ(log->header.tuner, "gemm/m<=512");
  // The last line, without its newline, is a torn append, as a resume and a prior read it.
  ASSERT_EQ(log->trials.size(), 1u);
  EXPECT_EQ(log->trials[0], measured(1.5, 1.25, 7));
  ASSERT_EQ(log->warnings.size(), 3u);
  EXPECT_EQ(log->warnings[0], "g.jsonl:3: warning: skipped a line that is not valid JSON");
  EXPECT_EQ(log->warnings[1], "g.jsonl:4: warning: skipped an unreadable trial: missing 'phase'");
  EXPECT_EQ(log->warnings[2],
            "g.jsonl:6: warning: ignored a torn last line (an interrupted write)");
}

TEST(T4ExportTest, AnInconsistentTrialIsSkippedNotExported) {
  // A minimum above the median cannot have been measured: a forged or corrupt line.
  const std::string text = std::string(header_line) + "\n" + to_json_line(measured(1.5, 9.0, 7)) +
                           "\n" + to_json_line(measured(1.5, 1.25, 7)) + "\n";
  result<ExportLog> log = parse_export_log("g.jsonl", text);
  ASSERT_TRUE(log) << log.error().str();
  ASSERT_EQ(log->trials.size(), 1u);
  EXPECT_EQ(log->trials[0], measured(1.5, 1.25, 7));
  ASSERT_EQ(log->warnings.size(), 1u);
  EXPECT_EQ(log->warnings[0],
            "g.jsonl:2: warning: skipped an inconsistent trial: min_ms 9 is above its median_ms "
            "1.5");
}

TEST(T4ExportTest, ParsingRefusesWhatIsNotATrialLog) {
  auto message = [](std::string_view text) {
    result<ExportLog> log = parse_export_log("x.jsonl", text);
    return log ? std::string("(read)") : log.error().str();
  };
  EXPECT_EQ(message(""), "x.jsonl: error: an empty trial log (no header line)");
  EXPECT_EQ(message("\n  \n"), "x.jsonl: error: an empty trial log (no header line)");
  EXPECT_EQ(message(R"({"record": 1})"),
            "x.jsonl:1: error: not a trial log: the header has no integer 'log_schema'");
  EXPECT_EQ(message(R"({"log_schema": 1, "tuner": 3})"),
            "x.jsonl:1: error: not a trial log: the header's 'tuner' must be a string");
  EXPECT_EQ(message(R"({"log_schema":7,"tuner":"t","space_hash":"h","arch":""})"),
            "x.jsonl:1: error: log_schema 7 is not supported (this tuner reads 1)");
}

// The streamed document is byte for byte what dumping the whole document writes (what `tuner
// export` printed before it streamed), with no result, one, and several across two logs.
TEST(T4ExportTest, TheStreamedTextIsTheDocumentsOwnDump) {
  for (std::size_t n : {0, 1, 5}) {
    std::stringstream results;
    T4Writer writer(results);
    ExportLog a = log_of("a.jsonl", {});
    ASSERT_FALSE(writer.begin(a.path, a.header));
    for (std::size_t i = 0; i < n; ++i)
      writer.add(i % 2 ? invalid("timed out after 1 s")
                       : measured(0.1 + static_cast<double>(i), 0.1, 10));
    ASSERT_FALSE(writer.begin("b.jsonl", a.header));
    writer.add(measured(0.5, 0.4, 3));
    std::ostringstream text;
    writer.finish(results, text);
    const json doc = json::parse(text.str());
    EXPECT_EQ(text.str(), doc.dump(2) + "\n") << n;
    EXPECT_EQ(doc["results"].size(), n + 1);
  }
}

// read_export_log hands on trials as it reads: a log of another search is refused at its
// header, before any of its trials reach the writer.
TEST(T4ExportTest, AStreamedLogOfAnotherSearchStopsAtItsHeader) {
  std::stringstream results;
  T4Writer writer(results);
  ExportLog a = log_of("a.jsonl", {});
  ASSERT_FALSE(writer.begin(a.path, a.header));
  std::istringstream in(
      std::string(header_line).replace(std::string(header_line).find("sm_90"), 5, "sm_80") + "\n" +
      to_json_line(measured(0.1, 0.1, 3)) + "\n");
  LogLines lines("b.jsonl", in);
  std::size_t trials = 0;
  std::optional<diagnostic> problem = read_export_log(
      lines, [&](const LogHeader& h) { return writer.begin("b.jsonl", h); },
      [&](Trial&&) { ++trials; }, [](std::string&&) {});
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->str(),
            "b.jsonl:1: error: cannot merge with 'a.jsonl', a log of another search: arch "
            "'sm_80' (this log) vs 'sm_90' ('a.jsonl')");
  EXPECT_EQ(trials, 0u);
}

}  // namespace
}  // namespace tune
