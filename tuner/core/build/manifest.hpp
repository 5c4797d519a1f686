// The kernel manifest (`<build>/tune/<name>/manifest.json`): what `tune_add_kernel` knows about a
// kernel, written at configure time and read by every tool (docs/manifest.md).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <tuner/core/base/result.hpp>

namespace tune {

/// The manifest schema this build reads and writes.
inline constexpr int manifest_schema_version = 1;

/// One tunable kernel as the build declared it. After `load`, every path is absolute and
/// lexically normal: relative paths in the file are resolved (project_root against the
/// manifest's directory, every other path against project_root).
struct Manifest {
  int schema_version = manifest_schema_version;
  std::string kernel;                  ///< the kernel's name (targets tune.<kernel>, warm.<kernel>)
  std::string entry;                   ///< the extern "C" entry symbol; defaults to `kernel`
  std::filesystem::path project_root;  ///< what key inputs are made relative to
  std::filesystem::path build_dir;     ///< the CMake build tree
  std::vector<std::filesystem::path> sources;            ///< sources[0] is compiled per candidate
  std::filesystem::path space;                           ///< the space TOML
  std::vector<std::string> archs;                        ///< e.g. "sm_90", in declaration order
  std::map<std::string, std::filesystem::path> records;  ///< one record path per arch
  std::vector<std::filesystem::path> include_directories;
  std::vector<std::string> definitions;         ///< `NAME` or `NAME=value`, passed as -D
  std::vector<std::string> compile_options;     ///< passed to nvcc as they are
  std::filesystem::path nvcc;                   ///< the CUDA compiler
  std::string host_compiler;                    ///< informational, e.g. "GNU 12.2.0"
  std::filesystem::path cache_dir;              ///< kernel cache; default <build>/tune/cache
  std::filesystem::path log_dir;                ///< trial logs; default <build>/tune/<kernel>
  std::filesystem::path compile_log;            ///< default <build>/tune/compile.log
  std::optional<std::filesystem::path> runner;  ///< the harness runner, when there is one
  std::optional<std::filesystem::path> tuner;   ///< the tuner executable the build uses
  /// The remote store (TUNE_REMOTE_STORE at configure time, docs/store.md); empty for none.
  std::string remote_store;
  /// What runs each compile, put in front of the compiler's arguments (CMAKE_CUDA_COMPILER_LAUNCHER
  /// at configure time, compiler_launcher.hpp); empty for none. No input of the cache key.
  std::vector<std::string> compiler_launcher;
  std::filesystem::path path;  ///< where this manifest was read from (empty when parsed)

  /// Reads and validates a manifest. Diagnostics name the file and the field.
  static result<Manifest> load(const std::filesystem::path& path);
  /// As `load`, from text; `path` labels diagnostics and anchors a relative project_root.
  static result<Manifest> parse(std::string_view json_text, const std::filesystem::path& path);

  /// The record path for `arch`; a diagnostic naming the declared archs when it has none.
  result<std::filesystem::path> record_path(std::string_view arch) const;
  /// `cmake --build <build_dir> --target tune.<kernel>`: the command that re-tunes.
  std::string retune_command() const;
  /// The manifest as JSON (absolute paths), as the CMake functions write it.
  nlohmann::json to_json() const;
};

}  // namespace tune
