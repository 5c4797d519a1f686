// Shards: one tune split into independent processes (docs/scaling.md). `--shard K/N` takes a
// deterministic, balanced part of the work: the candidates of every bucket laid end to end and
// cut into N runs of about equal length, each cut moved to a bucket's edge when one is near, so
// that small buckets stay whole and a large one is cut into slices. Every slice also measures
// the bucket's incumbents (so a slice's best has beaten them, and so the merge has them from
// every shard). A shard writes its own trial log per bucket and, when it finished, a summary
// (`shard-K-of-N.json`) beside them; the merge (shard_merge.hpp) reads the summaries.
//
// Example:
//   result<ShardSpec> spec = parse_shard("2/4");
//   ShardPlan plan = plan_shards({120, 7, 3000}, 4);   // candidates per bucket
//   for (const ShardSlice& s : plan.shards[spec->index - 1]) ...   // bucket, first, end
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <tuner/core/base/result.hpp>
#include <tuner/core/record/bucket_result.hpp>
#include <tuner/core/space/space.hpp>

namespace tune {

/// Version of the shard summary's JSON (a summary of another version is refused).
inline constexpr int shard_summary_schema_version = 1;

/// Shard `index` of `count`, 1-based (`2/4`).
struct ShardSpec {
  int index = 1;
  int count = 1;

  /// `2/4`.
  std::string str() const;
  friend bool operator==(const ShardSpec&, const ShardSpec&) = default;
};

/// Reads `K/N` (1 <= K <= N); a diagnostic (no path) saying what is wrong.
result<ShardSpec> parse_shard(std::string_view text);

/// A half-open range of one bucket's pruned configs (indices in enumeration order).
struct ShardSlice {
  std::size_t bucket = 0;  ///< index into the space's buckets
  std::size_t first = 0;
  std::size_t end = 0;
  friend bool operator==(const ShardSlice&, const ShardSlice&) = default;
};

/// The split of a tune into shards: `shards[k]` holds the slices of shard k + 1, in bucket order
/// (a shard may get none when there are more shards than candidates).
struct ShardPlan {
  std::vector<std::vector<ShardSlice>> shards;
};

/// Splits buckets of `sizes[b]` candidates into `count` shards (count >= 1): the candidates laid
/// end to end and cut at round(k * total / count), a cut moved to the nearest bucket edge
/// within total / (8 * count); with more shards than candidates, one candidate to each of the
/// first shards and none to the rest. The same input gives the same plan on every host.
ShardPlan plan_shards(const std::vector<std::size_t>& sizes, int count);

/// The plan of `space`'s buckets (their pruned configs); a diagnostic when a bucket's configs do
/// not evaluate.
result<ShardPlan> plan_space(const Space& space, int count);

/// `shard-2-of-4`: the stem of a shard's summary and of its logs.
std::string shard_stem(const ShardSpec& shard);
/// `<dir>/<arch>/shard-2-of-4.json`.
std::filesystem::path shard_summary_path(const std::filesystem::path& dir, const std::string& arch,
                                         const ShardSpec& shard);
/// `<encoded bucket>.shard-2-of-4.trials.jsonl`: the file name of shard 2/4's log of `bucket`,
/// the one name its summary may give that log (the merge refuses any other).
std::string shard_log_name(const std::string& bucket, const ShardSpec& shard);
/// `<dir>/<arch>/<encoded bucket>.shard-2-of-4.trials.jsonl`.
std::filesystem::path shard_log_path(const std::filesystem::path& dir, const std::string& arch,
                                     const std::string& bucket, const ShardSpec& shard);

/// `[bench]` as JSON (what the shards must agree on).
nlohmann::json bench_json(const BenchSettings& bench);

/// What a finished shard did for one bucket.
struct ShardBucket {
  std::string bucket;
  std::size_t first = 0;  ///< its slice of the bucket's pruned configs
  std::size_t end = 0;
  std::string log;      ///< the trial log's file name, beside the summary
  BucketResult result;  ///< the slice's search (no runoff: the merge runs it)
  /// SHA-256 of the trial log as the shard left it: the merge refuses a log that differs (a
  /// forged or damaged one). Unset in summaries of older tuners (merged with a warning).
  std::optional<std::string> log_sha256 = std::nullopt;
};

/// A finished shard's summary: written when every slice of the shard is measured, so its
/// presence means the shard is complete.
struct ShardSummary {
  std::string kernel;
  std::string arch;
  ShardSpec shard;
  std::string space_hash;             ///< of the whole space file (Space::space_hash)
  std::string source_hash;            ///< of the kernel's sources
  std::string toolchain;              ///< the toolchain's fingerprint
  nlohmann::json bench;               ///< bench_json of the space's [bench]
  std::optional<std::string> device;  ///< the device kind its workers reported
  std::optional<std::string> driver;
  std::string host;
  std::vector<ShardBucket> buckets;
  /// Where it was read from (not written).
  std::filesystem::path path;

  /// The summary's JSON (pretty-printed, keys sorted, trailing newline).
  std::string dump() const;
  /// Writes `dump()` atomically. Throws tune::error on I/O failure.
  void save(const std::filesystem::path& path) const;
  /// Reads a summary; a diagnostic for an unreadable one or one of another version.
  static result<ShardSummary> load(const std::filesystem::path& path);
};

/// The most shards a tune is split into (`tuner shards --count`, `tuner slurm submit
/// --shards`): the most jobs a CI matrix runs (GitHub Actions' 256).
inline constexpr int max_shards = 256;

/// Parses the comma-separated device list of TUNE_DEVICES (`0,1,3`); `all` is the caller's to
/// expand. A diagnostic for an empty list, a non-number or a duplicate.
result<std::vector<int>> parse_device_list(std::string_view text);

/// How many devices CUDA shows under `CUDA_VISIBLE_DEVICES=<text>`, read as the driver reads
/// it: a comma-separated list whose entries are device indices (`0`), GPU UUIDs or a unique
/// prefix of one (`GPU-8932f937`), or MIG instances (`MIG-<uuid>`, `MIG-GPU-<uuid>/1/0`), white
/// space around an entry dropped. The driver stops at the first entry that is none of these (an
/// empty entry, `-1`, the usual way to hide every GPU, a word) and at one that names a device
/// listed before it; the entries before it are the visible devices, numbered from 0. So
/// `0,,,,` shows one device and `-1` none, where counting commas made five and one. An index
/// past the host's GPUs, which the driver also stops at, is not seen here: the worker of that
/// device reports it.
std::size_t visible_device_count(std::string_view text);

}  // namespace tune
