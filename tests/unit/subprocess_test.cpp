#include <tuner/core/subprocess.hpp>

#include <chrono>

#include <gtest/gtest.h>

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
  Subprocess missing({"/nonexistent/program"});
  ExitStatus s = missing.wait();
  EXPECT_EQ(s.code, 127);
  EXPECT_EQ(missing.last_stderr_line(),
            "cannot run '/nonexistent/program': No such file or directory");
}

TEST(SubprocessTest, ExtraEnvironment) {
  Subprocess p({"sh", "-c", "echo $TUNE_X"}, {"TUNE_X=hello"});
  std::string line;
  ASSERT_EQ(p.read_line(line, 5.0), Subprocess::Read::line);
  EXPECT_EQ(line, "hello");
}

}  // namespace
}  // namespace tune
