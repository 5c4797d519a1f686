#include <tuner/core/process/subprocess.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include <tuner/core/base/result.hpp>

namespace tune {
namespace {

TEST(SubprocessTest, AnswersLineByLine) {
  Subprocess p({"sh", "-c", "while read x; do echo \"got $x\"; done"});
  std::string line;
  ASSERT_TRUE(p.send_line("one"));
  ASSERT_EQ(p.read_line(line, 5.0), Subprocess::Read::line);
  EXPECT_EQ(line, "got one");
  ASSERT_TRUE(p.send_line("two"));
  ASSERT_EQ(p.read_line(line, 5.0), Subprocess::Read::line);
  EXPECT_EQ(line, "got two");
  EXPECT_TRUE(p.running());
  EXPECT_TRUE(p.wait().success());
}

TEST(SubprocessTest, TimeoutThenKill) {
  Subprocess p({"sh", "-c", "sleep 30"});
  std::string line;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(p.read_line(line, 0.3), Subprocess::Read::timeout);
  ExitStatus s = p.kill();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  EXPECT_TRUE(s.signaled);
  EXPECT_EQ(s.describe(), "killed by signal SIGKILL");
}

TEST(SubprocessTest, DeathIsExplainedWithTheLastStderrLine) {
  Subprocess p({"sh", "-c", "echo first >&2; echo 'illegal address' >&2; kill -SEGV $$"});
  std::string line;
  EXPECT_EQ(p.read_line(line, 5.0), Subprocess::Read::eof);
  ExitStatus s = p.wait();
  EXPECT_EQ(s.describe(), "killed by signal SIGSEGV");
  EXPECT_EQ(p.last_stderr_line(), "illegal address");
  EXPECT_FALSE(p.send_line("anything"));
}

TEST(SubprocessTest, ExitStatusAndMissingProgram) {
  Subprocess p({"sh", "-c", "exit 3"});
  EXPECT_EQ(p.wait().describe(), "exit status 3");
  try {
    Subprocess missing({"/nonexistent/program"});
    ADD_FAILURE() << "expected tune::error";
  } catch (const error& e) {
    EXPECT_STREQ(e.what(), "cannot run '/nonexistent/program': No such file or directory");
  }
}

TEST(SubprocessTest, ExtraEnvironmentReplacesInheritedVariables) {
  ::setenv("TUNE_X", "inherited", 1);
  Subprocess p({"sh", "-c", "echo $TUNE_X"}, {"TUNE_X=hello"});
  ::unsetenv("TUNE_X");
  std::string line;
  ASSERT_EQ(p.read_line(line, 5.0), Subprocess::Read::line);
  EXPECT_EQ(line, "hello");
}

TEST(RunCapturedTest, CollectsOutputStatusAndTheWholeEnvironmentGiven) {
  CaptureOptions o;
  o.env = std::vector<std::string>{"ONLY=this"};
  Captured c =
      run_captured({"/bin/sh", "-c", "echo out; echo err >&2; echo \"[$ONLY][$HOME]\"; exit 4"}, o);
  EXPECT_EQ(c.out, "out\n[this][]\n");
  EXPECT_EQ(c.err, "err\n");
  EXPECT_EQ(c.status.describe(), "exit status 4");
  EXPECT_FALSE(c.timed_out);
  EXPECT_FALSE(c.stopped);
}

TEST(RunCapturedTest, MergedStreamsKeepTheirOrder) {
  CaptureOptions o;
  o.merge_stderr = true;
  Captured c = run_captured({"sh", "-c", "echo 1; echo 2 >&2; echo 3; echo 4 >&2"}, o);
  EXPECT_EQ(c.out, "1\n2\n3\n4\n");
  EXPECT_EQ(c.err, "");
}

TEST(RunCapturedTest, TimeoutKillsTheWholeProcessGroup) {
  CaptureOptions o;
  o.timeout_s = 0.3;
  const auto start = std::chrono::steady_clock::now();
  // The child and what it started in the background both hold the pipes.
  Captured c = run_captured({"sh", "-c", "sleep 30 & echo started; wait"}, o);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(c.timed_out);
  EXPECT_EQ(c.status.describe(), "killed by signal SIGKILL");
  EXPECT_EQ(c.out, "started\n");
  EXPECT_LT(took.count(), 5.0);
}

TEST(RunCapturedTest, EndsAtTheChildsExitEvenWhenABackgroundProcessHoldsThePipes) {
  const auto start = std::chrono::steady_clock::now();
  const std::string pid_file =
      ::testing::TempDir() + "/subprocess_test." + std::to_string(::getpid()) + ".pid";
  Captured c = run_captured({"sh", "-c", "sleep 5 & echo $! > \"$0\"; echo done", pid_file});
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(c.out, "done\n");
  // The background process went with it.
  std::ifstream in(pid_file);
  pid_t bg = 0;
  in >> bg;
  ASSERT_GT(bg, 0);
  // Gone, or dead and waiting for whoever inherited it to reap it.
  auto state = [&] {
    std::ifstream stat("/proc/" + std::to_string(bg) + "/stat");
    std::string pid, comm, st;
    stat >> pid >> comm >> st;
    return st;  // empty when gone
  };
  for (int i = 0; i < 100 && !(state().empty() || state() == "Z"); ++i)
    ::usleep(10000);
  EXPECT_TRUE(state().empty() || state() == "Z") << state();
  std::remove(pid_file.c_str());
  EXPECT_TRUE(c.status.success());
  EXPECT_LT(took.count(), 4.0);
}

TEST(RunCapturedTest, StopIsAskedAndKills) {
  CaptureOptions o;
  int asked = 0;
  o.stop = [&] { return ++asked > 3; };
  Captured c = run_captured({"sleep", "30"}, o);
  EXPECT_TRUE(c.stopped);
  EXPECT_EQ(c.status.describe(), "killed by signal SIGKILL");
}

TEST(RunCapturedTest, AHugeTimeoutStillAsksStopEveryTenthOfASecond) {
  // A timeout past 2^31 ms once overflowed the int of the wait into an endless poll: the stop
  // (SIGTERM, SIGINT) was never asked and the child ran to its end.
  for (double timeout : {2.2e6, 1e12, 1e300}) {
    CaptureOptions o;
    o.timeout_s = timeout;
    int asked = 0;
    o.stop = [&] { return ++asked > 3; };
    const auto t0 = std::chrono::steady_clock::now();
    Captured c = run_captured({"sleep", "30"}, o);
    EXPECT_TRUE(c.stopped) << timeout;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0)
        << timeout;
  }
}

TEST(RunCapturedTest, KeepsTheTailOfLongOutput) {
  CaptureOptions o;
  o.keep_bytes = 1000;
  Captured c =
      run_captured({"sh", "-c", "i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done"}, o);
  EXPECT_LE(c.out.size(), 2000u);
  EXPECT_TRUE(c.out.ends_with("line1999\n")) << c.out.substr(c.out.size() - 20);
}

TEST(RunCapturedTest, AProgramThatCannotRunIsAnError) {
  EXPECT_THROW(run_captured({"no-such-program-for-tune"}), error);
}

}  // namespace
}  // namespace tune

// Commands run from several threads at once (compile-ahead's compiles beside the search's
// workers): one command's end, which kills the orphans of its group, must never take another
// thread's just-started child for an orphan and reap its exit status from under it.
TEST(RunCapturedTest, CommandsOnSeveralThreadsEachKeepTheirExitStatus) {
  constexpr int threads = 6, runs = 40;
  std::atomic<int> wrong{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (int i = 0; i < runs; ++i) {
        const tune::Captured c = tune::run_captured({"sh", "-c", "exit 3"}, {});
        if (c.status.signaled || c.status.code != 3) ++wrong;
      }
    });
  for (auto& t : pool)
    t.join();
  EXPECT_EQ(wrong.load(), 0) << "of " << threads * runs << " commands";
}
