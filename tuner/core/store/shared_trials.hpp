// Measured trials shared through the remote store (docs/store.md "Shared trials"). A trial is
// stored at `ac/<trial key>`, a digest of what makes its timing mean the same elsewhere: the
// candidate's cache key, the device name and driver, the bucket and its shape, and the bench
// settings. A tune wraps its objective in `SharedTrials`: before a search candidate is measured
// the store is asked for its trial on the same kind of device, and one found is adopted as a
// resumed log's trial is (logged with `remote` set to the host that measured it); what is
// measured here is uploaded. Incumbents are always measured here and the runoff always runs here:
// the decision never rests on another machine's numbers alone. The search measures an adopted
// finalist here again (`distrust_adopted`), and that measurement, uploaded, replaces the store's
// trial of the candidate.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <tuner/core/base/result.hpp>
#include <tuner/core/search/autotuner.hpp>
#include <tuner/core/search/trial.hpp>
#include <tuner/core/space/space.hpp>
#include <tuner/core/store/remote_store.hpp>

namespace tune {

/// Version of a shared trial's JSON; other versions are ignored.
inline constexpr int shared_trial_schema_version = 1;

/// The store key of a trial: lowercase hex SHA-256 over a tag and each input.
std::string shared_trial_key(const std::string& cache_key, const std::string& device,
                             const std::string& driver, const Bucket& bucket,
                             const BenchSettings& bench);

/// One shared trial: the trial as logged, and where it was measured.
struct SharedTrial {
  Trial trial;
  std::string host;    ///< the machine that measured it
  std::string device;  ///< as its worker named it
  std::string driver;
};

/// `{"schema_version": 1, "host", "device", "driver", "trial": {...}}`.
nlohmann::json to_json(const SharedTrial& shared);
/// Reads a shared trial; the message says what is wrong.
result<SharedTrial> shared_trial_from_json(const nlohmann::json& j);

/// This machine's host name ("unknown" when it has none).
std::string host_name();

/// An objective that adopts and uploads shared trials around another.
class SharedTrials : public ForwardingObjective {
 public:
  /// What the trial key needs besides the candidate, and what to adopt.
  struct Context {
    Bucket bucket;
    BenchSettings bench;
    std::string host;  ///< written into uploads
    /// Adopt remote trials (false: --no-remote-trials; trials measured here are still shared).
    bool adopt = true;
    /// Indices into `configs()` that are measured here whatever the store holds (the required
    /// configs and the committed winner).
    std::vector<std::size_t> incumbents;
    /// The device and driver the measuring worker reported, empty until one started: the
    /// first candidate is measured here, which also makes sure a worker runs on this machine.
    std::function<std::pair<std::string, std::string>()> device;
  };

  SharedTrials(Objective& inner, RemoteStore& store, Context context);

  /// Adopts the store's trial of the candidate, or measures it with the inner objective and
  /// uploads the trial; every other virtual goes to the inner objective.
  Trial measure(std::size_t index) override;
  /// The candidate is measured here from now on (the search checks its adopted trial).
  void distrust_adopted(std::size_t index) override;

  /// How many trials were adopted from the store, and how many uploaded.
  std::size_t adopted() const noexcept { return adopted_; }
  std::size_t uploaded() const noexcept { return uploaded_; }

 private:
  std::optional<std::string> key_of(std::size_t index);

  RemoteStore& store_;
  Context context_;
  std::size_t adopted_ = 0;
  std::size_t uploaded_ = 0;
  std::set<std::size_t> distrusted_;
};

}  // namespace tune
