#include <tuner/core/search/file_lock.hpp>
#include <tuner/core/search/trial_log.hpp>

#include <tuner/core/base/identity.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "test_dir.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;

class TrialLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_test_dir("trial_log_test");
    path_ = dir_ / "gemm.trials.jsonl";
  }
  void TearDown() override { fs::remove_all(dir_.parent_path()); }

  static LogHeader header() {
    LogHeader h;
    h.tuner = "gemm/m<=512";
    h.space_hash = "h1";
    h.arch = "sm_90";
    return h;
  }
  static std::string header_line(const LogHeader& h = header()) { return to_json(h).dump() + "\n"; }

  static Trial trial(int a, double median = 1.0) {
    Trial t = Trial::measured(median, median, 10);
    t.config = Config{{"A", a}};
    t.time = "2026-11-29T10:00:00Z";
    return t;
  }

  std::string read() const {
    std::ifstream in(path_, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  void write(const std::string& text) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << text;
  }
  std::string refusal(const LogHeader& h = header()) const {
    auto log = TrialLog::open(path_, h);
    return log.has_value() ? "(opened)" : log.error().str();
  }

  fs::path dir_;
  fs::path path_;
};

TEST_F(TrialLogTest, FreshLogIsHeadedAndItsDirectoriesCreated) {
  path_ = dir_ / "tune" / "gemm" / "sm_90" / "m%3C%3D512.trials.jsonl";
  auto log = TrialLog::open(path_, header());
  ASSERT_TRUE(log.has_value()) << log.error().str();
  EXPECT_EQ(read(), R"({"arch":"sm_90","log_schema":1,"objective":"minimize","source_hash":null,)"
                    R"("space_hash":"h1","toolchain":null,"tuner":"gemm/m<=512"})"
                    "\n");
  EXPECT_TRUE(log->trials().empty());
  EXPECT_TRUE(log->warnings().empty());
}

TEST_F(TrialLogTest, AppendsWholeLinesAndReopensThem) {
  {
    auto log = TrialLog::open(path_, header());
    ASSERT_TRUE(log.has_value());
    log->append(trial(1));
    Trial bad = Trial::invalid("exit status 3: boom");
    bad.config = Config{{"A", 2}};
    log->append(bad);
  }
  Trial bad = Trial::invalid("exit status 3: boom");
  bad.config = Config{{"A", 2}};
  EXPECT_EQ(read(), header_line() + to_json_line(trial(1)) + "\n" + to_json_line(bad) + "\n");
  auto log = TrialLog::open(path_, header());
  ASSERT_TRUE(log.has_value());
  ASSERT_EQ(log->trials().size(), 2u);
  EXPECT_EQ(log->trials()[0], trial(1));
  EXPECT_EQ(log->trials()[1], bad);
  EXPECT_TRUE(log->warnings().empty());
}

TEST_F(TrialLogTest, ForeignHeaderIsRefusedWithEveryFieldAndLeftByteIdentical) {
  write(header_line() + to_json_line(trial(1)) + "\n");
  const std::string before = read();
  LogHeader other = header();
  other.tuner = "gemm/big";
  other.space_hash = "h2";
  other.arch = "sm_80";
  other.objective = "maximize";
  EXPECT_EQ(refusal(other),
            path_.string() +
                ":1: error: log belongs to another search: tuner 'gemm/m<=512' (log) vs "
                "'gemm/big' (this run), space_hash 'h1' (log) vs 'h2' (this run), arch 'sm_90' "
                "(log) vs 'sm_80' (this run), objective 'minimize' (log) vs 'maximize' (this "
                "run); it was left untouched: move it away or use another log path");
  EXPECT_EQ(read(), before);
  EXPECT_FALSE(fs::exists(FileLock::lock_path(path_)));
}

TEST_F(TrialLogTest, SourceHashAndToolchainAreComparedOnlyWhenBothSidesCarryThem) {
  write(header_line());
  LogHeader with = header();
  with.source_hash = "s1";
  with.toolchain = "nvcc 13.0.88";
  EXPECT_EQ(refusal(with), "(opened)");

  LogHeader logged = with;
  write(header_line(logged));
  LogHeader other = with;
  other.source_hash = "s2";
  other.toolchain = "nvcc 12.4.1";
  EXPECT_EQ(refusal(other),
            path_.string() +
                ":1: error: log belongs to another search: source_hash 's1' (log) vs 's2' (this "
                "run), toolchain 'nvcc 13.0.88' (log) vs 'nvcc 12.4.1' (this run); it was left "
                "untouched: move it away or use another log path");
}

TEST_F(TrialLogTest, HeaderOfAnotherSchemaIsRefused) {
  write(R"({"log_schema":2,"search":"gemm"})"
        "\n");
  EXPECT_EQ(refusal(), path_.string() +
                           ":1: error: log belongs to another search: log_schema 2 (log) vs 1 "
                           "(this run); it was left untouched: move it away or use another log "
                           "path");
}

TEST_F(TrialLogTest, HeaderWithoutObjectiveReadsAsMinimize) {
  nlohmann::json j = to_json(header());
  j.erase("objective");
  write(j.dump() + "\n");
  EXPECT_EQ(refusal(), "(opened)");
  LogHeader maximize = header();
  maximize.objective = "maximize";
  EXPECT_EQ(refusal(maximize),
            path_.string() +
                ":1: error: log belongs to another search: objective 'minimize' (log) vs "
                "'maximize' (this run); it was left untouched: move it away or use another log "
                "path");
}

TEST_F(TrialLogTest, NonEmptyFileWithoutValidHeaderIsRefusedUntouched) {
  for (std::string text : {std::string("hello\n"), std::string("hello"),
                           std::string("[1,2]\n") + to_json_line(trial(1)) + "\n"}) {
    write(text);
    EXPECT_EQ(refusal(),
              path_.string() + (text[0] == 'h' ? ":1: error: not a trial log: the first line is "
                                                 "not valid JSON"
                                               : ":1: error: not a trial log: the header must be "
                                                 "a JSON object"))
        << text;
    EXPECT_EQ(read(), text);
  }
  write(R"({"log_schema":1,"tuner":"gemm/m<=512"})"
        "\n");
  EXPECT_EQ(
      refusal(),
      path_.string() + ":1: error: not a trial log: the header's 'space_hash' must be a string");
}

TEST_F(TrialLogTest, TornHeaderOnlyCountsAsEmpty) {
  const std::string full = header_line();
  write(full.substr(0, 17));
  auto log = TrialLog::open(path_, header());
  ASSERT_TRUE(log.has_value()) << log.error().str();
  EXPECT_EQ(log->warnings(),
            std::vector<std::string>{path_.string() +
                                     ":1: warning: replaced a torn header (the log held nothing "
                                     "else)"});
  EXPECT_EQ(read(), full);
}

TEST_F(TrialLogTest, CompleteHeaderWithoutNewlineIsStillCompared) {
  LogHeader other = header();
  other.arch = "sm_80";
  std::string line = header_line(other);
  write(line.substr(0, line.size() - 1));
  EXPECT_EQ(refusal(), path_.string() +
                           ":1: error: log belongs to another search: arch 'sm_80' (log) vs "
                           "'sm_90' (this run); it was left untouched: move it away or use "
                           "another log path");
  EXPECT_EQ(read(), line.substr(0, line.size() - 1));
}

TEST_F(TrialLogTest, TornLastLineIsRepairedBeforeTheNextAppend) {
  const std::string good = header_line() + to_json_line(trial(1)) + "\n";
  write(good + to_json_line(trial(2)).substr(0, 30));
  {
    auto log = TrialLog::open(path_, header());
    ASSERT_TRUE(log.has_value());
    EXPECT_EQ(log->trials(), std::vector<Trial>{trial(1)});
    EXPECT_EQ(log->warnings(),
              std::vector<std::string>{path_.string() +
                                       ":3: warning: removed a torn last line (an interrupted "
                                       "write)"});
    EXPECT_EQ(read(), good);
    log->append(trial(3));
  }
  EXPECT_EQ(read(), good + to_json_line(trial(3)) + "\n");
  auto log = TrialLog::open(path_, header());
  ASSERT_TRUE(log.has_value());
  EXPECT_EQ(log->trials(), (std::vector<Trial>{trial(1), trial(3)}));
  EXPECT_TRUE(log->warnings().empty());
}

TEST_F(TrialLogTest, UnreadableLinesAreSkippedWithAWarningNamingTheLine) {
  const std::string text = header_line() + "garbage\n" + to_json_line(trial(1)) + "\n" +
                           R"({"config_id":"A=9","params":{"A":1},"state":"invalid",)"
                           R"("reason":"x","phase":"search"})"
                           "\n\n" +
                           to_json_line(trial(2)) + "\n";
  write(text);
  auto log = TrialLog::open(path_, header());
  ASSERT_TRUE(log.has_value());
  EXPECT_EQ(log->trials(), (std::vector<Trial>{trial(1), trial(2)}));
  EXPECT_EQ(log->warnings(),
            (std::vector<std::string>{
                path_.string() + ":2: warning: skipped a line that is not valid JSON",
                path_.string() +
                    ":4: warning: skipped an unreadable trial: 'config_id' 'A=9' does not match "
                    "its params ('A=1')",
                path_.string() + ":5: warning: skipped a line that is not valid JSON"}));
  EXPECT_EQ(read(), text);  // skipped lines stay: only a torn last line is ever cut
}

TEST_F(TrialLogTest, TheTrialRulesOfEveryReaderHoldOnResume) {
  // A key said twice (a parser keeps the last: 0.0001 ms) and a minimum above its median were
  // adopted on resume, while export skipped them.
  std::string twice = to_json_line(trial(2, 5.0));
  twice.insert(twice.size() - 1, R"(,"median_ms":0.0001)");
  Trial inverted = Trial::measured(0.5, 1.0, 10);
  inverted.config = Config{{"A", 3}};
  inverted.time = "2026-11-29T10:00:00Z";
  write(header_line() + to_json_line(trial(1)) + "\n" + twice + "\n" + to_json_line(inverted) +
        "\n");
  auto log = TrialLog::open(path_, header());
  ASSERT_TRUE(log.has_value());
  EXPECT_EQ(log->trials(), std::vector<Trial>{trial(1)});
  EXPECT_EQ(log->warnings(),
            (std::vector<std::string>{
                path_.string() + ":3: warning: skipped an inconsistent trial: key 'median_ms' "
                                 "appears twice in one object: keep one of them (a reader "
                                 "would silently take the last)",
                path_.string() + ":4: warning: skipped an inconsistent trial: min_ms 1 is above "
                                 "its median_ms 0.5"}));
  // A score (maximize) is no time: its min above its median is what the objective said.
  EXPECT_FALSE(trial_line_problem(to_json_line(inverted), inverted, true));
  EXPECT_TRUE(trial_line_problem(to_json_line(inverted), inverted, false));
}

TEST_F(TrialLogTest, ASymlinkedLogIsRefusedAsEveryLogReaderSaysIt) {
  // read_log (a prior, `tuner status`) said "cannot read the file: Too many levels of symbolic
  // links" where the other readers name the link.
  { ASSERT_TRUE(TrialLog::open(path_, header())); }
  const auto link = dir_ / "link.trials.jsonl";
  std::filesystem::create_symlink(path_, link);
  result<LogContents> r = read_log(link);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().str(), link.string() +
                                 ": error: is a symbolic link; tune never writes through one (it "
                                 "could point anywhere): remove it");
}

TEST_F(TrialLogTest, SecondWriterIsRefusedNamingTheHolder) {
  auto first = TrialLog::open(path_, header());
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(fs::exists(FileLock::lock_path(path_)));
  LockHolder me = FileLock::self();
  EXPECT_EQ(refusal(), fmt::format("{}: error: log is locked by pid {} on host '{}'",
                                   path_.string(), me.pid, me.host));
  // Moving the open log keeps the lock.
  TrialLog moved = std::move(*first);
  EXPECT_NE(refusal(), "(opened)");
  moved.append(trial(1));
  { TrialLog gone = std::move(moved); }
  EXPECT_FALSE(fs::exists(FileLock::lock_path(path_)));
  EXPECT_EQ(refusal(), "(opened)");
}

TEST_F(TrialLogTest, LockIsReleasedWhenItsHolderDies) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto log = TrialLog::open(path_, header());
    char c = log.has_value() ? 'y' : 'n';
    if (::write(ready[1], &c, 1) != 1) ::_exit(1);
    ::pause();  // killed by the parent, destructors never run
    ::_exit(0);
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(c, 'y');
  EXPECT_EQ(refusal(), fmt::format("{}: error: log is locked by pid {} on host '{}'",
                                   path_.string(), child, FileLock::self().host));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(fs::exists(FileLock::lock_path(path_)));  // the dead holder's note is left ...
  EXPECT_EQ(refusal(), "(opened)");                     // ... and does not hold anyone back
}

TEST(HeaderTest, JsonRoundTripAndDifferences) {
  LogHeader h;
  h.tuner = "k/b";
  h.space_hash = "s";
  h.arch = "";
  h.toolchain = "nvcc 13.0.88";
  h.objective = "maximize";
  auto back = header_from_json(to_json(h));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, h);
  EXPECT_TRUE(header_differences(h, h).empty());
  LogHeader other = h;
  other.log_schema = 7;
  EXPECT_EQ(header_differences(h, other),
            std::vector<std::string>{"log_schema 1 (log) vs 7 (this run)"});
  EXPECT_EQ(header_from_json(nlohmann::json{{"log_schema", 1},
                                            {"tuner", "t"},
                                            {"space_hash", "s"},
                                            {"arch", ""},
                                            {"objective", "fastest"}})
                .error()
                .message,
            "the header's 'objective' must be 'minimize' or 'maximize'");
}

BuildIdentity identity_v1() {
  BuildIdentity id;
  id.arch = "sm_90";
  id.argv = {"nvcc", "-cubin", "-arch=sm_90",    "-O3", "-Ikernels/include",
             "-o",   "<out>",  "kernels/gemm.cu"};
  id.entry = "gemm";
  id.files = {{"common.cuh", "bb"}, {"kernels/gemm.cu", "aa"}, {"tile.cuh", "cc"}};
  id.toolchain = "nvcc 13.0.88, ptxas 13.0.88";
  return id;
}

TEST(IdentityTest, NamesExactlyTheInputThatChanged) {
  const BuildIdentity v1 = identity_v1();
  EXPECT_TRUE(identity_changes(v1, v1).empty());
  EXPECT_EQ(v1.digest().substr(0, 3), "i1:");
  BuildIdentity v2 = v1;
  v2.files[2].second = "dd";
  EXPECT_EQ(identity_changes(v1, v2), std::vector<std::string>{"'tile.cuh' changed"});
  EXPECT_NE(v1.digest(), v2.digest());
  v2 = v1;
  v2.argv.insert(v2.argv.begin() + 4, "-lineinfo");
  v2.files.emplace_back("detail/x.cuh", "ee");
  v2.files.erase(v2.files.begin());
  EXPECT_EQ(identity_changes(v1, v2),
            (std::vector<std::string>{"'detail/x.cuh' is newly included",
                                      "'common.cuh' is no longer included", "'-lineinfo' is new"}));
  v2 = v1;
  v2.toolchain = "nvcc 13.1.0, ptxas 13.1.0";
  v2.entry = "gemm_v2";
  EXPECT_EQ(identity_changes(v1, v2),
            (std::vector<std::string>{
                "toolchain 'nvcc 13.0.88, ptxas 13.0.88' -> 'nvcc 13.1.0, ptxas 13.1.0'",
                "entry 'gemm' -> 'gemm_v2'"}));
  // The JSON round trip gives the same digest; a damaged one does not read.
  result<BuildIdentity> back = identity_from_json(to_json(v1));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->digest(), v1.digest());
  nlohmann::json bad = to_json(v1);
  bad["files"]["tile.cuh"] = 3;
  EXPECT_FALSE(identity_from_json(bad).has_value());
}

LogHeader header_of(const BuildIdentity& id) {
  LogHeader h;
  h.tuner = "gemm/large";
  h.space_hash = "s";
  h.arch = "sm_90";
  h.source_hash = "src";
  h.toolchain = id.toolchain;
  h.identity = id.digest();
  h.identity_inputs = to_json(id);
  return h;
}

TEST(JudgeLogTest, AnotherBuildIsThePriorWhateverChangedAnotherSearchIsRefused) {
  const LogHeader v1 = header_of(identity_v1());
  EXPECT_EQ(judge_log(v1, v1).fate, LogFate::resume);
  // A header the source hash does not see (only an included file changed).
  BuildIdentity edited = identity_v1();
  edited.files[2].second = "dd";
  LogJudgement j = judge_log(v1, header_of(edited));
  EXPECT_EQ(j.fate, LogFate::prior);
  EXPECT_EQ(j.changes, std::vector<std::string>{"'tile.cuh' changed"});
  // The header as written and read back names the same.
  result<LogHeader> read = header_from_json(to_json(v1));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(*read, v1);
  EXPECT_EQ(judge_log(*read, header_of(edited)).changes, j.changes);
  // A log written before logs carried an identity is of an unknown build.
  LogHeader old = v1;
  old.identity.reset();
  old.identity_inputs = nullptr;
  j = judge_log(old, v1);
  EXPECT_EQ(j.fate, LogFate::prior);
  EXPECT_EQ(j.changes, std::vector<std::string>{
                           "the log was written before logs carried their build's identity"});
  // The pruned space: another build of the same search too.
  LogHeader pruned = v1;
  pruned.space_hash = "s2";
  EXPECT_EQ(judge_log(v1, pruned).changes,
            std::vector<std::string>{"the bucket's configs changed (the space or its pruning)"});
  // Another arch or objective is another search: refused, with the fields.
  LogHeader other = v1;
  other.tuner = "gemm/small";
  j = judge_log(v1, other);
  EXPECT_EQ(j.fate, LogFate::refuse);
  EXPECT_EQ(j.changes,
            std::vector<std::string>{"tuner 'gemm/large' (log) vs 'gemm/small' (this run)"});
  // Only the strategy differs: refused (the same build).
  LogHeader strategy = v1;
  strategy.search = {{"strategy", "random"}};
  EXPECT_EQ(judge_log(v1, strategy).fate, LogFate::refuse);
  // Inputs that do not give the digest beside them are dropped when read: only words are lost.
  nlohmann::json forged = to_json(v1);
  forged["inputs"]["entry"] = "other";
  read = header_from_json(forged);
  ASSERT_TRUE(read.has_value());
  EXPECT_TRUE(read->identity_inputs.is_null());
  EXPECT_EQ(read->identity, v1.identity);
}

Trial logged(int a, bool measured, Phase phase = Phase::search,
             std::optional<std::string> key = std::nullopt, double median = 1.0) {
  Trial t = measured ? Trial::measured(median, median, 5) : Trial::invalid("boom");
  t.config = Config{{"A", a}};
  t.phase = phase;
  t.cache_key = std::move(key);
  return t;
}

TEST(AdoptableTrialsTest, OnlyMeasuredTrialsStillInTheSpaceWithTheCurrentKey) {
  std::vector<Config> space{Config{{"A", 1}}, Config{{"A", 2}}, Config{{"A", 3}}, Config{{"A", 4}},
                            Config{{"A", 5}}};
  std::vector<Trial> log{
      logged(1, true),                            // adopted
      logged(2, false),                           // invalid: retried
      logged(3, true, Phase::runoff),             // runoff: re-run
      logged(9, true),                            // left the space
      logged(4, true, Phase::required, "old"),    // stale key
      logged(5, true, Phase::search, "k5", 2.0),  // superseded ...
      logged(5, true, Phase::search, "k5", 3.0),  // ... by the last one
  };
  std::vector<std::optional<std::string>> keys{std::nullopt, std::nullopt, std::nullopt, "new",
                                               "k5"};
  auto adopt = adoptable_trials(log, space, &keys);
  ASSERT_EQ(adopt.size(), 2u);
  EXPECT_EQ(adopt.at("A=1"), log[0]);
  EXPECT_EQ(adopt.at("A=5"), log[6]);

  // Without keys, a logged key does not matter.
  adopt = adoptable_trials(log, space);
  EXPECT_EQ(adopt.size(), 3u);
  EXPECT_EQ(adopt.at("A=4"), log[4]);
}

// Issue 35: the check of an adopted trial replaces it for good, even when the check came back
// invalid (the config does not run here): a resumed run never adopts the discarded trial again.
TEST(AdoptableTrialsTest, ACheckReplacesTheAdoptedTrialItChecked) {
  std::vector<Config> space{Config{{"A", 1}}, Config{{"A", 2}}};
  Trial forged1 = logged(1, true, Phase::search, std::nullopt, 0.01);
  forged1.remote = "mallory";
  Trial forged2 = logged(2, true, Phase::search, std::nullopt, 0.01);
  forged2.shard = "2/4";
  Trial check1 = logged(1, true, Phase::search, std::nullopt, 7.8);
  check1.checks = AdoptedCheck{"the remote store (measured on mallory)", 0.01, false};
  Trial check2 = logged(2, false);
  check2.checks = AdoptedCheck{"shard 2/4", 0.01, false};
  const std::vector<Trial> log{forged1, forged2, check1, check2};
  auto adopt = adoptable_trials(log, space);
  ASSERT_EQ(adopt.size(), 1u);
  EXPECT_EQ(adopt.at("A=1"), check1);
  // And the fields read back from a log line.
  result<Trial> back = trial_from_json(to_json(check1));
  ASSERT_TRUE(back) << back.error().str();
  EXPECT_EQ(*back, check1);
  EXPECT_EQ(trial_from_json(to_json(forged2))->shard, std::optional<std::string>("2/4"));
  EXPECT_EQ(forged2.adopted_from(), std::optional<std::string>("shard 2/4"));
  EXPECT_FALSE(check1.adopted());
  nlohmann::json bad = to_json(check1);
  bad["checks"]["agreed"] = "yes";
  EXPECT_FALSE(trial_from_json(bad));
}

}  // namespace
}  // namespace tune
