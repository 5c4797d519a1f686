// What the tune of one bucket found, typed, and the record assembled from every bucket's result.
// `tuner run` keeps each bucket's result beside its trial log (`<bucket>.result.json`), so that
// `tuner run --bucket B` re-tunes one bucket and takes the others' winners from their last
// results; a result of another pruned space does not count.
//
// Example:
//   std::vector<BucketResult> results = ...;            // one per bucket, each with a winner
//   Record record = assemble_record(workspace, results); // stamped here and now
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/record/record.hpp>
#include <tuner/core/search/runoff.hpp>

namespace tune {

/// Version of the result file's JSON (a result of another version is not reused).
inline constexpr int bucket_result_schema_version = 1;

/// One bucket's winner as the tune decided it.
struct MeasuredWinner {
  Config config;
  double median_ms = 0;
  double min_ms = 0;
  std::int64_t reps = 0;           ///< timed reps behind the median
  std::optional<L2Key> cache_key;  ///< the candidate's cache key, tagged with its schema
  /// Set when the median is another machine's (an adopted trial the search could not check
  /// here): where it came from (Trial::adopted_from). The record entry is then `adopted`.
  std::optional<std::string> adopted_from;

  friend bool operator==(const MeasuredWinner&, const MeasuredWinner&) = default;
};

/// What the tune of one bucket of one kernel and architecture found.
struct BucketResult {
  std::string kernel;
  std::string bucket;
  std::string arch;
  std::string pruned_space_hash;      ///< of the bucket's pruned space when it was tuned
  std::optional<std::string> device;  ///< as the worker reported it
  std::optional<std::string> driver;
  std::size_t trials = 0;   ///< trials of the search (adopted from the log or measured)
  std::size_t resumed = 0;  ///< of which adopted from the log
  std::size_t invalid = 0;  ///< of which invalid
  bool budget_exhausted = false;
  std::optional<std::string> incumbent_failure;  ///< why the run stopped before the search
  /// The bucket's fixture failed (the harness's `prepare`): its message. Every candidate of
  /// the bucket is invalid with it; none was logged.
  std::optional<std::string> fixture_failure;
  /// The harness failed as it would for every candidate (a name the space lacks): its message,
  /// with the harness's file and line. None was logged.
  std::optional<std::string> harness_failure;
  std::optional<RunoffStats> runoff;  ///< when a runoff decided (or a forfeit)
  /// Why the runoff due between two finalists did not run (not even one round of pairs fit in
  /// the budget left); the record's entry says so (`runoff.outcome` `skipped`).
  std::optional<std::string> runoff_skipped;
  double strategy_s = 0;               ///< the strategy's own time (propose and tell), in seconds
  std::optional<MeasuredWinner> best;  ///< nullopt: no winner
  /// The incumbent as measured (the first config of the required phase), for the speed-up.
  std::optional<IncumbentTiming> incumbent;
  int workers_started = 0;
  /// The prior the search started from (a warm re-tune): `{"from", "tuner", "configs",
  /// "top_k"}`; null when none.
  nlohmann::json prior;

  /// The result file's JSON (pretty-printed, trailing newline).
  std::string dump() const;
  /// Writes `dump()` atomically (fault points "result-save-*"). Throws tune::error on I/O
  /// failure.
  void save(const std::filesystem::path& path) const;
  /// Reads a result file; a diagnostic for an unreadable one or one of another version.
  static result<BucketResult> load(const std::filesystem::path& path);
};

void to_json(nlohmann::json& j, const BucketResult& r);
/// Throws nlohmann::json exceptions on a malformed result.
void from_json(const nlohmann::json& j, BucketResult& r);

/// The record of `workspace` (its provenance) with one measured entry per result, context
/// stamped here and now (host, date) and the device and driver the results report. Every result
/// must have a winner (throws tune::error otherwise).
Record assemble_record(const Workspace& workspace, const std::vector<BucketResult>& results);

}  // namespace tune
