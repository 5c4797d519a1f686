// The trust boundary (docs/trust.md): what comes from outside this tune's own worker (the remote
// store's entries, blobs and shared trials, a shard's log, a kernel cache another tree wrote) is
// a hint until this tune confirms it. Every such input passes here before anything believes it:
//
//   - a cache entry is bound to its action: the key, key schema, arch, config and keyed argv it
//     says it was compiled from must be what the request's key was computed from;
//   - a negative verdict (failed, over_limit, timed_out) from another host never excludes a
//     candidate: it is compiled here first;
//   - a trial from another host or process keeps only what a hint may carry: its median orders
//     the search, nothing of it decides (no early-rejection mark, no same-binary mark, no check).
//
// The search's half of the boundary (tuner/core/search/autotuner_runoff.cpp) measures every
// adopted finalist here, with no cap on rounds, and distrusts a source whose trial disagreed.
#pragma once

#include <optional>
#include <string>

#include <tuner/core/build/kernel_cache.hpp>
#include <tuner/core/search/trial.hpp>

namespace tune {

/// Where an entry was found.
enum class EntryOrigin {
  local,   ///< the kernel cache this tune reads (its own, or a TUNE_CACHE_DIR it shares)
  remote,  ///< the remote store
};

/// Why `entry`, found under `request.key`, is not the candidate the request names, or nullopt.
/// Every origin: the key, key schema, arch and config id must be the request's. From the remote
/// store also the keyed argv (a local entry written before entries kept it may lack it). A
/// mismatch is a miss: the candidate is compiled here.
std::optional<std::string> entry_mismatch(const CacheEntry& entry, const CompileRequest& request,
                                          EntryOrigin origin);

/// Whether `entry` may stand as this tune's verdict of its candidate: a valid one may (its blob's
/// digest is checked where it is read); an invalid one only from the local cache, never from the
/// remote store (another host's failure may be its own trouble, or a forgery).
bool verdict_believed(const CacheEntry& entry, EntryOrigin origin);

/// A trial measured elsewhere (a shared trial, a shard's log), as the search may adopt it: its
/// median, min and reps as they were, and nothing that only this tune's measurements may say
/// (`rejected_early`, `same_binary`, `checks`, `runoff`, `prior_rank`, `cached`). nullopt for one
/// that is no hint at all (invalid: another machine's trouble is retried here).
std::optional<Trial> as_hint(Trial trial);

}  // namespace tune
