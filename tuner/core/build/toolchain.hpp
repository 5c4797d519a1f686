// The toolchain fingerprint (docs/manifest.md "The toolchain fingerprint"): what generates device
// code, human readable.
// The CUDA compiler's and assembler's versions decide the cubin; the host compiler is recorded
// beside them as information only (GPU hosts and CI rarely share one).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace tune {

struct Manifest;

/// The versions of the tools that generate device code.
struct Toolchain {
  std::string nvcc;           ///< e.g. "13.0.88"
  std::string ptxas;          ///< e.g. "13.0.88"
  std::string host_compiler;  ///< informational, from the manifest; empty when unknown

  /// `nvcc 13.0.88, ptxas 13.0.88`: what records, logs and cache keys carry.
  std::string fingerprint() const;
};

/// Runs `<nvcc> --version` and `<dir of nvcc>/ptxas --version` (never through a shell) and
/// reads their versions. Each nvcc path is asked once per process; later calls return the
/// cached answer. The host compiler is left empty. Throws tune::error when a tool cannot be run
/// or prints no version ("release X.Y, VX.Y.Z").
Toolchain toolchain_fingerprint(const std::filesystem::path& nvcc);

/// The manifest's toolchain: its nvcc's fingerprint and its host compiler.
Toolchain manifest_toolchain(const Manifest& manifest);

/// The version in a CUDA tool's `--version` text ("Cuda compilation tools, release 13.0,
/// V13.0.88" gives "13.0.88"); empty when there is none.
std::string parse_cuda_tool_version(std::string_view version_text);

}  // namespace tune
