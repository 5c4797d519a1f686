// What `tuner warm` says of a warm's outcome, apart from the compiling: the invalid candidates
// grouped by reason (one line for thirteen candidates that failed the same way, not thirteen),
// the buckets that are left with no valid candidate (which can never be tuned or pinned, so
// warm fails for them), and the warm stamps of candidates the kernel cache no longer holds.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <tuner/core/build/kernel_build.hpp>

namespace tune::cli {

/// What the kernel cache holds for one candidate of one architecture.
struct CandidateOutcome {
  std::string config_id;
  bool missing = false;         ///< no cache entry
  bool valid = false;           ///< an `ok` entry
  std::string status;           ///< the entry's status (`failed`, `over_limit`, ...)
  std::string reason;           ///< why it is invalid
  std::filesystem::path entry;  ///< the entry's file
};

/// The invalid ones, one line each per distinct status and reason, in order of first
/// appearance: `tuner warm: k sm_90 BLOCK=64: invalid (failed): <reason> (see <entry>)` for one
/// candidate, `tuner warm: k sm_90: 13 candidates invalid (failed) the same way: <reason>
/// (BLOCK=64, BLOCK=128, BLOCK=256 and 10 more; see <the first's entry>)` for several.
std::vector<std::string> describe_invalid(const std::string& kernel, const std::string& arch,
                                          const std::vector<CandidateOutcome>& outcomes);

/// The buckets of `space` whose every candidate `outcomes` holds as invalid (none missing, at
/// least one config): for each, `tuner warm: k sm_90: error: bucket 'small' has no valid
/// candidate (all 13 invalid, above): it can never be tuned or pinned; fix the kernel, its
/// flags or its space`. Throws tune::input_error when a bucket's configs cannot be listed.
std::vector<std::string> buckets_without_valid(const std::string& kernel, const std::string& arch,
                                               const Space& space,
                                               const std::vector<CandidateOutcome>& outcomes);

/// The warm step's stamp of `config_id` for `arch`, as tune_add_kernel names it:
/// `<log_dir>/<arch>/warm/c-<first 16 hex digits of SHA-256(id)>.stamp`.
std::filesystem::path warm_stamp(const Manifest& manifest, const std::string& arch,
                                 const std::string& config_id);

}  // namespace tune::cli
