#include <tuner/core/process/stop_signals.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include <tuner/core/base/result.hpp>
#include <tuner/core/process/subprocess.hpp>

namespace tune {
namespace {

TEST(StopSignalsTest, RemembersTheSignalAndRestoresTheOldHandler) {
  struct sigaction before {};
  ::sigaction(SIGTERM, nullptr, &before);
  {
    StopSignals stop;
    EXPECT_EQ(StopSignals::received(), 0);
    ::raise(SIGTERM);  // would end the test binary without the handler
    EXPECT_EQ(StopSignals::received(), SIGTERM);
    ::raise(SIGINT);
    EXPECT_EQ(StopSignals::received(), SIGINT);
  }
  EXPECT_EQ(StopSignals::received(), 0);
  struct sigaction after {};
  ::sigaction(SIGTERM, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

TEST(StopSignalsTest, NestedOwnersShareTheOutermost) {
  struct sigaction before {};
  ::sigaction(SIGINT, nullptr, &before);
  StopSignals outer;
  {
    StopSignals inner;
    ::raise(SIGINT);
  }
  // The inner one restored nothing: the outer one still handles and remembers the signal.
  EXPECT_EQ(StopSignals::received(), SIGINT);
  ::raise(SIGINT);
  EXPECT_EQ(StopSignals::received(), SIGINT);
  struct sigaction now {};
  ::sigaction(SIGINT, nullptr, &now);
  EXPECT_NE(now.sa_handler, before.sa_handler);
}

TEST(StopSignalsTest, KillOnStopEndsTheChildsProcessGroup) {
  StopSignals stop;
  Subprocess child({"sh", "-c", "sleep 30 & wait"});
  StopSignals::kill_on_stop(child.pid());
  ::raise(SIGINT);
  const ExitStatus s = child.wait();
  EXPECT_TRUE(s.signaled);
  EXPECT_EQ(s.signal, SIGKILL);
  StopSignals::forget_child();
}

TEST(StopSignalsTest, ASignalBeforeTheChildIsKnownReachesItWhenItIs) {
  StopSignals stop;
  ::raise(SIGTERM);
  Subprocess child({"sleep", "30"});
  StopSignals::kill_on_stop(child.pid());
  EXPECT_TRUE(child.wait().signaled);
}

TEST(StopSignalsTest, RunAttachedPassesTheSignalOnAndReportsHowTheChildEnded) {
  StopSignals stop;
  // The child runs in this process group; a SIGTERM to this process alone reaches it through
  // the handler, and it dies of it (its default action).
  std::thread killer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(::getpid(), SIGTERM);
  });
  const ExitStatus s = run_attached({"sleep", "30"});
  killer.join();
  EXPECT_TRUE(s.signaled);
  EXPECT_EQ(s.signal, SIGTERM);
  EXPECT_EQ(StopSignals::received(), SIGTERM);
}

TEST(StopSignalsTest, RunAttachedExitStatusAndAMissingProgram) {
  EXPECT_EQ(run_attached({"sh", "-c", "exit 7"}).code, 7);
  try {
    run_attached({"/nonexistent/tool"});
    FAIL() << "expected tune::error";
  } catch (const error& e) {
    EXPECT_STREQ(e.what(), "cannot run '/nonexistent/tool': No such file or directory");
  }
}

}  // namespace
}  // namespace tune
