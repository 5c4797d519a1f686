// The kernel a command works on: the build its --manifest names and the architectures its --arch
// chooses, loaded once for every command, with the one error print of bad input.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <tuner/core/build/kernel_build.hpp>

namespace tune::cli {

/// How a command's --arch chooses architectures.
enum class ArchChoice {
  every,  ///< select_archs: the one --arch names, or every declared one when it names none
  one,    ///< one_arch: exactly one; --arch may be left out only when the kernel declares one
};

/// A command's kernel: its build and the architectures its --arch chose.
struct ChosenKernel {
  KernelBuild build;
  std::vector<std::string> archs;  ///< one with ArchChoice::one
};

/// The kernel build of `manifest` (load_kernel_build). On bad input prints the diagnostic to
/// stderr and returns nullopt: the command exits with exit_bad_input.
std::optional<KernelBuild> load_build(const std::string& manifest);

/// The architectures of `manifest` that `arch` chooses; bad input as load_build.
std::optional<std::vector<std::string>> choose_archs(const Manifest& manifest,
                                                     const std::string& arch,
                                                     ArchChoice choice = ArchChoice::every);

/// load_build, then choose_archs: what --manifest and --arch name; bad input as load_build.
std::optional<ChosenKernel> load_chosen_kernel(const std::string& manifest, const std::string& arch,
                                               ArchChoice choice = ArchChoice::every);

/// Those of `archs` whose record of `build` is stale or missing (verified as `tuner verify`
/// does): what a tune has to measure. Bad input (a record that does not read) as load_build.
std::optional<std::vector<std::string>> stale_archs(const KernelBuild& build,
                                                    const std::vector<std::string>& archs);

}  // namespace tune::cli
