// A trial is one measurement of one config: its state (measured, with timings, or invalid, with
// a reason) and what explains it (cache key, phase, device, time, warnings). Trials are data:
// a candidate that fails to compile, launch or measure becomes an invalid trial, never an
// exception out of the search. Each trial is one JSON line of the trial log
// (docs/formats.md "Trial log").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/result.hpp>

namespace tune {

/// Why a trial was taken: a declared incumbent, a searcher's candidate, or a finalist of the
/// paired runoff.
enum class Phase { required, search, runoff };

/// `required`, `search` or `runoff`.
std::string_view to_string(Phase phase);
/// The phase named `text`, or nullopt.
std::optional<Phase> parse_phase(std::string_view text);

/// A valid measurement. Times in milliseconds (with a maximizing objective `median_ms` holds
/// the score, higher is better); `reps` is the number of timed repetitions behind them.
struct MeasuredState {
  double median_ms = 0;
  double min_ms = 0;
  std::int64_t reps = 0;
  friend bool operator==(const MeasuredState&, const MeasuredState&) = default;
};

/// A candidate that could not be measured; `reason` says why (lowercase, no final period).
struct InvalidState {
  std::string reason;
  friend bool operator==(const InvalidState&, const InvalidState&) = default;
};

/// The outcome of a trial: timings, or the reason it has none.
struct TrialState {
  using Measured = MeasuredState;
  using Invalid = InvalidState;

  std::variant<Measured, Invalid> value{InvalidState{"not measured"}};

  bool is_measured() const noexcept { return value.index() == 0; }
  /// The timings, or nullptr when invalid.
  const Measured* measured() const noexcept { return std::get_if<Measured>(&value); }
  /// The reason, or nullptr when measured.
  const Invalid* invalid() const noexcept { return std::get_if<Invalid>(&value); }

  friend bool operator==(const TrialState&, const TrialState&) = default;
};

/// Where a trial's time went (docs/formats.md "Trial log"), in milliseconds of host wall time
/// unless said otherwise. The worker reports the first five; the supervisor adds `wall_ms`.
/// The overhead of a trial is what lies outside warm-up and timed reps: `wall_ms - warmup_ms -
/// timed_ms`.
struct TrialTimes {
  double fixture_ms = 0;  ///< building the bucket's fixture (a worker's first candidate only)
  double load_ms = 0;     ///< loading the candidate's module
  double setup_ms = 0;    ///< restoring the fixture's inputs and the harness's setup (the gate)
  double warmup_ms = 0;   ///< the bench's first launch, estimate and warm-up
  double timed_ms = 0;    ///< the timed reps (device time, the flush and spin before each included)
  /// From the end of the previous trial (or the start of the tune) to the end of this one, as
  /// the supervisor saw it: worker starts, waits for the compiler and the protocol included.
  double wall_ms = 0;
  /// The timed reps an early rejection skipped, estimated from the reps it took (device time);
  /// 0 for a candidate measured in full. Logged only when not 0.
  double saved_ms = 0;
  /// Of `wall_ms`: the search waiting for this candidate's compile (no proposal was ready).
  double compile_wait_ms = 0;
  /// Of `wall_ms`: the search waiting for the strategy (propose and tell) since the previous
  /// trial; what the strategy did on a helper thread while the GPU measured is not in it.
  double strategy_ms = 0;
  friend bool operator==(const TrialTimes&, const TrialTimes&) = default;
};

/// What a trial measured here to check an adopted one says of it (docs/search.md "Adopted
/// trials are checked here"): where the adopted trial came from, its median, and whether the two
/// agreed within the runoff's agreement threshold. An adopted trial that did not agree is
/// discarded: it stays in the log, and this trial takes its place for good.
struct AdoptedCheck {
  std::string from;      ///< adopted_from() of the adopted trial
  double median_ms = 0;  ///< the adopted median
  bool agreed = false;   ///< within RunoffPolicy::agreement_pct of this trial's median
  friend bool operator==(const AdoptedCheck&, const AdoptedCheck&) = default;
};

/// One measurement of one config, as logged.
struct Trial {
  Config config;
  TrialState state;
  /// The candidate's cache key when its objective supplies one (resume compares it).
  std::optional<std::string> cache_key;
  Phase phase = Phase::search;
  /// The device that measured it, when known (`NVIDIA H200`).
  std::optional<std::string> device;
  /// When it was taken: UTC ISO-8601 (`2026-11-29T10:00:00Z`); empty until stamped.
  std::string time;
  /// What may have disturbed it (a busy or throttling GPU); never a reason to reject it.
  std::vector<std::string> warnings;
  /// Whether its timings are per launch of a batch (a CUDA graph of several launches).
  bool batched = false;
  /// A runoff trial's statistics (see docs/formats.md "Record"); null otherwise.
  nlohmann::json runoff;
  /// The host that measured it, when it was adopted from the remote store (docs/store.md
  /// "Shared trials") rather than measured here; logged as `remote`.
  std::optional<std::string> remote;
  /// The shard that measured it (`2/4`), when `tuner merge` brought it from that shard's log;
  /// logged as `shard`.
  std::optional<std::string> shard;
  /// Set on a trial measured here to check an adopted one of the same config; logged as
  /// `checks` (`{"from", "median_ms", "agreed"}`).
  std::optional<AdoptedCheck> checks;
  /// Where its time went, when the objective reports it (a tune's supervisor does); logged as
  /// `times`. Logs from before the field read as unset.
  std::optional<TrialTimes> times;
  /// Its timed reps stopped early (docs/measurement.md "Early rejection"): its median was, with
  /// confidence, more than the margin above the best so far. Measured, never a finalist; logged
  /// as `rejected_early` only when set.
  bool rejected_early = false;
  /// Set when the search measured it as one of the prior's best (docs/search.md "Re-tunes start
  /// from what was measured"): its rank in the prior, 1 for the prior's best; logged as
  /// `prior_rank`.
  std::optional<int> prior_rank;
  /// Seconds the compiler ran for this candidate (the kernel cache entry's `compile_s`), when
  /// known; logged as `compile_s`.
  std::optional<double> compile_s;
  /// The candidate needed no compile when the strategy proposed it (the kernel cache had it):
  /// the search's window is for the candidates that do, and a resumed run counts this one as
  /// the run it resumes did (docs/search.md "The pipeline"). Logged as `cached` only when set.
  bool cached = false;
  /// The config whose measurement this trial shares, when its cubin is byte-identical to that
  /// config's (the same SHA-256: a param that never reaches the kernel): not measured again, and
  /// never the best or a finalist (the config measured is). Logged as `same_binary`.
  std::optional<std::string> same_binary;

  /// A measured trial, or an invalid one when the timings are not usable: a non-finite or
  /// non-positive median or min, or fewer than one rep (the reason names the value). The
  /// config and the other fields are left for the caller to fill.
  static Trial measured(double median_ms, double min_ms, std::int64_t reps);
  /// An invalid trial with `reason`.
  static Trial invalid(std::string reason);

  bool is_measured() const noexcept { return state.is_measured(); }
  /// Whether another machine or process measured it: adopted from the remote store (`remote`)
  /// or from a shard's log (`shard`).
  bool adopted() const noexcept { return remote.has_value() || shard.has_value(); }
  /// Where an adopted trial came from, for people and records (`the remote store (measured on
  /// gpu-a)`, `shard 2/4`, `shard 2/4 (from the remote store, measured on gpu-a)`); nullopt
  /// for one measured here.
  std::optional<std::string> adopted_from() const;
  /// The config's canonical id.
  std::string id() const { return config.id(); }

  friend bool operator==(const Trial&, const Trial&) = default;
};

/// The current time as UTC ISO-8601 with seconds (`2026-11-29T10:00:00Z`).
std::string utc_now_iso8601();

/// Whether `text` is a time as utc_now_iso8601 writes it (`2026-12-03T21:02:54Z`), of a real
/// date and time of day; a trial's `time` that is not reads as none.
bool is_utc_time(std::string_view text);

/// The times as one JSON object: every field, in milliseconds (`saved_ms` only when not 0).
nlohmann::json to_json(const TrialTimes& times);
/// Reads times back: an object of non-negative numbers; a missing field reads as 0, unknown
/// ones are ignored. The message says what is wrong.
result<TrialTimes> times_from_json(const nlohmann::json& j);

/// The trial as one JSON object (keys sorted by nlohmann::json): `config_id`, `params`,
/// `cache_key`, `state` and its fields, `phase`, `device`, `time`, `warnings`, `batched`, and
/// `runoff`, `remote`, `times`, `rejected_early` and `prior_rank` when present.
nlohmann::json to_json(const Trial& trial);
/// The trial as one line of the log: compact JSON, no trailing newline.
std::string to_json_line(const Trial& trial);
/// Reads a trial back. The message (no path or line: the log adds them) names what is missing
/// or wrong, including a `config_id` that does not match its `params`. Unknown fields are
/// ignored.
result<Trial> trial_from_json(const nlohmann::json& j);

/// Why trial line `line`, read as `trial`, is not believed, or nullopt: a key written twice in
/// one object (a JSON parser would silently keep the last: `"median_ms": 1.0, "median_ms":
/// 0.0001`), or a time whose minimum is above its median (no measurement gives that; a score,
/// under `maximize`, is not a time). The one rule of every trial reader: a run's resume and
/// prior, `show`, `report` and `export`.
std::optional<std::string> trial_line_problem(std::string_view line, const Trial& trial,
                                              bool maximize = false);

}  // namespace tune
