// Fault injection (tuner/core/base/fault_inject.hpp) at every write point of the trial log and of
// an atomically replaced file: the process dies right there (SIGKILL, in a forked death-test
// child), and what it leaves behind is checked here: the log reopens holding exactly the trials
// whose append finished (a torn line is repaired), and the file is the old one or the new one.
#include <tuner/core/base/fault_inject.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/search/trial_log.hpp>

#include "test_dir.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;

class FaultInjectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv("TUNE_FAULT_INJECT");
    dir_ = test::fresh_test_dir("fault_inject_test");
    log_ = dir_ / "gemm.trials.jsonl";
  }
  void TearDown() override {
    ::unsetenv("TUNE_FAULT_INJECT");
    fs::remove_all(dir_.parent_path());
  }

  static LogHeader header() {
    LogHeader h;
    h.tuner = "gemm/m<=512";
    h.space_hash = "h1";
    h.arch = "sm_90";
    return h;
  }
  static Trial trial(int a) {
    Trial t = Trial::measured(1.0 + a, 1.0 + a, 10);
    t.config = Config{{"A", a}};
    t.time = "2026-11-29T10:00:00Z";
    return t;
  }
  // Opens the log and appends trials A=1..n, with TUNE_FAULT_INJECT=`inject`: in a death-test
  // child, so the injected SIGKILL ends only the child.
  void append_dying(const std::string& inject, int n) {
    EXPECT_EXIT(
        {
          ::setenv("TUNE_FAULT_INJECT", inject.c_str(), 1);
          auto log = TrialLog::open(log_, header());
          if (!log) std::_Exit(2);
          for (int a = 1; a <= n; ++a)
            log->append(trial(a));
          std::_Exit(0);  // not killed: the death test fails on the exit status
        },
        ::testing::KilledBySignal(SIGKILL), "");
  }
  // The ids of the trials the log holds when it is opened again (without injection).
  std::vector<std::string> reopened(std::vector<std::string>* warnings = nullptr) {
    auto log = TrialLog::open(log_, header());
    EXPECT_TRUE(log.has_value()) << (log ? "" : log.error().str());
    std::vector<std::string> ids;
    if (!log) return ids;
    for (const Trial& t : log->trials())
      ids.push_back(t.id());
    if (warnings != nullptr) *warnings = log->warnings();
    return ids;
  }
  std::string read(const fs::path& p) const {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::vector<std::string> leftovers() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
  fs::path log_;
};

TEST_F(FaultInjectTest, EveryPointIsListedOnce) {
  std::vector<std::string> names(fault_points().begin(), fault_points().end());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  EXPECT_EQ(names.size(), 13u);
}

TEST_F(FaultInjectTest, UnsetOrOtherPointsDoNothing) {
  fault_point("log-append-after-write");
  ::setenv("TUNE_FAULT_INJECT", "record-save-after-rename", 1);
  fault_point("log-append-after-write");
  ::setenv("TUNE_FAULT_INJECT", "log-append-after-write:3", 1);
  fault_point("log-append-after-write");
  fault_point("log-append-after-write");
  SUCCEED();  // the third would kill this process
}

TEST_F(FaultInjectTest, UnknownPointsAndBadCountsAreReportedNotIgnoredSilently) {
  EXPECT_EXIT(
      {
        ::setenv("TUNE_FAULT_INJECT", "log-apend-after-write", 1);
        fault_point("log-append-after-write");
        ::setenv("TUNE_FAULT_INJECT", "log-append-after-write:0", 1);
        fault_point("log-append-after-write");
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0),
      "TUNE_FAULT_INJECT='log-apend-after-write' names no fault point.*\n.*"
      "TUNE_FAULT_INJECT='log-append-after-write:0' has a count after ':' that is not a whole "
      "number >= 1; no fault will be injected");
}

TEST_F(FaultInjectTest, KilledBeforeTheHeaderLeavesAnEmptyLogThatOpens) {
  append_dying("log-header-before-write", 3);
  EXPECT_EQ(read(log_), "");
  EXPECT_EQ(reopened(), std::vector<std::string>{});
}

TEST_F(FaultInjectTest, KilledAfterTheHeaderLeavesTheHeaderOnly) {
  append_dying("log-header-after-write", 3);
  EXPECT_EQ(read(log_), to_json(header()).dump() + "\n");
  EXPECT_EQ(reopened(), std::vector<std::string>{});
}

TEST_F(FaultInjectTest, KilledBeforeAnAppendLosesOnlyThatTrial) {
  append_dying("log-append-before-write:3", 5);
  EXPECT_EQ(reopened(), (std::vector<std::string>{"A=1", "A=2"}));
}

TEST_F(FaultInjectTest, KilledAfterAnAppendKeepsIt) {
  append_dying("log-append-after-write:3", 5);
  EXPECT_EQ(reopened(), (std::vector<std::string>{"A=1", "A=2", "A=3"}));
}

TEST_F(FaultInjectTest, ATornAppendIsRepairedAndLosesOnlyThatTrial) {
  append_dying("log-append-torn:2", 5);
  const std::string text = read(log_);
  EXPECT_NE(text.back(), '\n');  // half a line is on disk
  std::vector<std::string> warnings;
  EXPECT_EQ(reopened(&warnings), std::vector<std::string>{"A=1"});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            log_.string() + ":3: warning: removed a torn last line (an interrupted write)");
  EXPECT_EQ(reopened(), std::vector<std::string>{"A=1"});  // repaired for good
}

TEST_F(FaultInjectTest, ATornAppendNotSelectedThisTimeWritesTheWholeLine) {
  append_dying("log-append-torn:3", 5);
  EXPECT_EQ(reopened(), (std::vector<std::string>{"A=1", "A=2"}));
}

TEST_F(FaultInjectTest, KilledWhileRepairingATornLineLeavesItRepairable) {
  append_dying("log-append-torn:2", 5);
  const std::string torn = read(log_);
  for (const char* point : {"log-repair-before-write", "log-repair-after-write"}) {
    EXPECT_EXIT(
        {
          ::setenv("TUNE_FAULT_INJECT", point, 1);
          (void)TrialLog::open(log_, header());
          std::_Exit(0);
        },
        ::testing::KilledBySignal(SIGKILL), "")
        << point;
    EXPECT_EQ(reopened(), std::vector<std::string>{"A=1"}) << point;
    std::ofstream(log_, std::ios::binary | std::ios::trunc) << torn;
  }
}

TEST_F(FaultInjectTest, AnAtomicFileIsTheOldOneOrTheNewOneAtEveryPoint) {
  const fs::path file = dir_ / "gemm.json";
  struct Case {
    const char* point;
    bool new_bytes;
  };
  for (Case c : {Case{"record-save-before-write", false}, Case{"record-save-before-rename", false},
                 Case{"record-save-after-rename", true}}) {
    write_file_atomic(file, "old\n", "record-save");
    EXPECT_EXIT(
        {
          ::setenv("TUNE_FAULT_INJECT", c.point, 1);
          write_file_atomic(file, "new\n", "record-save");
          std::_Exit(0);
        },
        ::testing::KilledBySignal(SIGKILL), "")
        << c.point;
    EXPECT_EQ(read(file), c.new_bytes ? "new\n" : "old\n") << c.point;
  }
  // The killed save before its rename left its temporary file; the next clean-up removes it.
  std::vector<std::string> names = leftovers();
  ASSERT_EQ(names.size(), 2u);
  EXPECT_TRUE(names[0].starts_with(".gemm.json.tmp.")) << names[0];
  remove_stale_temporaries(file);
  EXPECT_EQ(leftovers(), std::vector<std::string>{"gemm.json"});
}

}  // namespace
}  // namespace tune
