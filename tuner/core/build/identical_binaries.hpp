// Candidates whose cubins are byte-identical (the same SHA-256 in their cache entries): a param
// that never reaches the kernel (a macro spelled otherwise in the source, a template entry
// without its placeholder) gives as many candidates as values and one binary. `tuner warm` names
// such a param; a tune measures each binary once (tuner/core/tune/kernel_tune.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <tuner/core/base/config.hpp>

namespace tune {

/// What byte-identical cubins say of a kernel's valid candidates on one architecture.
struct IdenticalBinaries {
  std::size_t candidates = 0;  ///< valid candidates compared
  std::size_t distinct = 0;    ///< distinct cubins among them
  /// Each param whose values never change the binary: among the candidates that differ only in
  /// it, every group gives one cubin, and at least one group has two or more candidates.
  std::vector<std::string> params;
};

/// Compares `cubins[i]`, the SHA-256 of `configs[i]`'s cubin ("" for an invalid or missing
/// candidate, which is left out).
IdenticalBinaries identical_binaries(const std::vector<Config>& configs,
                                     const std::vector<std::string>& cubins);

/// For people, nothing when every binary is distinct: `param 'LOAD' never changes the binary:
/// 18 candidates, 9 distinct` per such param, else `18 candidates compiled to 9 distinct
/// binaries`; each followed by what it means.
std::vector<std::string> describe(const IdenticalBinaries& found);

}  // namespace tune
