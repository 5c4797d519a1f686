// The merge of a kernel's shards (shard.hpp) for one architecture: the summaries found, checked
// against each other and against this build (shard count, duplicates, the split, the space,
// sources, toolchain, bench settings and device kind, naming the difference), the shards still
// missing or still running, and per bucket the shards' trials combined into one log from which
// the finalists are chosen and the paired runoff runs on one device. The record is then
// assembled from the buckets' results as after an unsharded tune (bucket_result.hpp).
//
// Example:
//   result<ShardSet> set = find_shards(build, "sm_90", {"build/tune/gemm/shards"});
//   if (set && set->missing.empty())
//     for (const Bucket& b : build.space.buckets())
//       result<BucketResult> r = merge_bucket({build, b, "sm_90", *set, merged_log, launch, say});
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <tuner/core/base/result.hpp>
#include <tuner/core/build/kernel_build.hpp>
#include <tuner/core/record/bucket_result.hpp>
#include <tuner/core/scale/shard.hpp>
#include <tuner/core/search/supervisor.hpp>
#include <tuner/core/search/trial_log.hpp>

namespace tune {

/// The shards of one kernel and architecture found for a merge.
struct ShardSet {
  int count = 0;                       ///< N, what every summary says
  std::vector<ShardSummary> complete;  ///< by shard index
  std::vector<int> missing;            ///< indices without a summary
  /// For missing shards whose lock is held: `shard 2/4 is still running (...)`.
  std::vector<std::string> running;
};

/// What this build expects of a shard of `build` on `arch`: the fields a summary must agree on.
struct ShardExpectation {
  std::string space_hash;
  std::string source_hash;
  std::string toolchain;
  nlohmann::json bench;
};

/// The expectation of this build (hashes the sources, asks nvcc for the toolchain). Throws
/// tune::error when the toolchain cannot be asked.
ShardExpectation expect_shards(const KernelBuild& build);

/// Finds the summaries of `build`'s kernel on `arch` under `dirs` (searched recursively: CI
/// artifacts land in one folder each) and checks them: a diagnostic for summaries of different
/// shard counts, a shard found twice, one split another way (the space changed), one of another
/// space, source, toolchain, bench settings or device kind (each naming the difference), one
/// whose `log` of a bucket is not its own shard's log (shard_log_name), or none at all. Shards not
/// found are listed in `missing`, those whose lock is held also in `running`.
result<ShardSet> find_shards(const KernelBuild& build, const std::string& arch,
                             const ShardExpectation& expected,
                             const std::vector<std::filesystem::path>& dirs);

/// Whether a shard's log `log` of bucket `b` is the one its summary `s` describes (its SHA-256):
/// a diagnostic naming the log and the fix for one that is not a regular file or differs. A
/// summary without the digest (an older tuner's) passes, with a warning through `say`.
std::optional<diagnostic> log_problem(const ShardSummary& s, const ShardBucket& b,
                                      const std::filesystem::path& log,
                                      const std::function<void(const std::string&)>& say);

/// One bucket's merge.
struct BucketMerge {
  const KernelBuild& build;
  const Bucket& bucket;
  std::string arch;
  const ShardSet& shards;
  std::filesystem::path merged_log;  ///< written afresh: every shard's trials, then the runoff
  std::optional<double> timeout_s;   ///< per candidate (the runoff gets three times this)
  WorkerLauncher launch;             ///< the one device the runoff runs on
  std::function<void(const std::string&)> say;
};

/// Combines the shards' logs of the bucket into `merged_log` (each log checked against its
/// summary's digest (log_problem) and the bucket's header, naming every differing field; a log
/// still locked is refused naming its holder), each trial marked with its shard. A shard's log
/// counts for its own slice, recomputed from the plan, and the incumbents: a trial of another
/// config is dropped with a warning; two shards' medians of one incumbent that disagree are warned
/// of. Then runs the search over the measured trials and over the configs of a slice that its
/// shard's log lacks (measured here, with a note, unless the shard's budget ran out or the space's
/// search may stop early): the finalists, adopted from the shards, are measured here
/// (docs/search.md "Adopted trials are checked here"), and the runoff of the two best runs on one
/// device. The result counts every shard's trials. A diagnostic for a refused log, a missing log, a
/// trial whose cache key differs from this build's, or a slice whose incumbent failed; throws as
/// tune_bucket does.
result<BucketResult> merge_bucket(const BucketMerge& job);

/// Starts one worker, reads its hello (the device it measures on) and stops it: how a tune over
/// several devices learns their kinds before measuring anything. Throws WorkerStartFailure,
/// with the reason, when the worker does not say it is ready within `timeout_s`.
WorkerHello worker_hello(const WorkerLauncher& launch, double timeout_s);

}  // namespace tune
