// Which config ships, per architecture and bucket, and why: the policy of the winners header
// (`tuner header`, winners_header.hpp), as data.
//
// Per architecture, the record is verified as `tuner verify` does, and each bucket takes:
// - the entry of a fresh record;
// - the entry of a stale record all the same, with a warning per reason the verification gave
//   and a note naming the command that re-tunes (the record's test still fails);
// - the space's first `require` config (the incumbent) as fallback, with a warning, when there
//   is no record, the record has no entry for the bucket, or the entry's config has other params
//   than the space;
// - nothing, an error, when it falls back and the space requires no config.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/build/kernel_build.hpp>
#include <tuner/core/record/record.hpp>

namespace tune {

/// Where a bucket's shipped config comes from.
enum class WinnerSource {
  record,     ///< the record's entry (fresh or stale: ArchWinners::record_state says which)
  incumbent,  ///< the space's first `require` config, as fallback
  none,       ///< no usable entry and no incumbent: nothing ships, an error
};

/// Why a bucket falls back instead of taking a record's entry.
enum class FallbackReason {
  no_record,     ///< the architecture has no record
  no_entry,      ///< the record has no entry for the bucket
  other_params,  ///< the entry's config has other params than the space
};

/// One bucket's shipped config on one architecture.
struct BucketWinner {
  std::string bucket;  ///< the bucket's name, as the space spells it
  WinnerSource source = WinnerSource::none;
  std::optional<FallbackReason> fallback;  ///< set when source is incumbent or none
  std::optional<Config> config;            ///< unset only when source is none
};

/// One architecture's record and its winners.
struct ArchWinners {
  std::string arch;
  RecordState record_state = RecordState::missing;  ///< fresh, stale or missing
  std::string record_label;                         ///< the record path as messages name it
  std::optional<std::string> record_date;           ///< the record's date (YYYY-MM-DD), if any
  std::vector<std::string> stale_reasons;           ///< the verification's errors when stale
  std::vector<BucketWinner> buckets;                ///< in the space's bucket order
};

/// A warning, note or error about one record, for people.
struct WinnerNotice {
  enum class Severity { warning, note, error };
  std::string path;  ///< the record as messages name it (display_path)
  Severity severity = Severity::warning;
  std::string message;

  /// `<path>: <severity>: <message>`.
  std::string str() const;
};

/// The winners of every architecture, and what choosing them had to say.
struct WinnersTable {
  std::vector<ArchWinners> archs;     ///< in the manifest's order
  std::vector<WinnerNotice> notices;  ///< in the order found: per arch, the record's, then buckets'
  /// Bad input that stopped the choice: a record that is not a record (`<record>: error: ...`),
  /// or a verification that failed (an arch or space problem). The archs before it are in
  /// `archs` and their notices in `notices`, which come first when printed.
  std::optional<diagnostic> bad_input;

  /// Whether every bucket of every architecture has a config: no bad input and no error among
  /// the notices.
  bool complete() const;
};

/// Chooses the winners of every architecture of `build` (see the head of this file), stopping
/// at the first bad input (WinnersTable::bad_input). Throws what verify_kernel_record throws
/// (nvcc cannot be run).
WinnersTable choose_winners(const KernelBuild& build);

}  // namespace tune
