// What the build steps that read a kernel's records read, as a depfile: `tuner embed` and
// `tuner header` write one (--depfile), so that the tune_embed_winners and tune_generate_header
// steps run again whenever anything their output depends on changes, and an incremental build
// does what a clean one does (docs/cmake.md "Template entries and embedded winners").
#pragma once

#include <filesystem>
#include <vector>

#include <tuner/core/build/kernel_build.hpp>

namespace tune::cli {

/// What verifying `build`'s records reads: the manifest, the space, every source, every project
/// header the cache keys read (CacheKeyer::files, the same list for every config), the records
/// that exist, and nvcc and ptxas (the toolchain fingerprint). Throws what CacheKeyer throws.
std::vector<std::filesystem::path> record_inputs(const KernelBuild& build);

/// Writes `depfile` (Makefile syntax, make_depfile) naming `target` and `inputs`, absolute, each
/// once, in order, leaving out any that does not exist (a missing input would make the step run
/// on every build). Throws tune::error when it cannot be written.
void write_step_depfile(const std::filesystem::path& depfile, const std::filesystem::path& target,
                        const std::vector<std::filesystem::path>& inputs);

}  // namespace tune::cli
