#include <tuner/core/search/worker_protocol.hpp>

#include <cmath>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/json_whole.hpp>
#include <tuner/core/base/text.hpp>

namespace tune {

namespace {

using nlohmann::json;

// A reader's failure: what is wrong, and the line it read.
unexpected_diag unreadable(std::string_view line, std::string_view what) {
  return fail("", 0, 0, fmt::format("{} in '{}'", what, shorten(std::string(line))));
}

json candidate_json(const CandidateRef& c) {
  return {{"config", c.config}, {"key", c.key}};
}

CandidateRef candidate_from(const json& j) {
  return {j.at("config").get<Config>(), j.at("key").get<std::string>()};
}

// Parses a line as a JSON object, or says why not.
result<json> object_of(std::string_view line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return unreadable(line, "not JSON");
  if (!j.is_object()) return unreadable(line, "not a JSON object");
  return j;
}

template <class T>
T optional_field(const json& j, const char* name, T fallback) {
  auto it = j.find(name);
  return it == j.end() || it->is_null() ? fallback : it->get<T>();
}

}  // namespace

Trial MeasureAnswer::to_trial() const {
  Trial t = state.is_measured() ? Trial::measured(state.measured()->median_ms,
                                                  state.measured()->min_ms, state.measured()->reps)
                                : Trial::invalid(state.invalid()->reason);
  t.batched = batched;
  t.rejected_early = rejected_early && t.is_measured();
  t.warnings = warnings;
  if (!device.empty()) t.device = device;
  t.times = times;
  return t;
}

std::string encode(const WorkerHello& h) {
  json j = {{"protocol", h.protocol}, {"ready", h.ready}};
  if (h.ready) {
    j.update({{"pid", h.pid}, {"device", h.device}, {"driver", h.driver}, {"arch", h.arch}});
  } else {
    j["error"] = h.error;
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string encode(const WorkerRequest& request) {
  json j;
  if (const auto* m = std::get_if<MeasureRequest>(&request)) {
    j = candidate_json(m->candidate);
    j["op"] = "measure";
    if (m->reject) {
      j["reject_above_ms"] = m->reject->above_ms;
      j["reject_alpha"] = m->reject->alpha;
    }
  } else {
    const auto& r = std::get<RunoffRequest>(request);
    j = {{"op", "runoff"},
         {"incumbent", candidate_json(r.incumbent)},
         {"challenger", candidate_json(r.challenger)}};
  }
  return dump_json(j);
}

std::string encode(const MeasureAnswer& a) {
  json j;
  if (const auto* m = a.state.measured()) {
    j = {{"state", "measured"}, {"median_ms", m->median_ms}, {"min_ms", m->min_ms},
         {"reps", m->reps},     {"batched", a.batched},      {"warnings", a.warnings},
         {"device", a.device}};
    if (a.rejected_early) j["rejected_early"] = true;
  } else {
    j = {{"state", "invalid"}, {"reason", a.state.invalid()->reason}};
    if (a.fixture_failure) j["fixture_failure"] = *a.fixture_failure;
    if (a.harness_failure) j["harness_failure"] = *a.harness_failure;
  }
  if (a.times) {
    json t = to_json(*a.times);
    t.erase("wall_ms");  // the supervisor's to measure
    j["times"] = std::move(t);
  }
  if (a.exiting) j["exiting"] = true;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string encode(const RunoffAnswer& a) {
  const RunoffPairs& p = a.pairs;
  json j = json::object();
  if (p.incumbent_failure) j["incumbent_failure"] = *p.incumbent_failure;
  if (p.challenger_failure) j["challenger_failure"] = *p.challenger_failure;
  if (p.failure) j["failure"] = *p.failure;
  if (!p.incumbent_failure && !p.challenger_failure && !p.failure) {
    j = {{"incumbent_ms", p.incumbent_ms},
         {"challenger_ms", p.challenger_ms},
         {"batched", p.batched},
         {"warnings", p.warnings},
         {"device", p.device.value_or("")}};
    if (p.incumbent_alone_ms) j["incumbent_alone_ms"] = *p.incumbent_alone_ms;
    if (p.challenger_alone_ms) j["challenger_alone_ms"] = *p.challenger_alone_ms;
  }
  if (a.exiting) j["exiting"] = true;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string encode(const RefusedAnswer& a) {
  return json{{"error", a.error}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

result<WorkerHello> decode_hello(std::string_view line) {
  result<json> j = object_of(line);
  if (!j) return fail(j.error());
  try {
    WorkerHello h;
    // A worker from before the protocol had a version speaks version 0.
    h.protocol = optional_field<int>(*j, "protocol", 0);
    h.ready = j->at("ready").get<bool>();
    h.error = optional_field<std::string>(*j, "error", "");
    h.pid = optional_field<long>(*j, "pid", 0);
    h.device = optional_field<std::string>(*j, "device", "");
    h.driver = optional_field<std::string>(*j, "driver", "");
    h.arch = optional_field<std::string>(*j, "arch", "");
    return h;
  } catch (const json::exception&) {
    return unreadable(line, "not a worker's hello");
  }
}

result<WorkerRequest> decode_request(std::string_view line) {
  result<json> j = object_of(line);
  if (!j) return fail(j.error());
  try {
    const std::string op = j->at("op").get<std::string>();
    if (op == "measure") {
      MeasureRequest m{candidate_from(*j), std::nullopt};
      if (j->contains("reject_above_ms")) {
        m.reject = EarlyReject{j->at("reject_above_ms").get<double>(),
                               optional_field<double>(*j, "reject_alpha", EarlyReject{}.alpha)};
        if (!std::isfinite(m.reject->above_ms) || !(m.reject->alpha > 0 && m.reject->alpha < 1))
          return unreadable(line, "'reject_above_ms' must be finite and 'reject_alpha' in (0, 1)");
      }
      return WorkerRequest{std::move(m)};
    }
    if (op == "runoff")
      return WorkerRequest{
          RunoffRequest{candidate_from(j->at("incumbent")), candidate_from(j->at("challenger"))}};
    return unreadable(line, fmt::format("unknown op '{}'", op));
  } catch (const json::exception&) {
    return unreadable(line, "not a request");
  }
}

result<std::variant<MeasureAnswer, RefusedAnswer>> decode_measure_answer(std::string_view line) {
  using Answer = std::variant<MeasureAnswer, RefusedAnswer>;
  result<json> j = object_of(line);
  if (!j) return fail(j.error());
  try {
    if (j->contains("error")) return Answer{RefusedAnswer{j->at("error").dump()}};
    MeasureAnswer a;
    const std::string state = j->at("state").get<std::string>();
    if (state == "measured") {
      a.state.value = MeasuredState{j->at("median_ms").get<double>(), j->at("min_ms").get<double>(),
                                    json_whole(*j, "reps", 0)};
      a.batched = optional_field<bool>(*j, "batched", false);
      a.warnings = optional_field<std::vector<std::string>>(*j, "warnings", {});
      a.device = optional_field<std::string>(*j, "device", "");
      a.rejected_early = optional_field<bool>(*j, "rejected_early", false);
    } else if (state == "invalid") {
      a.state.value = InvalidState{j->at("reason").get<std::string>()};
      if (j->contains("fixture_failure"))
        a.fixture_failure = j->at("fixture_failure").get<std::string>();
      if (j->contains("harness_failure"))
        a.harness_failure = j->at("harness_failure").get<std::string>();
    } else {
      return unreadable(line, fmt::format("unknown state '{}'", state));
    }
    a.exiting = optional_field<bool>(*j, "exiting", false);
    if (auto it = j->find("times"); it != j->end() && !it->is_null()) {
      result<TrialTimes> times = times_from_json(*it);
      if (!times) return unreadable(line, times.error().message);
      a.times = *times;
    }
    return Answer{std::move(a)};
  } catch (const json::exception&) {
    return unreadable(line, "not a measure answer");
  }
}

result<std::variant<RunoffAnswer, RefusedAnswer>> decode_runoff_answer(std::string_view line) {
  using Answer = std::variant<RunoffAnswer, RefusedAnswer>;
  result<json> j = object_of(line);
  if (!j) return fail(j.error());
  try {
    if (j->contains("error")) return Answer{RefusedAnswer{j->at("error").dump()}};
    RunoffAnswer a;
    RunoffPairs& p = a.pairs;
    if (j->contains("incumbent_failure"))
      p.incumbent_failure = j->at("incumbent_failure").get<std::string>();
    if (j->contains("challenger_failure"))
      p.challenger_failure = j->at("challenger_failure").get<std::string>();
    if (j->contains("failure")) p.failure = j->at("failure").get<std::string>();
    if (j->contains("incumbent_ms")) {
      p.incumbent_ms = j->at("incumbent_ms").get<std::vector<double>>();
      p.challenger_ms = j->at("challenger_ms").get<std::vector<double>>();
      p.batched = optional_field<bool>(*j, "batched", false);
      p.warnings = optional_field<std::vector<std::string>>(*j, "warnings", {});
      if (auto d = optional_field<std::string>(*j, "device", ""); !d.empty()) p.device = d;
      if (j->contains("incumbent_alone_ms"))
        p.incumbent_alone_ms = j->at("incumbent_alone_ms").get<double>();
      if (j->contains("challenger_alone_ms"))
        p.challenger_alone_ms = j->at("challenger_alone_ms").get<double>();
    }
    const bool failed = p.incumbent_failure || p.challenger_failure || p.failure;
    if (!failed && (p.incumbent_ms.empty() || p.incumbent_ms.size() != p.challenger_ms.size()))
      return unreadable(line, "no paired timings");
    a.exiting = optional_field<bool>(*j, "exiting", false);
    return Answer{std::move(a)};
  } catch (const json::exception&) {
    return unreadable(line, "not a runoff answer");
  }
}

}  // namespace tune
