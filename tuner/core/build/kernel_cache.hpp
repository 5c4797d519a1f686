// The on-disk kernel cache (docs/formats.md "Kernel cache entry"): one compiled candidate per
// cache key, `<cache_dir>/<key>.cubin` beside `<cache_dir>/<key>.json`. Content addressing makes
// one cache safe to share between build trees (TUNE_CACHE_DIR). This is host code only: it runs
// the CUDA compiler as a process and reads its `ptxas -v` report, it never loads a module.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/build/compiler_launcher.hpp>
#include <tuner/core/space/entry_template.hpp>

namespace tune {

/// Version of the cache entry's JSON; readers treat any other version as a miss.
inline constexpr int kernel_cache_schema_version = 1;

/// What a cache entry says about its candidate. Only `ok` entries have a cubin; `failed` (the
/// compiler refused it), `over_limit` (it uses more registers or shared memory than the
/// architecture allows) and `timed_out` (its compile ran past the compile timeout) are invalid
/// candidates, cached so that they are never compiled again (a `timed_out` one is compiled
/// again only when a longer timeout allows it more time).
enum class CacheStatus { ok, failed, over_limit, timed_out };

/// `ok`, `failed`, `over_limit`, `timed_out`.
std::string_view to_string(CacheStatus status);
/// The status named `text`, or nullopt.
std::optional<CacheStatus> parse_cache_status(std::string_view text);

/// Resource usage of one function as `ptxas -v` reports it.
struct KernelResources {
  int registers = 0;              ///< registers per thread
  std::int64_t shared_bytes = 0;  ///< static shared memory per block (`smem`)
  std::int64_t local_bytes = 0;   ///< local memory per thread (`lmem`, else the stack frame)
  std::int64_t const_bytes = 0;   ///< constant memory, every `cmem[N]` bank summed

  friend bool operator==(const KernelResources&, const KernelResources&) = default;
};

void to_json(nlohmann::json& j, const KernelResources& r);
void from_json(const nlohmann::json& j, KernelResources& r);

/// Reads the resource lines of `ptxas -v` output (as nvcc prints it with `-Xptxas=-v`), one
/// entry per function, keyed by the name ptxas prints (mangled for C++ entries). Understands
/// both the older `Used N registers, N bytes smem, N bytes cmem[0], N bytes lmem` form and the
/// CUDA 12/13 form (`Used N registers, used N barriers, N bytes smem`, local memory reported as
/// the stack frame). Lines it does not recognise are ignored; a function whose report has no
/// `Used ... registers` line is left out.
std::map<std::string, KernelResources> parse_ptxas_resources(std::string_view output);

/// The limits a compiled function must fit on one architecture.
///
/// Registers per thread are 255 on every architecture. Static shared memory (`__shared__`
/// arrays) is at most 48 KiB per block everywhere; more is only reachable as dynamic shared
/// memory with an opt-in launch attribute, up to `max_shared_per_block`: 48 KiB up to sm_62,
/// 96 KiB on sm_70/72, 64 KiB on sm_75, 163 KiB on sm_80/87, 99 KiB on sm_86/89/120/121 and
/// 227 KiB on sm_90 and the sm_100 family (CUDA C++ Programming Guide, "Compute
/// Capabilities", maximum shared memory per thread block).
struct ArchLimits {
  int max_registers_per_thread = 255;
  std::int64_t max_shared_per_block = 48 * 1024;  ///< bytes, static + dynamic, with opt-in
  std::int64_t max_static_shared = 48 * 1024;     ///< bytes of static `__shared__` per block
};

/// The limits of `arch` (`sm_90`, also with an `a`/`f` suffix: `sm_90a`); nullopt for an
/// architecture not in the table.
std::optional<ArchLimits> arch_limits(std::string_view arch);

/// The architectures a record may be tuned for: every row of the limits table, as `sm_XX`
/// without a suffix, by ascending compute capability (`sm_50` ... `sm_121`). The one list:
/// `tuner archs` prints it, and tune_add_kernel checks ARCH against that output.
const std::vector<std::string>& known_archs();

/// Why `function` does not fit `arch` (the first limit it exceeds), or nullopt when it fits.
/// Example: `function 'k' uses 65536 bytes of static shared memory, over the limit of 49152
/// bytes on sm_90`.
std::optional<std::string> exceeded_limit(std::string_view function, const KernelResources& r,
                                          const ArchLimits& limits, std::string_view arch);

/// max_compile_s (tuner/core/base/input_limits.hpp): the most compile seconds an entry is
/// believed; a larger, negative or non-finite `compile_s` is read as unknown.
using tune::max_compile_s;

/// One kernel cache entry, `<key>.json`.
struct CacheEntry {
  std::string key;                ///< the cache key digest (hex); also the file name
  std::string key_schema = "k1";  ///< the cache key's schema tag
  CacheStatus status = CacheStatus::ok;
  std::string reason;                        ///< why the candidate is invalid; empty when ok
  std::string compiler_output;               ///< nvcc's standard output and error, interleaved
  std::optional<KernelResources> resources;  ///< the entry function's, when ptxas reported it
  std::string cubin_sha256;                  ///< SHA-256 of `<key>.cubin`; empty unless ok
  std::string arch;
  std::string config_id;
  std::vector<std::string> argv;          ///< the compiler argument vector as keyed
  std::vector<std::string> dependencies;  ///< the files that produced the key, as named in it
  /// With a template entry: the instance's lowered name in the cubin (what the harness and the
  /// embedded winners look the function up by). Empty, and not written, otherwise.
  std::string entry_symbol;
  /// Seconds the compiler ran for this entry (for `timed_out`: the timeout it was stopped at);
  /// unset for entries written before the field, and when read as anything but a number from 0
  /// to max_compile_s.
  std::optional<double> compile_s;

  /// The function to look up in the cubin: entry_symbol when set, else `entry`.
  std::string function_name(const std::string& entry) const {
    return entry_symbol.empty() ? entry : entry_symbol;
  }

  /// Whether the candidate can be loaded (status ok).
  bool valid() const noexcept { return status == CacheStatus::ok; }
};

/// The entry's JSON (`schema_version` first among sorted keys; `resources` null when unknown).
void to_json(nlohmann::json& j, const CacheEntry& e);
/// Throws nlohmann::json exceptions on a malformed entry (missing fields, wrong kinds, an
/// unknown status); unknown fields are ignored, and so is a `compile_s` that is not a number of
/// seconds from 0 to max_compile_s (it reads as unset).
void from_json(const nlohmann::json& j, CacheEntry& e);

/// A cache entry's text as read (read_cache_entry).
struct CacheEntryText {
  enum class Kind {
    entry,         ///< `entry` holds it
    not_json,      ///< not JSON at all (a web page), or nested deeper than max_json_depth
    not_an_entry,  ///< JSON, but no object with a `schema_version` (`{}`, `[]`, `42`)
    refused,       ///< an entry of another schema, a key said twice, a malformed field
  };
  Kind kind = Kind::refused;
  std::optional<CacheEntry> entry;
  /// For not_an_entry, what it is instead (`no schema_version`, `array`); for refused, why
  /// (`not a cache entry of schema 1`, `not a cache entry: key 'status' appears twice ...`).
  std::string why;
};

/// The one reader of a cache entry's text: the local cache's lookup and the remote store's
/// fetch read an entry through it, with the rules of the other readers (the nesting limit, a
/// key said twice refused, the schema, from_json's fields). The key and the cubin are the
/// caller's to check.
CacheEntryText read_cache_entry(std::string_view text);

/// The cache directory to use: the TUNE_CACHE_DIR environment variable when it is set and not
/// empty (made absolute, `~` expanded, by env_directory), otherwise `configured` (the manifest's
/// `cache_dir`).
std::filesystem::path effective_cache_dir(const std::filesystem::path& configured);

/// A kernel cache directory. Reads re-check what they find; writes are atomic (a temporary file
/// renamed into place), so concurrent writers of one key, even from several build trees, leave
/// one complete entry.
class KernelCache {
 public:
  explicit KernelCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

  const std::filesystem::path& dir() const noexcept { return dir_; }
  std::filesystem::path cubin_path(std::string_view key) const;
  std::filesystem::path entry_path(std::string_view key) const;

  /// The entry stored under `key`, or nullopt for a miss: no entry, an unreadable or malformed
  /// one, another schema version, a `key` field that is not `key`, or (for an ok entry) a cubin
  /// that is missing or whose SHA-256 is not `cubin_sha256`.
  std::optional<CacheEntry> lookup(std::string_view key) const;

  /// Stores `entry` under `entry.key`. For an ok entry `cubin` is the compiled file, which is
  /// moved into the cache (it must be in the cache directory, see `temp_path`) and its SHA-256
  /// recorded; the entry is written last, so a reader never sees an entry without its cubin.
  /// Returns the stored entry. Throws tune::error on I/O failure.
  CacheEntry store(CacheEntry entry, const std::optional<std::filesystem::path>& cubin) const;

  /// A fresh temporary path in the cache directory (unique per process and call), for the
  /// compiler to write into before `store` renames it. Creates the directory.
  std::filesystem::path temp_path(std::string_view key, std::string_view extension) const;

 private:
  std::filesystem::path dir_;
};

/// Appends `line` and a newline to `log` in one write (creating the file and its directory), so
/// that concurrent writers never interleave lines; `what` names the file in errors ("the compile
/// log"). Throws tune::error on failure.
void append_log_line(const std::filesystem::path& log, std::string_view line,
                     std::string_view what);

/// Appends `<key> <config_id>` and a newline to `log` in one write (creating the file and its
/// directory), so that concurrent compiles never interleave lines. Throws tune::error on failure.
void append_compile_log(const std::filesystem::path& log, std::string_view key,
                        std::string_view config_id);

/// One candidate to compile into the cache.
struct CompileRequest {
  std::string key;
  std::string key_schema = "k1";
  std::string arch;
  std::string config_id;
  std::string entry;  ///< the entry function whose resources the cache entry keeps
  /// A template entry: the entry is the one instance of it ptxas compiled (its lowered name
  /// becomes the entry's entry_symbol); a module with none or several is `failed`.
  std::optional<EntryTemplate> entry_template;
  std::vector<std::string> argv_keyed;    ///< stored in the entry (paths as keyed)
  std::vector<std::string> dependencies;  ///< stored in the entry
  /// Seconds the compiler may run; past them it is stopped and the entry is `timed_out`.
  std::optional<double> timeout_s;
  /// A cached invalid entry (failed, over_limit, timed_out) is compiled again rather than served
  /// (`tuner warm --retry-invalid`): a verdict left by a broken environment, or by an input the
  /// key did not cover in an older tuner, is replaced.
  bool retry_invalid = false;
  /// The cached entry of the key was refused by the caller (it is not this candidate's:
  /// tuner/core/store/trust.hpp): compile and replace it whatever it says.
  bool cached_refused = false;
  /// The argument vector to run, writing the cubin to the given path.
  std::function<std::vector<std::string>(const std::filesystem::path& output)> command;
  /// What runs the command (ccache, `srun ...`): put in front of it, and in neither the key nor
  /// the entry's argv. A failure that is the launcher's own is not cached.
  CompilerLauncher launcher;
};

/// What `compile_into_cache` did.
struct CompileOutcome {
  CacheEntry entry;
  bool compiled = false;    ///< false for a cache hit (the compiler did not run)
  bool downloaded = false;  ///< found in the remote store (remote_store.hpp), not compiled here
};

/// Whether a cached `entry` answers a request with a compile timeout of `timeout_s` (none: no
/// limit): every entry does, except one that timed out at a shorter limit than this one.
bool entry_serves(const CacheEntry& entry, std::optional<double> timeout_s);
/// Whether a cached `entry` answers `request`: entry_serves for its timeout, and not an invalid
/// entry when the request retries those.
bool entry_serves(const CacheEntry& entry, const CompileRequest& request);

/// Returns the cached entry of `request.key` when it serves the request, or otherwise runs the
/// compiler once, classifies the result and stores it: `over_limit` when ptxas reports a function
/// over the limits of `request.arch` (whether or not the compiler then failed, as ptxas itself
/// refuses static shared memory over 48 KiB), otherwise `failed` when the compiler exits non-zero
/// or writes no cubin, otherwise `ok`. Every compiler run appends one line to `compile_log`. A
/// candidate that does not compile is data, not an exception; only a compiler (or launcher) that
/// cannot be started or a cache that cannot be written throws tune::error. A failure that did not
/// judge the source (the compiler killed by a signal, the launcher's own error) is returned but
/// not cached.
CompileOutcome compile_into_cache(const KernelCache& cache, const CompileRequest& request,
                                  const std::filesystem::path& compile_log);

/// A Makefile-syntax depfile naming `target` and its `dependencies` (spaces, `#` and `$`
/// escaped as Ninja and make expect), with a trailing newline.
std::string make_depfile(std::string_view target, const std::vector<std::string>& dependencies);

}  // namespace tune
