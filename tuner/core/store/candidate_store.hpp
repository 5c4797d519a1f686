// The candidate store: the one path by which warm, compile-ahead, the tune and `tuner embed`
// get a compiled candidate. It asks its layers in turn and stops at the first that has the
// candidate: the local kernel cache, then the remote store (docs/store.md; what it has is
// downloaded into the local cache), then the compiler (into the local cache); what the compiler
// produced is then published to the remote store. Every layer is keyed by the same cache key,
// so all four callers get the same bytes under the same key.
//
// Example:
//   const CandidateStore store(KernelCache(effective_cache_dir(m.cache_dir)), remote.get(),
//                              m.compile_log);
//   const CompileOutcome got = store.get(compile_request(m, keyer, config, "sm_90"));
//   if (!got.entry.valid()) fmt::print("invalid: {}\n", got.entry.reason);
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <tuner/core/base/config.hpp>
#include <tuner/core/build/cache_key.hpp>
#include <tuner/core/build/compiler_launcher.hpp>
#include <tuner/core/build/kernel_cache.hpp>
#include <tuner/core/build/manifest.hpp>
#include <tuner/core/store/remote_store.hpp>

namespace tune {

/// The request that compiles `config` for `arch` under its cache key: the entry (or its
/// template), the keyed argv, the keyer's files as keyed, and a command that writes the
/// generated params header and template-entry unit before it returns nvcc's argv. `keyer` must
/// outlive the request.
CompileRequest compile_request(const Manifest& manifest, const CacheKeyer& keyer,
                               const Config& config, const std::string& arch);

class CandidateStore {
 public:
  /// `remote` may be null (no remote store); it must outlive the store. Every compiler run
  /// appends a line to `compile_log`; a compile that runs past `compile_timeout_s` (none: no
  /// limit) is stopped and its candidate is `timed_out`. Every compile runs through `launcher`
  /// (compiler_launcher.hpp; the time it takes counts towards the timeout).
  CandidateStore(KernelCache cache, RemoteStore* remote, std::filesystem::path compile_log,
                 std::optional<double> compile_timeout_s = std::nullopt,
                 CompilerLauncher launcher = {});

  const KernelCache& cache() const noexcept { return cache_; }

  /// The entry of `request` from the first layer that has it, without compiling: the local
  /// cache, then the remote store (downloaded into the local cache; only a valid entry of the
  /// request's candidate, docs/trust.md). nullopt when neither has it.
  std::optional<CacheEntry> find(const CompileRequest& request) const;

  /// The entry of `request`: found as `find` does, else compiled into the local cache and
  /// published to the remote store. A candidate that does not compile is an entry (failed,
  /// over_limit), not an exception; only a compiler that cannot start or a cache that cannot be
  /// written throws tune::error.
  CompileOutcome get(const CompileRequest& request) const;

 private:
  std::optional<CacheEntry> lookup_local(const CompileRequest& request) const;

  KernelCache cache_;
  RemoteStore* remote_;
  std::filesystem::path compile_log_;
  std::optional<double> compile_timeout_s_;
  CompilerLauncher launcher_;
};

}  // namespace tune
