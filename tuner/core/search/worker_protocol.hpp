// The measuring worker's wire protocol: how the supervisor (supervisor.hpp) and a kernel's runner
// (tuner/cuda/worker.hpp) talk. One JSON object per line, both ways; the worker answers each
// request with exactly one line, in order. The structs here are the protocol; `encode` and the
// `decode_*` functions are its only readers and writers, so both sides agree by construction.
//
//   worker -> {"protocol":1,"ready":true,"pid":123,"device":"NVIDIA H200","driver":"580.159.04",
//              "arch":"sm_90"}                                   (or "ready":false,"error":"...")
//   supervisor -> {"op":"measure","config":{"BM":64},"key":"<hex>"} (with "reject_above_ms":..,
//              "reject_alpha":.. when the candidate may stop early, early_reject.hpp)
//   worker -> {"state":"measured","median_ms":..,"min_ms":..,"reps":..,"batched":false,
//              "warnings":[..],"device":"..","times":{"fixture_ms":..,"load_ms":..,
//              "setup_ms":..,"warmup_ms":..,"timed_ms":..}}      (with "rejected_early":true and
//              "times.saved_ms" when it stopped early; or "state":"invalid","reason",
//              with "fixture_failure":".." when the bucket's fixture failed: every candidate of
//              the bucket would fail the same way)
//   supervisor -> {"op":"runoff","incumbent":{"config":..,"key":..},"challenger":{...}}
//   worker -> {"incumbent_ms":[..],"challenger_ms":[..],"batched":..,"warnings":[..],
//              "device":".."} or {"incumbent_failure":"..","challenger_failure":".."} (either
//              or both) or {"failure":".."} (the paired bench failed after both setups)
//   worker -> {"error":"..."}                     to any request it cannot read (a bug)
// Any answer may carry "exiting":true: the worker exits after it (a CUDA error may have
// poisoned its context). The hello's `protocol` is this header's version; a supervisor refuses a
// worker of another version (a runner built from another tune) with the command that rebuilds
// it. Unknown fields are ignored, so a field may be added without a new version.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/search/autotuner.hpp>
#include <tuner/core/search/early_reject.hpp>
#include <tuner/core/search/trial.hpp>

namespace tune {

/// The protocol version this build speaks; bump it when a change breaks either reader.
inline constexpr int worker_protocol_version = 1;

/// The worker's first line: ready to measure on its device, or why not.
struct WorkerHello {
  int protocol = worker_protocol_version;
  bool ready = false;
  std::string error;   ///< why it cannot measure (no GPU, bad arguments), when !ready
  long pid = 0;        ///< the worker's process id
  std::string device;  ///< "NVIDIA H200"
  std::string driver;  ///< "580.159.04"
  std::string arch;    ///< the device's architecture, "sm_90"
};

/// A candidate the worker loads from the kernel cache: its config and cache key.
struct CandidateRef {
  Config config;
  std::string key;
};

/// Set up (gate included) and time one candidate.
struct MeasureRequest {
  CandidateRef candidate;
  /// Set when the candidate may stop early (a search candidate with a best so far): the worker
  /// takes its timed reps in rounds and stops once they are clearly above `above_ms`.
  std::optional<EarlyReject> reject = std::nullopt;
};

/// Set up both finalists again and time them in strict alternation.
struct RunoffRequest {
  CandidateRef incumbent;
  CandidateRef challenger;
};

using WorkerRequest = std::variant<MeasureRequest, RunoffRequest>;

/// The answer to a MeasureRequest.
struct MeasureAnswer {
  TrialState state;  ///< timings, or the reason the candidate is invalid
  bool batched = false;
  bool rejected_early = false;  ///< its timed reps stopped early (MeasureRequest::reject)
  std::vector<std::string> warnings;
  std::string device;
  bool exiting = false;  ///< the worker exits after this answer
  /// Where the worker's time went (every field but `wall_ms`), when it says; invalid answers
  /// carry it too (the time a failing gate took). Workers from before the field send none.
  std::optional<TrialTimes> times;
  /// Set when the bucket's fixture (the harness's `prepare`) failed: its message. The candidate
  /// is invalid with it, and so would every other candidate of the bucket be.
  std::optional<std::string> fixture_failure;
  /// Set when the harness itself failed in a way that does not depend on the candidate (it
  /// read a param or shape name the space does not have): its message, with the harness's
  /// file and line. Every candidate of the bucket would fail with it.
  std::optional<std::string> harness_failure;

  /// The answer as a trial (config, phase and time left for the search to fill). Timings that
  /// cannot be used (non-finite, no reps) make it invalid, as Trial::measured says.
  Trial to_trial() const;
};

/// The answer to a RunoffRequest.
struct RunoffAnswer {
  RunoffPairs pairs;
  bool exiting = false;  ///< the worker exits after this answer
};

/// What a worker answers to a request it cannot read.
struct RefusedAnswer {
  std::string error;
};

/// One line (no newline) for each message.
std::string encode(const WorkerHello& hello);
std::string encode(const WorkerRequest& request);
std::string encode(const MeasureAnswer& answer);
std::string encode(const RunoffAnswer& answer);
std::string encode(const RefusedAnswer& answer);

/// The readers. A line that is not such a message is a diagnostic whose message quotes the
/// line (shortened) and says what is wrong; path, line and column are empty.
result<WorkerHello> decode_hello(std::string_view line);
result<WorkerRequest> decode_request(std::string_view line);
result<std::variant<MeasureAnswer, RefusedAnswer>> decode_measure_answer(std::string_view line);
result<std::variant<RunoffAnswer, RefusedAnswer>> decode_runoff_answer(std::string_view line);

}  // namespace tune
