#include <tuner/core/store/shared_trials.hpp>

#include <unistd.h>

#include <algorithm>

#include <fmt/core.h>

#include <tuner/core/base/hash.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/store/trust.hpp>

namespace tune {

using nlohmann::json;

std::string shared_trial_key(const std::string& cache_key, const std::string& device,
                             const std::string& driver, const Bucket& bucket,
                             const BenchSettings& bench) {
  Sha256 h;
  h.update_field("tune-shared-trial/1");
  h.update_field(cache_key);
  h.update_field(device);
  h.update_field(driver);
  h.update_field(bucket.name);
  for (const auto& [name, value] : bucket.shape) {
    h.update_field(name);
    h.update_field(value.canonical());
  }
  // The bench settings as the worker uses them; fixed formatting, so every host agrees.
  h.update_field(
      fmt::format("warmup_ms={:.17g} rep_ms={:.17g} min_reps={} max_reps={} "
                  "clear_l2={}",
                  bench.warmup_ms, bench.rep_ms, bench.min_reps, bench.max_reps, bench.clear_l2));
  // A preset changes how the search times (only then is it keyed: older keys stay the same).
  if (!bench.preset.empty()) h.update_field("preset=" + bench.preset);
  return h.hex_digest();
}

json to_json(const SharedTrial& s) {
  return json{{"schema_version", shared_trial_schema_version},
              {"host", s.host},
              {"device", s.device},
              {"driver", s.driver},
              {"trial", to_json(s.trial)}};
}

result<SharedTrial> shared_trial_from_json(const json& j) {
  auto bad = [](const std::string& m) { return fail("", 0, 0, m); };
  if (!j.is_object()) return bad("a shared trial must be a JSON object");
  // Any type may stand there (an object once threw out of value<int> and ended the tune).
  const json version = j.value("schema_version", json());
  if (!version.is_number() || version.get<double>() != shared_trial_schema_version)
    return bad(fmt::format("shared trial schema_version {} is not {}",
                           shorten(dump_json(version), 40), shared_trial_schema_version));
  SharedTrial s;
  for (auto [field, out] : {std::pair{"host", &s.host}, std::pair{"device", &s.device},
                            std::pair{"driver", &s.driver}}) {
    auto it = j.find(field);
    if (it == j.end() || !it->is_string())
      return bad(fmt::format("shared trial field '{}' must be a string", field));
    *out = it->get<std::string>();
    // Names, not documents: a host name is at most 255 bytes.
    if (out->size() > 256)
      return bad(fmt::format("shared trial field '{}' is {} bytes, more than a name's 256", field,
                             out->size()));
  }
  auto t = j.find("trial");
  if (t == j.end()) return bad("shared trial has no 'trial'");
  result<Trial> trial = trial_from_json(*t);
  if (!trial) return fail(trial.error());
  // The rule of every trial reader (a time's minimum above its median); parse_store_json has
  // refused a key said twice.
  if (std::optional<std::string> why = trial_line_problem({}, *trial, false))
    return bad("shared trial: " + *why);
  s.trial = std::move(*trial);
  return s;
}

std::string host_name() {
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return "unknown";
  return host;
}

SharedTrials::SharedTrials(Objective& inner, RemoteStore& store, Context context)
    : ForwardingObjective(inner), store_(store), context_(std::move(context)) {}

std::optional<std::string> SharedTrials::key_of(std::size_t index) {
  std::optional<std::string> cache_key = inner_.cache_key(index);
  if (!cache_key || !context_.device) return std::nullopt;
  const auto [device, driver] = context_.device();
  if (device.empty()) return std::nullopt;
  return shared_trial_key(*cache_key, device, driver, context_.bucket, context_.bench);
}

void SharedTrials::distrust_adopted(std::size_t index) {
  distrusted_.insert(index);
  inner_.distrust_adopted(index);
}

Trial SharedTrials::measure(std::size_t index) {
  const bool incumbent = std::find(context_.incumbents.begin(), context_.incumbents.end(), index) !=
                         context_.incumbents.end();
  if (context_.adopt && !incumbent && !distrusted_.contains(index) && store_.reachable()) {
    if (std::optional<std::string> key = key_of(index)) {
      if (std::optional<json> j = store_.get_json("ac/" + *key)) {
        result<SharedTrial> shared = shared_trial_from_json(*j);
        // Only a valid measurement of this very candidate: an invalid one may have been that
        // machine's trouble, and is retried here as a resumed log retries it.
        // The object must say it is of this device and driver, as its key does.
        const auto [device, driver] = context_.device();
        if (shared && shared->trial.config == configs()[index] &&
            shared->trial.cache_key == inner_.cache_key(index) && shared->device == device &&
            shared->driver == driver)
          if (std::optional<Trial> hint = as_hint(std::move(shared->trial))) {
            hint->device = shared->device;
            hint->remote = shared->host;
            ++adopted_;
            return std::move(*hint);
          }
      }
    }
  }
  Trial t = inner_.measure(index);
  // Share what was measured here and valid; runoffs are never shared (they are not trials of
  // one candidate).
  if (t.is_measured() && !t.remote) {
    if (std::optional<std::string> key = key_of(index)) {
      const auto [device, driver] = context_.device();
      SharedTrial s{t, context_.host, device, driver};
      s.trial.config = configs()[index];
      if (!s.trial.cache_key) s.trial.cache_key = inner_.cache_key(index);
      if (s.trial.time.empty()) s.trial.time = utc_now_iso8601();
      if (store_.put_json("ac/" + *key, to_json(s))) ++uploaded_;
    }
  }
  return t;
}

}  // namespace tune
