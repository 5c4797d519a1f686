#include <tuner/core/build/compiler_launcher.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tuner/core/build/manifest.hpp>

namespace tune {
namespace {

using Words = std::vector<std::string>;

TEST(CompilerLauncherTest, SplitsACMakeListOrWords) {
  EXPECT_EQ(split_launcher("srun;--partition=cpu;--quiet"),
            (Words{"srun", "--partition=cpu", "--quiet"}));
  EXPECT_EQ(split_launcher("srun  --partition=cpu\t--quiet "),
            (Words{"srun", "--partition=cpu", "--quiet"}));
  // A list keeps the blanks inside its elements, as CMake does.
  EXPECT_EQ(split_launcher("env;A=a b;ccache"), (Words{"env", "A=a b", "ccache"}));
  EXPECT_EQ(split_launcher("ccache"), (Words{"ccache"}));
  EXPECT_EQ(split_launcher(";;ccache;"), (Words{"ccache"}));
  EXPECT_EQ(split_launcher("  "), Words{});
}

TEST(CompilerLauncherTest, TheEnvironmentOverridesTheBuildAndOffTurnsItOff) {
  Manifest m;
  m.compiler_launcher = {"srun", "--partition=cpu"};
  ::unsetenv("TUNE_COMPILER_LAUNCHER");
  CompilerLauncher l = compiler_launcher(m);
  EXPECT_EQ(l.argv, m.compiler_launcher);
  EXPECT_EQ(l.origin, "CMAKE_CUDA_COMPILER_LAUNCHER");
  EXPECT_EQ(l.describe(), "'srun --partition=cpu' (CMAKE_CUDA_COMPILER_LAUNCHER)");
  ::setenv("TUNE_COMPILER_LAUNCHER", "", 1);  // empty: as unset
  EXPECT_EQ(compiler_launcher(m).argv, m.compiler_launcher);
  ::setenv("TUNE_COMPILER_LAUNCHER", "sccache", 1);
  l = compiler_launcher(m);
  EXPECT_EQ(l.argv, Words{"sccache"});
  EXPECT_EQ(l.origin, "TUNE_COMPILER_LAUNCHER");
  ::setenv("TUNE_COMPILER_LAUNCHER", "off", 1);
  EXPECT_TRUE(compiler_launcher(m).empty());
  ::unsetenv("TUNE_COMPILER_LAUNCHER");
  EXPECT_TRUE(compiler_launcher(Manifest{}).empty());
}

TEST(CompilerLauncherTest, WrapsTheCompilersArgumentVector) {
  const CompilerLauncher none;
  EXPECT_EQ(none.wrap({"nvcc", "-cubin"}), (Words{"nvcc", "-cubin"}));
  const CompilerLauncher srun{{"srun", "-p", "cpu"}, "TUNE_COMPILER_LAUNCHER"};
  EXPECT_EQ(srun.wrap({"nvcc", "-cubin"}), (Words{"srun", "-p", "cpu", "nvcc", "-cubin"}));
}

TEST(CompilerLauncherTest, TellsItsOwnFailureFromTheCompilers) {
  const CompilerLauncher srun{{"/usr/bin/srun", "-p", "cpu"}, "TUNE_COMPILER_LAUNCHER"};
  EXPECT_TRUE(srun.failed_itself("srun: error: Unable to allocate resources: Invalid partition"));
  EXPECT_FALSE(srun.failed_itself("k.cu(3): error: identifier \"x\" is undefined"));
  EXPECT_FALSE(srun.failed_itself(""));
  EXPECT_FALSE(CompilerLauncher{}.failed_itself("srun: error: no"));
  const CompilerLauncher wrapped{{"env", "-u", "SLURM_JOB_ID", "/usr/bin/srun", "-p", "cpu"},
                                 "CMAKE_CUDA_COMPILER_LAUNCHER"};
  EXPECT_TRUE(wrapped.failed_itself("srun: error: Unable to allocate resources"));
  EXPECT_TRUE(wrapped.failed_itself("env: 'srun': No such file or directory"));
  EXPECT_FALSE(wrapped.failed_itself("k.cu(3): error: expected a ';'"));
  const CompilerLauncher ccache{{"ccache"}, "CMAKE_CUDA_COMPILER_LAUNCHER"};
  EXPECT_TRUE(ccache.failed_itself("ccache: error: Failed to create directory /x: Permission"));
}

}  // namespace
}  // namespace tune
