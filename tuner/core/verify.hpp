// Verifying a kernel's committed record against its build: the one path that `tuner verify`,
// `tuner status`, the ctest test `record.<name>` and the tune target's staleness check share.
// It joins the manifest, the space, the toolchain and the cache keys into a Workspace and runs
// load_verified.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <tuner/core/cache_key.hpp>
#include <tuner/core/manifest.hpp>
#include <tuner/core/record.hpp>
#include <tuner/core/result.hpp>
#include <tuner/core/space.hpp>

namespace tune {

/// A manifest and the space it names.
struct KernelBuild {
  Manifest manifest;
  Space space;
};

/// Reads a manifest and its space; the diagnostic of whichever is bad.
result<KernelBuild> load_kernel_build(const std::filesystem::path& manifest_path);

/// `arch` when given (a diagnostic naming the declared archs when the manifest lacks it),
/// otherwise every arch the manifest declares.
result<std::vector<std::string>> select_archs(const Manifest& manifest, std::string_view arch);

/// The running workspace of one kernel and arch: source hash, space hash, toolchain
/// fingerprint, the host compiler as context, and each bucket's pruned configs and hash. No
/// device is known here (device and driver stay unset, so they never warn). Throws what
/// source_hash and toolchain_fingerprint throw.
result<Workspace> current_workspace(const Manifest& manifest, const Space& space,
                                    std::string_view arch, const std::string& toolchain);

/// Verifies the record at `record_path` for one arch of a kernel (cache keys recomputed with a
/// CacheKeyer, which scans the includes once).
result<Verification> verify_kernel_record(const KernelBuild& build, std::string_view arch,
                                          const std::filesystem::path& record_path,
                                          const VerifyOptions& options = {});

/// As above, for a record in memory (one about to be written): nothing is read but the sources
/// and headers its cache keys cover.
result<Verification> verify_kernel_record(const KernelBuild& build, std::string_view arch,
                                          Record record, const VerifyOptions& options = {});

/// `path` relative to the manifest's project root when it lies under it, else as it is: how
/// messages name project files.
std::string display_path(const Manifest& manifest, const std::filesystem::path& path);

/// The config of `configs` whose id is `id`; strings may also be written unquoted
/// (`LAYOUT=row` finds `LAYOUT="row"`). nullptr when none matches.
const Config* find_config(const std::vector<Config>& configs, std::string_view id);

}  // namespace tune
