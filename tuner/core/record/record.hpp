// The committed record (docs/formats.md "Record"): one JSON file per kernel and architecture
// holding a provenance header and the winning config of every bucket, and `load_verified`, the
// one check of whether it is still true (the ctest gate, the tune target's staleness check and
// `tuner verify` all use it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/identity.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/base/version.hpp>

namespace tune {

/// The record schema this build reads and writes.
inline constexpr int record_schema_version = 1;

/// A stored cache key tagged with its key schema, so that a change to what keys cover makes
/// old keys incomparable rather than wrong.
struct L2Key {
  std::string schema;  ///< e.g. "k1"
  std::string digest;  ///< lowercase hex

  /// `k1:<digest>`.
  std::string str() const { return schema + ":" + digest; }
  friend bool operator==(const L2Key&, const L2Key&) = default;
};

/// What only explains the numbers: compared at most for warnings. Unknown values are nullopt.
struct RecordContext {
  std::optional<std::string> device;         ///< e.g. "NVIDIA H200"
  std::optional<std::string> driver;         ///< e.g. "580.159.04"
  std::optional<std::string> host_compiler;  ///< e.g. "GNU 13.3.0"
  std::optional<std::string> machine;        ///< host name
  std::optional<std::string> date;           ///< YYYY-MM-DD (UTC)

  /// Sets `machine` to this host's name (left as it is when there is none) and `date` to today
  /// (UTC): where and when a record is written.
  void stamp_here_and_now();
};

/// The incumbent of a bucket as a tune measured it: the first config of the required phase (the
/// space's first `require` config, else the committed winner), for the winner's speed-up over
/// it.
struct IncumbentTiming {
  std::string config_id;
  double median_ms = 0;

  friend bool operator==(const IncumbentTiming&, const IncumbentTiming&) = default;
};

/// How a winner compares with its incumbent, for people: `speed-up 1.83x over the incumbent
/// BM=128 (0.0603 ms)`, or `the incumbent itself` when they are one config. With `maximize`
/// (scores, higher is better) the ratio is winner over incumbent and the value is a score.
std::string describe_speedup(const IncumbentTiming& incumbent, const std::string& winner_id,
                             double winner_value, bool maximize = false);

/// One bucket's winner.
struct RecordEntry {
  std::string bucket;             ///< the bucket label, matched exactly
  std::string pruned_space_hash;  ///< the bucket's pruned-space hash when it was tuned
  Config config;
  /// The config id as stored; `Record::insert` fills it from `config` when empty. Verification
  /// checks that it matches the params.
  std::string config_id;
  std::optional<double> median_ms;  ///< the winner's median; nullopt when pinned
  std::int64_t samples = 0;         ///< timed reps behind the median; 0 when pinned
  std::optional<L2Key> cache_key;   ///< the winner's cache key; an entry without one is stale
  /// "measured" (by the tune's own worker), "adopted" (the median is another machine's, see
  /// `origin`) or "pinned" (`tuner record set`).
  std::string source = "measured";
  /// Where an adopted median came from (`the remote store (measured on gpu-a)`, `shard 2/4`);
  /// set exactly when `source` is "adopted".
  std::optional<std::string> origin;
  /// A pin of a config whose cached compile was invalid, made anyway with `tuner record set
  /// --force`: the cache entry's status (`failed`, `over_limit`) and reason then. Set only when
  /// `source` is "pinned"; verification warns about it.
  struct Forced {
    std::string status;
    std::string reason;
  };
  std::optional<Forced> forced;
  /// The runoff's statistics (RunoffStats's JSON, tuner/core/search/runoff.hpp), null when none
  /// ran.
  nlohmann::json runoff;
  /// The prior a warm re-tune started from (`{"from", "tuner", "configs", "top_k"}`,
  /// docs/search.md "Re-tunes start from what was measured"); null (and not written) when none.
  nlohmann::json prior;
  /// The incumbent as the tune measured it (`{"config_id", "median_ms"}`), for the speed-up;
  /// nullopt (and not written) when pinned or when no incumbent was measured.
  std::optional<IncumbentTiming> incumbent;
};

/// What the running build is: what a record must match, and the context it is compared with.
struct Workspace {
  std::string kernel;
  std::string arch;
  std::string source_hash;
  std::string space_hash;
  std::string toolchain;  ///< the toolchain fingerprint ("nvcc 13.0.88, ptxas 13.0.88")
  /// The build identity (CacheKeyer::identity): every input of the candidates' keys but the
  /// configs' own values.
  std::optional<BuildIdentity> identity;
  std::string tuner_version = std::string(tune::tuner_version);
  RecordContext context;

  /// One bucket of the current space: its pruned-space hash and its configs' ids.
  struct Bucket {
    std::string name;
    std::string pruned_space_hash;
    std::vector<std::string> config_ids;
  };
  std::vector<Bucket> buckets;  ///< in declaration order
  /// The command that re-tunes (`cmake --build <build> --target tune.<kernel>`).
  std::string retune_command;

  const Bucket* bucket(std::string_view name) const;
};

/// A record: provenance plus one entry per bucket, kept sorted by bucket label.
class Record {
 public:
  Record() = default;
  /// An empty record carrying the workspace's provenance.
  explicit Record(const Workspace& workspace);

  int schema_version = record_schema_version;
  std::string kernel;
  std::string arch;
  std::string source_hash;
  std::string space_hash;
  std::string toolchain;
  /// The build identity the record was tuned or pinned for (`identity` and `inputs` in the
  /// file): what a stale note names as changed. Never compared to decide freshness (each entry's
  /// cache key covers it); nullopt in records written before it.
  std::optional<BuildIdentity> identity;
  std::string tuner_version;
  RecordContext context;

  /// Adds the entry, replacing any entry of the same bucket; keeps entries sorted by bucket.
  void insert(RecordEntry entry);
  /// The entry of `bucket` (exact match), or nullptr.
  const RecordEntry* get(std::string_view bucket) const;
  /// Entries sorted by bucket label (a loaded record keeps duplicates, for verification).
  const std::vector<RecordEntry>& entries() const noexcept { return entries_; }

  /// The record as JSON text: keys sorted, entries by bucket, two-space indent, shortest
  /// round-trip numbers, a trailing newline. The same record always gives the same bytes.
  std::string dump() const;
  nlohmann::json to_json() const;
  /// Writes `dump()` atomically (write_file_atomic, fault points "record-save-*"), then removes
  /// the temporary files of earlier saves that were killed before their rename. Throws
  /// tune::error on I/O failure; the old file is then intact.
  void save(const std::filesystem::path& path) const;

  /// Reads a record. Structure only (types of known fields; unknown fields are ignored): a
  /// diagnostic for unreadable JSON or a field of the wrong type. A record of another
  /// schema_version loads with only its identity fields, so verification can name it.
  static result<Record> load(const std::filesystem::path& path);
  /// As `load`, from text; `path` labels diagnostics.
  static result<Record> parse(std::string_view json_text, const std::string& path);

 private:
  std::vector<RecordEntry> entries_;
  friend struct RecordReader;
};

/// The state a verification found.
enum class RecordState {
  fresh,       ///< verified: the record applies (warnings may remain)
  stale,       ///< loaded but does not match the workspace: `errors` says why
  missing,     ///< no file
  unreadable,  ///< not a record (bad JSON or a field of the wrong type): bad input
};
std::string_view to_string(RecordState s);

/// The outcome of load_verified: the record when fresh, otherwise every reason it is not.
struct Verification {
  RecordState state = RecordState::missing;
  std::optional<Record> record;       ///< set only when fresh
  std::vector<std::string> errors;    ///< each names the field, record value and current value
  std::vector<std::string> warnings;  ///< drift that only shifts timings
  /// For a stale record: what changed, in words (`the kernel's source changed: kernels/x.cu`),
  /// where the build can tell (verify_kernel_record fills them in).
  std::vector<std::string> changes;
  std::string retune_command;
  /// The commands that pin a config per bucket without a GPU (`tuner record set ...`), the
  /// other way to a fresh record (verify_kernel_record fills them in).
  std::vector<std::string> pin_commands;
  /// For an unreadable record: where in the file (1-based line and column; 0 when unknown).
  int line = 0, column = 0;

  bool ok() const noexcept { return state == RecordState::fresh; }
  /// For people: `<path>: warning: ...` lines, then for a stale, missing or unreadable record
  /// `<path>: error: ...` lines, a `<path>: note: <change>` per change, `<path>: note: re-tune
  /// with: <command>` (on a GPU host) and `<path>: note: or, without a GPU, pin ...: <command>`
  /// per pin command.
  std::string report(const std::string& path_label) const;
};

struct VerifyOptions {
  /// `--allow-toolchain-drift`: toolchain drift is a warning and cache keys are not compared.
  bool allow_toolchain_drift = false;
  /// An entry whose median is another machine's (`source: "adopted"`, never measured here) is
  /// a warning, not an error: only the tune's own check before it writes the record sets it.
  /// Everywhere else such an entry makes the record not fresh (docs/trust.md).
  bool allow_unverified = false;
};

/// Recomputes the current cache key of an entry's config (the entry's bucket and config are in
/// the current space when it is called).
using RecomputeKey = std::function<L2Key(const RecordEntry&)>;

/// Loads the record at `path` and verifies it against `workspace`, in this order
/// (docs/manifest.md "Verification"): identity (schema, kernel, arch, source hash, space hash),
/// entries (duplicate buckets, ids that do not match their params, buckets missing or not in the
/// space, pruned-space hashes, configs outside their bucket's pruned space), toolchain drift, cache
/// keys (another key schema: warning; none or a different digest: error), then context and tuner
/// version drift (warnings). Every reason is collected. Throws only what `recompute_key` throws.
Verification load_verified(const std::filesystem::path& path, const Workspace& workspace,
                           const RecomputeKey& recompute_key, const VerifyOptions& options = {});

/// As load_verified, for a record already in memory (`verify_record` never reads files).
Verification verify_record(Record record, const Workspace& workspace,
                           const RecomputeKey& recompute_key, const VerifyOptions& options = {});

}  // namespace tune
