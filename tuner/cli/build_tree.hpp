// The kernels of a build tree, as the commands that take --build-dir read them (`tuner status`,
// `tuner store`, `tuner shards`): the ones the last configure declared, listed in
// <build>/tune/kernels.list, or, for a tree without the list, every <build>/tune/*/manifest.json.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tune::cli {

/// The kernels the last configure declared (<tune_dir>/kernels.list, one name a line), or
/// nullopt when the build tree has no list. Names are checked as tune_add_kernel checks them,
/// so a line cannot reach outside the tune directory.
std::optional<std::vector<std::string>> declared_kernels(const std::filesystem::path& tune_dir);

/// The manifests of the build tree `build_dir`: those of the declared kernels, in the list's
/// order, else every <build_dir>/tune/*/manifest.json in name order.
std::vector<std::filesystem::path> build_tree_manifests(const std::filesystem::path& build_dir);

/// build_tree_manifests, or nullopt after `<command>: error: no kernel in the build tree 'D' (no
/// D/tune/kernels.list or manifest): configure it with CMake first` when there is none.
std::optional<std::vector<std::filesystem::path>> some_build_tree_manifests(
    const std::string& build_dir, const char* command);

}  // namespace tune::cli
