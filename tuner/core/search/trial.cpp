#include <tuner/core/search/trial.hpp>

#include <cmath>
#include <ctime>

#include <fmt/core.h>

#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/json_position.hpp>
#include <tuner/core/base/json_text.hpp>

namespace tune {

std::string_view to_string(Phase phase) {
  switch (phase) {
    case Phase::required:
      return "required";
    case Phase::search:
      return "search";
    case Phase::runoff:
      return "runoff";
  }
  return "search";
}

std::optional<Phase> parse_phase(std::string_view text) {
  for (Phase p : {Phase::required, Phase::search, Phase::runoff})
    if (to_string(p) == text) return p;
  return std::nullopt;
}

namespace {

// Why a timing cannot be used, or empty when it can.
std::string timing_problem(std::string_view name, double v) {
  if (!std::isfinite(v)) return fmt::format("non-finite {} '{}'", name, v);
  if (v <= 0) return fmt::format("non-positive {} '{}'", name, v);
  return {};
}

}  // namespace

Trial Trial::measured(double median_ms, double min_ms, std::int64_t reps) {
  for (auto [name, v] : {std::pair{"median_ms", median_ms}, std::pair{"min_ms", min_ms}}) {
    std::string problem = timing_problem(name, v);
    if (!problem.empty()) return invalid(std::move(problem));
  }
  if (reps < 1) return invalid(fmt::format("no timed reps (reps {})", reps));
  Trial t;
  t.state.value = TrialState::Measured{median_ms, min_ms, reps};
  return t;
}

Trial Trial::invalid(std::string reason) {
  Trial t;
  t.state.value = TrialState::Invalid{std::move(reason)};
  return t;
}

bool is_utc_time(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SSZ, as utc_now_iso8601 writes it.
  if (text.size() != 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':' || text[19] != 'Z')
    return false;
  const auto number = [&](std::size_t at, std::size_t n) {
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (text[i] < '0' || text[i] > '9') return -1;
      v = v * 10 + (text[i] - '0');
    }
    return v;
  };
  const int year = number(0, 4), month = number(5, 2), day = number(8, 2);
  const int hour = number(11, 2), minute = number(14, 2), second = number(17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60)
    return false;
  static constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return day <= days[month - 1] + (month == 2 && leap ? 1 : 0);
}

std::string utc_now_iso8601() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::json to_json(const TrialTimes& times) {
  nlohmann::json j = {{"fixture_ms", times.fixture_ms},
                      {"load_ms", times.load_ms},
                      {"setup_ms", times.setup_ms},
                      {"warmup_ms", times.warmup_ms},
                      {"timed_ms", times.timed_ms},
                      {"wall_ms", times.wall_ms},
                      {"compile_wait_ms", times.compile_wait_ms},
                      {"strategy_ms", times.strategy_ms}};
  if (times.saved_ms > 0) j["saved_ms"] = times.saved_ms;
  return j;
}

result<TrialTimes> times_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return fail("", 0, 0, "'times' must be an object of numbers");
  TrialTimes t;
  for (auto [name, field] :
       {std::pair{"fixture_ms", &t.fixture_ms}, std::pair{"load_ms", &t.load_ms},
        std::pair{"setup_ms", &t.setup_ms}, std::pair{"warmup_ms", &t.warmup_ms},
        std::pair{"timed_ms", &t.timed_ms}, std::pair{"wall_ms", &t.wall_ms},
        std::pair{"saved_ms", &t.saved_ms}, std::pair{"compile_wait_ms", &t.compile_wait_ms},
        std::pair{"strategy_ms", &t.strategy_ms}}) {
    auto it = j.find(name);
    if (it == j.end() || it->is_null()) continue;  // a field added later reads as 0
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0)
      return fail("", 0, 0, fmt::format("'times.{}' must be a non-negative number", name));
    *field = it->get<double>();
  }
  return t;
}

nlohmann::json to_json(const Trial& trial) {
  nlohmann::json j;
  j["config_id"] = trial.config.id();
  j["params"] = trial.config;
  j["cache_key"] = trial.cache_key ? nlohmann::json(*trial.cache_key) : nlohmann::json();
  if (const auto* m = trial.state.measured()) {
    j["state"] = "measured";
    j["median_ms"] = m->median_ms;
    j["min_ms"] = m->min_ms;
    j["reps"] = m->reps;
  } else {
    j["state"] = "invalid";
    j["reason"] = trial.state.invalid()->reason;
  }
  j["phase"] = to_string(trial.phase);
  j["device"] = trial.device ? nlohmann::json(*trial.device) : nlohmann::json();
  j["time"] = trial.time;
  j["warnings"] = trial.warnings;
  j["batched"] = trial.batched;
  if (!trial.runoff.is_null()) j["runoff"] = trial.runoff;
  if (trial.remote) j["remote"] = *trial.remote;
  if (trial.shard) j["shard"] = *trial.shard;
  if (trial.checks)
    j["checks"] = {{"from", trial.checks->from},
                   {"median_ms", trial.checks->median_ms},
                   {"agreed", trial.checks->agreed}};
  if (trial.times) j["times"] = to_json(*trial.times);
  if (trial.rejected_early) j["rejected_early"] = true;
  if (trial.prior_rank) j["prior_rank"] = *trial.prior_rank;
  if (trial.compile_s) j["compile_s"] = *trial.compile_s;
  if (trial.cached) j["cached"] = true;
  if (trial.same_binary) j["same_binary"] = *trial.same_binary;
  return j;
}

std::optional<std::string> Trial::adopted_from() const {
  if (!adopted()) return std::nullopt;
  const std::string store =
      remote ? fmt::format("the remote store (measured on {})", *remote) : std::string();
  if (!shard) return store;
  return remote ? fmt::format("shard {} ({})", *shard, "from " + store) : "shard " + *shard;
}

std::string to_json_line(const Trial& trial) {
  return dump_json(to_json(trial));
}

namespace {

// The member `key`, or nullptr after setting `problem` to say it is missing.
const nlohmann::json* member(const nlohmann::json& j, const char* key, std::string& problem) {
  auto it = j.find(key);
  if (it == j.end()) {
    problem = fmt::format("missing '{}'", key);
    return nullptr;
  }
  return &*it;
}

std::optional<std::string> optional_string(const nlohmann::json& j, const char* key,
                                           std::string& problem) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) {
    problem = fmt::format("'{}' must be a string or null", key);
    return std::nullopt;
  }
  return it->get<std::string>();
}

}  // namespace

result<Trial> trial_from_json(const nlohmann::json& j) {
  auto bad = [](std::string message) { return fail("", 0, 0, std::move(message)); };
  if (!j.is_object()) return bad("a trial must be a JSON object");
  std::string problem;
  const auto* id = member(j, "config_id", problem);
  const auto* params = member(j, "params", problem);
  const auto* state = member(j, "state", problem);
  const auto* phase = member(j, "phase", problem);
  if (!problem.empty()) return bad(problem);
  if (!id->is_string()) return bad("'config_id' must be a string");
  Config config;
  try {
    config = params->get<Config>();
  } catch (const nlohmann::json::exception&) {
    return bad("'params' must be an object of integers and strings");
  }
  if (config.id() != id->get<std::string>())
    return bad(fmt::format("'config_id' '{}' does not match its params ('{}')",
                           id->get<std::string>(), config.id()));

  Trial t;
  if (*state == "measured") {
    const auto* median = member(j, "median_ms", problem);
    const auto* min = member(j, "min_ms", problem);
    const auto* reps = member(j, "reps", problem);
    if (!problem.empty()) return bad(problem);
    if (!median->is_number() || !min->is_number() || !reps->is_number_integer())
      return bad("'median_ms' and 'min_ms' must be numbers and 'reps' an integer");
    t = Trial::measured(median->get<double>(), min->get<double>(), reps->get<std::int64_t>());
    if (!t.is_measured()) return bad("measured trial with " + t.state.invalid()->reason);
  } else if (*state == "invalid") {
    const auto* reason = member(j, "reason", problem);
    if (!problem.empty()) return bad(problem);
    if (!reason->is_string()) return bad("'reason' must be a string");
    t = Trial::invalid(reason->get<std::string>());
  } else {
    return bad(fmt::format("'state' must be 'measured' or 'invalid', got {}", state->dump()));
  }
  t.config = std::move(config);

  std::optional<Phase> p =
      phase->is_string() ? parse_phase(phase->get<std::string>()) : std::nullopt;
  if (!p)
    return bad(
        fmt::format("'phase' must be 'required', 'search' or 'runoff', got {}", phase->dump()));
  t.phase = *p;
  t.cache_key = optional_string(j, "cache_key", problem);
  t.device = optional_string(j, "device", problem);
  t.time = optional_string(j, "time", problem).value_or("");
  // A time that is not one tune writes (`2026-13-45T99:99:99Z`, a forged or corrupt line) is no
  // time: every reader drops it rather than show or export it.
  if (!is_utc_time(t.time)) t.time.clear();
  t.remote = optional_string(j, "remote", problem);
  t.shard = optional_string(j, "shard", problem);
  if (!problem.empty()) return bad(problem);
  if (auto it = j.find("checks"); it != j.end() && !it->is_null()) {
    const nlohmann::json& c = *it;
    if (!c.is_object() || !c.contains("from") || !c["from"].is_string() ||
        !c.contains("median_ms") || !c["median_ms"].is_number() || !c.contains("agreed") ||
        !c["agreed"].is_boolean())
      return bad(
          "'checks' must be an object of 'from' (a string), 'median_ms' (a number) and "
          "'agreed' (true or false)");
    t.checks = AdoptedCheck{c["from"].get<std::string>(), c["median_ms"].get<double>(),
                            c["agreed"].get<bool>()};
  }
  if (auto it = j.find("warnings"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return bad("'warnings' must be an array of strings");
    for (const auto& w : *it) {
      if (!w.is_string()) return bad("'warnings' must be an array of strings");
      t.warnings.push_back(w.get<std::string>());
    }
  }
  if (auto it = j.find("batched"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return bad("'batched' must be true or false");
    t.batched = it->get<bool>();
  }
  if (auto it = j.find("runoff"); it != j.end()) t.runoff = *it;
  if (auto it = j.find("rejected_early"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return bad("'rejected_early' must be true or false");
    if (it->get<bool>() && !t.is_measured())
      return bad("'rejected_early' is set on an invalid trial (only a measured one stops early)");
    t.rejected_early = it->get<bool>();
  }
  if (auto it = j.find("times"); it != j.end() && !it->is_null()) {
    result<TrialTimes> times = times_from_json(*it);
    if (!times) return bad(times.error().message);
    t.times = *times;
  }
  if (auto it = j.find("same_binary"); it != j.end() && !it->is_null()) {
    if (!it->is_string() || it->get<std::string>().empty())
      return bad("'same_binary' must be the id of the config measured");
    if (!t.is_measured()) return bad("'same_binary' is set on an invalid trial");
    t.same_binary = it->get<std::string>();
  }
  if (auto it = j.find("prior_rank"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || *it < 1 || *it > 1000000)
      return bad("'prior_rank' must be a positive int");
    t.prior_rank = it->get<int>();
  }
  if (auto it = j.find("compile_s"); it != j.end() && !it->is_null()) {
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0 ||
        it->get<double>() > max_compile_s)
      return bad(
          fmt::format("'compile_s' must be a number of seconds in [0, {:g}]", max_compile_s));
    t.compile_s = it->get<double>();
  }
  if (auto it = j.find("cached"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return bad("'cached' must be true or false");
    t.cached = it->get<bool>();
  }
  return t;
}

std::optional<std::string> trial_line_problem(std::string_view line, const Trial& trial,
                                              bool maximize) {
  if (auto dup = duplicate_key_problem(line)) return dup->second;
  if (const MeasuredState* m = trial.state.measured();
      m != nullptr && !maximize && m->min_ms > m->median_ms)
    return fmt::format("min_ms {} is above its median_ms {}", m->min_ms, m->median_ms);
  return std::nullopt;
}

}  // namespace tune
