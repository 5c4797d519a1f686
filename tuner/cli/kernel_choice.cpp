#include <tuner/cli/kernel_choice.hpp>

#include <cstdio>
#include <utility>

#include <fmt/core.h>

#include <tuner/core/record/verify.hpp>

namespace tune::cli {

std::optional<KernelBuild> load_build(const std::string& manifest) {
  result<KernelBuild> build = load_kernel_build(manifest);
  if (!build) {
    fmt::print(stderr, "{}\n", build.error().str());
    return std::nullopt;
  }
  return std::move(*build);
}

std::optional<std::vector<std::string>> choose_archs(const Manifest& manifest,
                                                     const std::string& arch, ArchChoice choice) {
  if (choice == ArchChoice::one) {
    result<std::string> chosen = one_arch(manifest, arch);
    if (!chosen) {
      fmt::print(stderr, "{}\n", chosen.error().str());
      return std::nullopt;
    }
    return std::vector<std::string>{std::move(*chosen)};
  }
  result<std::vector<std::string>> archs = select_archs(manifest, arch);
  if (!archs) {
    fmt::print(stderr, "{}\n", archs.error().str());
    return std::nullopt;
  }
  return std::move(*archs);
}

std::optional<ChosenKernel> load_chosen_kernel(const std::string& manifest, const std::string& arch,
                                               ArchChoice choice) {
  std::optional<KernelBuild> build = load_build(manifest);
  if (!build) return std::nullopt;
  std::optional<std::vector<std::string>> archs = choose_archs(build->manifest, arch, choice);
  if (!archs) return std::nullopt;
  return ChosenKernel{std::move(*build), std::move(*archs)};
}

std::optional<std::vector<std::string>> stale_archs(const KernelBuild& build,
                                                    const std::vector<std::string>& archs) {
  std::vector<std::string> stale;
  for (const std::string& arch : archs) {
    result<Verification> v =
        verify_kernel_record(build, arch, build.manifest.record_path(arch).value());
    if (!v) {
      fmt::print(stderr, "{}\n", v.error().str());
      return std::nullopt;
    }
    if (!v->ok()) stale.push_back(arch);
  }
  return stale;
}

}  // namespace tune::cli
