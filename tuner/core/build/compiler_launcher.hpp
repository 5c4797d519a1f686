// The compiler launcher (docs/scaling.md "Compiling elsewhere"): a command put in front of every
// compile of a candidate, as CMake puts CMAKE_CUDA_COMPILER_LAUNCHER in front of nvcc (ccache,
// sccache, icecc, `srun --partition=cpu`). It changes where and how a compile runs, never what
// it produces, so it is no input of the cache key: a candidate compiled through it is the one a
// compile without it would give, under the same key.
//
// Example:
//   const CompilerLauncher launcher = compiler_launcher(manifest);   // env, else the manifest
//   const CandidateStore store(cache, remote, manifest.compile_log, timeout_s, launcher);
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tuner/core/process/subprocess.hpp>

namespace tune {

struct Manifest;

/// A compiler launcher and where it was set (for messages).
struct CompilerLauncher {
  std::vector<std::string> argv;  ///< the launcher and its arguments; empty: none
  /// Where it came from: `TUNE_COMPILER_LAUNCHER`, or `CMAKE_CUDA_COMPILER_LAUNCHER` (the
  /// manifest's `compiler_launcher`, which tune_add_kernel writes from it).
  std::string origin;

  bool empty() const noexcept { return argv.empty(); }
  /// `argv` with the launcher's arguments in front (as they are when there is none).
  std::vector<std::string> wrap(std::vector<std::string> argv) const;
  /// run_captured of `wrap(argv)`. Throws tune::error when it cannot be started, naming the
  /// launcher and where it was set when there is one (`the compiler launcher 'srun -p cpu'
  /// (TUNE_COMPILER_LAUNCHER): cannot run 'srun': No such file or directory`).
  Captured run(std::vector<std::string> argv, const CaptureOptions& options) const;
  /// Whether a failed run's first error line (first_error) is the launcher's own message: it
  /// starts with the name of a program among the launcher's words and a colon (`srun: error:
  /// ...` from `srun ...` or `env -u SLURM_JOB_ID srun ...`, `ccache: error: ...`). Then the
  /// launcher failed, not the compiler, and the verdict is not the candidate's.
  bool failed_itself(std::string_view first_error) const;
  /// `'srun' (TUNE_COMPILER_LAUNCHER)`: how messages name it.
  std::string describe() const;
};

/// The words of a launcher setting: a CMake list (`srun;--partition=cpu`) when it holds a `;`,
/// else the words between blanks (`srun --partition=cpu`); empty words are dropped.
std::vector<std::string> split_launcher(std::string_view text);

/// The launcher of `manifest`'s compiles: `TUNE_COMPILER_LAUNCHER` when it is set and not
/// empty (`off`: none, whatever the build says), else the manifest's `compiler_launcher`.
CompilerLauncher compiler_launcher(const Manifest& manifest);

}  // namespace tune
