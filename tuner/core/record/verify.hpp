// Verifying a kernel's committed record against its build: the one path that `tuner verify`,
// `tuner status`, the ctest test `record.<name>`, the tune target's staleness check and `tuner
// run` (before it writes a record) share. It joins the manifest, the space, the toolchain and
// the cache keys into a Workspace and runs load_verified.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <tuner/core/base/result.hpp>
#include <tuner/core/build/cache_key.hpp>
#include <tuner/core/build/kernel_build.hpp>
#include <tuner/core/build/manifest.hpp>
#include <tuner/core/record/record.hpp>
#include <tuner/core/space/space.hpp>

namespace tune {

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

}  // namespace tune
