// The nvcc argument vector warm runs for one candidate, and the cache key that names its kernel
// cache entry (docs/interfaces.md "Cache key and the nvcc argument vector"). Computed without
// compiling, launching or a GPU; independent of the checkout path, the build directory and the
// host compiler.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/identity.hpp>
#include <tuner/core/build/manifest.hpp>
#include <tuner/core/space/entry_template.hpp>
#include <tuner/core/space/space.hpp>

namespace tune {

/// What the digest is taken over, versioned: a change to what the key covers bumps it, so old
/// keys become incomparable (a warning) rather than wrong (an error).
inline constexpr std::string_view cache_key_schema_tag = "tune-cache-key/1";
/// The short form records and cache entries store beside each digest.
inline constexpr std::string_view cache_key_schema = "k1";

/// One compile of one candidate, as warm runs it.
struct CompileCommand {
  /// The real argument vector, absolute paths; argv[0] is the manifest's nvcc.
  std::vector<std::string> argv;
  /// With params_as = "constexpr": the generated header that `-include` names, which the caller
  /// writes (text below) before running argv. Empty with params_as = "defines".
  std::optional<std::filesystem::path> params_header;
  std::string params_header_text;
  /// With a template entry: the generated translation unit argv compiles instead of the source
  /// (entry_template.hpp), which the caller writes (text below) before running argv.
  std::optional<std::filesystem::path> entry_unit;
  std::string entry_unit_text;
};

/// A candidate's cache key and what went into it.
struct CacheKey {
  std::string schema;  ///< cache_key_schema ("k1")
  std::string digest;  ///< lowercase hex SHA-256
  /// The files the key read (the source and every project header it includes), absolute paths
  /// in this tree, for depfiles.
  std::vector<std::filesystem::path> dependencies;
  /// Every input, in digest order, for `tuner key --explain`: ("schema", tag), ("argv", the
  /// keyed vector, shell-quoted), ("params_header", text) with constexpr params,
  /// ("entry_unit", the generated unit as keyed) with a template entry, ("file",
  /// "<name> <sha256>") per file, ("toolchain", fingerprint), ("entry", symbol) for a plain
  /// entry that is not the kernel's own name (the default, keyed as before it was covered).
  std::vector<std::pair<std::string, std::string>> inputs;
};

/// A file the key covers: its name (relative to the directory it was found through; the source
/// relative to project_root), where it is in this tree, and its content's SHA-256.
struct KeyedFile {
  std::string name;
  std::filesystem::path path;
  std::string sha256;
};

/// The generated header's path for a config: `<log_dir>/params/<16 hex of the id's FNV-1a>.hpp`.
std::filesystem::path params_header_path(const Manifest& manifest, const Config& config);
/// The generated header's text: `constexpr int NAME = value;` for ints (`long long` beyond the
/// int range), `constexpr const char NAME[] = "value";` for strings.
std::string params_header_text(const Config& config);

/// The compile command for one candidate and architecture (docs/interfaces.md):
///   nvcc -cubin -arch=<arch> -std=c++17 -O3 -Xptxas=-v <compile_options...> -D<definition>...
///        -I<include_dir>... -D<PARAM>=<value>... | -include <params header>  -o <out> <source>
CompileCommand compile_command(const Manifest& manifest, const Space& space, const Config& config,
                               std::string_view arch, const std::filesystem::path& output_cubin);
/// compile_command(...).argv.
std::vector<std::string> nvcc_argv(const Manifest& manifest, const Space& space,
                                   const Config& config, std::string_view arch,
                                   const std::filesystem::path& output_cubin);

/// The candidate's cache key. Reads the toolchain fingerprint (cached per process) and scans
/// the source's includes; throws tune::input_error when the source cannot be read and
/// tune::error when nvcc cannot be run. For many configs use CacheKeyer, which scans once.
CacheKey compute_cache_key(const Manifest& manifest, const Space& space, const Config& config,
                           std::string_view arch);

/// SHA-256 over the kernel's source files: for each, its name relative to project_root and its
/// content's SHA-256, as length-prefixed fields. Independent of the checkout path. Throws
/// tune::input_error naming the manifest when a source cannot be read.
std::string source_hash(const Manifest& manifest);

/// Computes keys and compile commands for many configs of one manifest: the include scan and
/// the toolchain fingerprint are read once, at construction.
class CacheKeyer {
 public:
  /// Throws as compute_cache_key does. Without the space there is no template entry: callers
  /// that have the space pass it (below).
  CacheKeyer(Manifest manifest, ParamsAs params_as);
  /// With an explicit fingerprint instead of running nvcc (tests, and callers that have one).
  CacheKeyer(Manifest manifest, ParamsAs params_as, std::string toolchain_fingerprint);
  /// With the space: its params_as and the kernel's template entry (kernel_entry_template);
  /// a bad template entry throws tune::input_error.
  CacheKeyer(Manifest manifest, const Space& space);
  /// As above, with an explicit fingerprint.
  CacheKeyer(Manifest manifest, const Space& space, std::string toolchain_fingerprint);

  CompileCommand compile_command(const Config& config, std::string_view arch,
                                 const std::filesystem::path& output_cubin) const;
  CacheKey key(const Config& config, std::string_view arch) const;
  /// The identity of every candidate on `arch` (tuner/core/base/identity.hpp): the inputs of
  /// key() less the config's own values. What a log, a prior and a record carry, so that each
  /// names the input that changed; never derived anywhere else.
  BuildIdentity identity(std::string_view arch) const;
  /// The entry the cubin is checked for: the template expression, else the manifest's symbol.
  std::string entry() const;
  /// The argument vector as the key sees it: `nvcc`, `<out>`, `<params.hpp>`, paths relative to
  /// project_root, `<build>/...` under the build directory (under both, the deeper of the two
  /// names the path), toolkit and system include directories left out.
  std::vector<std::string> keyed_argv(const Config& config, std::string_view arch) const;
  /// The source and every project header it includes, the source first, headers by name.
  const std::vector<KeyedFile>& files() const noexcept { return files_; }
  const std::string& toolchain() const noexcept { return toolchain_; }
  /// The kernel's template entry, when it has one.
  const std::optional<EntryTemplate>& entry_template() const noexcept { return entry_; }

 private:
  friend CompileCommand compile_command(const Manifest&, const Space&, const Config&,
                                        std::string_view, const std::filesystem::path&);
  struct NoScan {};
  CacheKeyer(Manifest manifest, ParamsAs params_as, std::string toolchain_fingerprint, NoScan);
  std::vector<std::string> argv(const Config& config, std::string_view arch,
                                const std::filesystem::path& output, bool keyed) const;
  std::string relative(const std::filesystem::path& p) const;

  Manifest manifest_;
  ParamsAs params_as_;
  std::optional<EntryTemplate> entry_;
  std::string toolchain_;
  std::vector<KeyedFile> files_;
};

/// Whether `path` lies under the CUDA toolkit of `nvcc` (`<nvcc>/../include`, `<nvcc>/../targets`)
/// or a system prefix (/usr/include, /usr/local/include, /usr/lib/gcc, /usr/lib/llvm-*,
/// /usr/lib/clang), checked both as written and with symlinks resolved.
bool is_toolchain_or_system_path(const std::filesystem::path& path,
                                 const std::filesystem::path& nvcc);

/// The source and every header it includes through its own directory or `include_dirs`,
/// recursively (`#include "x"`: the including file's directory first, then include_dirs;
/// `#include <x>`: include_dirs). Includes that resolve under the toolkit or system prefixes,
/// or nowhere, are not followed. Names: the source relative to `project_root`; a header
/// relative to the include directory it was found through, or to its includer's base
/// directory. Each file appears once. Throws tune::error when a found file cannot be read.
std::vector<KeyedFile> scan_includes(const std::filesystem::path& source,
                                     const std::vector<std::filesystem::path>& include_dirs,
                                     const std::filesystem::path& project_root,
                                     const std::filesystem::path& nvcc);

/// Joins an argument vector for display, single-quoting arguments that need it.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace tune
