// A declared kernel as the build describes it: its manifest (written by tune_add_kernel) and the
// space the manifest names, plus the small questions every command asks of them: which
// architectures, which config an id on the command line means, how to name a project file in a
// message. Verification (verify.hpp) and the tune (supervisor.hpp) start from a KernelBuild.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/build/manifest.hpp>
#include <tuner/core/space/space.hpp>

namespace tune {

/// A manifest and the space it names.
struct KernelBuild {
  Manifest manifest;
  Space space;

  /// The bucket named `name` (Space::find_bucket: a diagnostic naming the space's buckets and
  /// the near miss when there is none).
  result<const Bucket*> bucket(std::string_view name) const { return space.find_bucket(name); }
};

/// Reads a manifest and its space; the diagnostic of whichever is bad.
result<KernelBuild> load_kernel_build(const std::filesystem::path& manifest_path);

/// `arch` when given (a diagnostic naming the declared archs when the manifest lacks it),
/// otherwise every arch the manifest declares.
result<std::vector<std::string>> select_archs(const Manifest& manifest, std::string_view arch);

/// The one architecture a command acts on: `arch` when given (checked as select_archs does),
/// else the manifest's only one; a diagnostic asking for --arch when it declares several.
result<std::string> one_arch(const Manifest& manifest, std::string_view arch);

/// `path` relative to the manifest's project root when it lies under it, else as it is: how
/// messages name project files.
std::string display_path(const Manifest& manifest, const std::filesystem::path& path);

/// The config of `configs` whose id is `id`, its params in any order (`TILE=32,LOAD=cached`
/// finds `LOAD="cached",TILE=32`); strings may also be written unquoted (`LAYOUT=row` finds
/// `LAYOUT="row"`). nullptr when none matches.
const Config* find_config(const std::vector<Config>& configs, std::string_view id);

}  // namespace tune
