// The tune of one bucket of a declared kernel on one architecture: the space's pruned configs
// and their cache keys, the trial log, the incumbents (`require`, and the committed winner as
// the soft incumbent), the supervisor and its workers, and the bucket's typed result. `tuner
// run` calls it for every bucket, then assembles the record (bucket_result.hpp).
//
// Example:
//   const BucketTune job{build, *bucket, "sm_90", log_path, {}, {},
//                        process_launcher(worker_command(manifest, bucket->name, "sm_90", {})),
//                        [](const std::string& line) { std::puts(line.c_str()); }};
//   result<BucketResult> r = tune_bucket(job);   // throws Interrupted on SIGINT/SIGTERM
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <tuner/core/base/result.hpp>
#include <tuner/core/build/cache_key.hpp>
#include <tuner/core/build/kernel_build.hpp>
#include <tuner/core/record/bucket_result.hpp>
#include <tuner/core/search/prior.hpp>
#include <tuner/core/search/supervisor.hpp>
#include <tuner/core/search/trial_log.hpp>
#include <tuner/core/store/remote_store.hpp>

namespace tune {

/// One bucket's tune.
struct BucketTune {
  const KernelBuild& build;
  const Bucket& bucket;
  std::string arch;
  std::filesystem::path log;        ///< the bucket's trial log (resumed when it exists)
  std::optional<double> budget_s;   ///< default: the space's [search] budget_s, else none
  std::optional<double> timeout_s;  ///< per candidate; default: [search] timeout_s, else 30
  WorkerLauncher launch;            ///< starts the measuring workers
  /// Lines for people as the tune goes: one per trial, warnings, notes on replaced workers.
  std::function<void(const std::string&)> say;
  /// The remote store (docs/store.md), or null: candidates missing from the kernel cache are
  /// looked up there, and measured trials are shared through it.
  RemoteStore* remote = nullptr;
  /// Adopt the store's trials of this kind of device (false: --no-remote-trials).
  bool remote_trials = true;
  /// A shard's slice (shard.hpp): only these config ids are visited, plus the incumbents (the
  /// required configs and the committed winner), which every slice measures. Unset: every one.
  std::optional<std::vector<std::string>> only = std::nullopt;
  /// Whether the runoff runs; a shard leaves it to the merge, which runs it on one device.
  bool runoff = true;
  /// Compile-ahead (compile_ahead.hpp): with N > 0, the strategy's proposals missing from the
  /// kernel cache are compiled on N threads ahead of the measuring worker (2N proposals kept
  /// pending, the first ready measured first), instead of being invalid (`not compiled: run the
  /// warm target`). 0: off.
  int compile_ahead = 0;
  /// The bucket's prior (docs/search.md "Re-tunes start from what was measured"): where a log
  /// of another source, toolchain or space is set aside, and the prior read from; with `[search]
  /// prior`, other buckets' and archs' logs under the manifest's log_dir are read when it has
  /// none. Unset: no prior (a log of another source is refused, as for a shard).
  std::optional<std::filesystem::path> prior_log = std::nullopt;
};

/// `<bucket>.prior.jsonl` beside the bucket's log in `dir` (bounded like every bucket file).
std::filesystem::path prior_log_path(const std::filesystem::path& dir, const std::string& bucket);

/// The logs a bucket with no prior of its own reads instead, in order, for `[search] prior`:
/// `bucket:<name>` that bucket's log then its prior, `arch:<sm_XX>` this bucket's on that arch,
/// `auto` this bucket's on every other arch with logs, then the other buckets' nearest in shape
/// first. Empty without the setting.
std::vector<std::filesystem::path> prior_fallbacks(const KernelBuild& build, const Bucket& bucket,
                                                   const std::string& arch);

/// The bucket's incumbents, which every tune of it and every shard's slice of it measures: the
/// space's required configs, then the committed winner of the bucket on `arch` (when the record
/// loads and has one).
std::vector<Config> bucket_incumbents(const KernelBuild& build, const Bucket& bucket,
                                      const std::string& arch);

/// Runs the search and the runoff of one bucket and returns what it found (with or without a
/// winner: `best` is empty when nothing valid was measured or an incumbent failed). A
/// diagnostic for bad input: a refused log, an incumbent not in the space, a bucket whose
/// configs do not evaluate. Throws Interrupted when a stop signal came (the log keeps every
/// finished trial), WorkerStartFailure when no worker can start, tune::error for a broken
/// environment (nvcc cannot be queried, I/O failure).
result<BucketResult> tune_bucket(const BucketTune& job);

/// The header every trial log of `bucket` on `arch` carries, as tune_bucket writes it: the
/// kernel and bucket, the pruned space's hash, the source hash, the toolchain, the build identity
/// (`keyer.identity(arch)`) and the search. The one composition: the tune, the shards' merge and
/// `tuner status` (through available_prior) judge a log against it (judge_log).
LogHeader bucket_log_header(const KernelBuild& build, const Bucket& bucket, const std::string& arch,
                            const CacheKeyer& keyer);

/// The prior a re-tune of `bucket` on `arch` would start from, as `tuner run` lays out the logs:
/// the bucket's log when judge_log sets it aside (another build), else the bucket's prior, else
/// the logs `[search] prior` names (prior_fallbacks); nullopt when none of them is a usable prior.
/// A log the re-tune resumes (the same build) is no prior.
std::optional<Prior> available_prior(const KernelBuild& build, const Bucket& bucket,
                                     const std::string& arch);

/// The command that starts a measuring worker for `bucket`: the manifest's runner with the
/// worker's arguments (tuner/cuda/worker.hpp). For tests, TUNE_RUNNER_WORKER_CMD replaces the
/// program: a shell command line that gets the same arguments.
std::vector<std::string> worker_command(const Manifest& manifest, const std::string& bucket,
                                        const std::string& arch, std::optional<int> device);

/// `about 40 s`, `about 12 min`, `about 1.5 h`: a time left, for people.
std::string describe_duration(double seconds);

/// The line for one trial, with the search's progress: `[3/12] BM=64,BN=128 0.0123 ms (50
/// reps, batched); best 0.0119 ms; about 40 s left` (`10 reps, stopped early` for a candidate
/// rejected early).
std::string describe_trial(const Progress& progress);

/// The closing line of a bucket's tune for people: its winner and what decided it, or why it
/// has none (`winner BLOCK=512 at 1.9531 ms, by runoff challenger_wins (20 pairs, -48.80%,
/// p=1.91e-06)`, `error: no valid config (7 trials, all invalid)`).
std::string describe_outcome(const BucketResult& result);

}  // namespace tune
