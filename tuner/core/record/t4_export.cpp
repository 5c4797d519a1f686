#include <tuner/core/record/t4_export.hpp>

#include <fmt/core.h>

#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/base/version.hpp>

namespace tune {

using nlohmann::json;

std::string_view to_string(T4Invalidity invalidity) {
  switch (invalidity) {
    case T4Invalidity::correct:
      return "correct";
    case T4Invalidity::compile:
      return "compile";
    case T4Invalidity::constraints:
      return "constraints";
    case T4Invalidity::correctness:
      return "correctness";
    case T4Invalidity::timeout:
      return "timeout";
    case T4Invalidity::runtime:
      return "runtime";
  }
  return "runtime";
}

T4Invalidity classify_invalid_reason(std::string_view reason) {
  // The wordings matched here are written by the supervisor (timeouts), the kernel cache
  // (compiler failures, resource limits, missing entries) and the harness's check_close (the
  // gate). Anything a harness or an objective throws in its own words is a runtime failure:
  // Kernel Tuner files an exception it does not know the same way.
  constexpr std::string_view runoff_prefix = "runoff setup failed: ";
  if (reason.starts_with(runoff_prefix)) reason.remove_prefix(runoff_prefix.size());
  if (reason.starts_with("timed out after ")) return T4Invalidity::timeout;
  if (reason.starts_with("the compiler ") || reason.starts_with("not compiled: "))
    return T4Invalidity::compile;
  if (reason.starts_with("function '") && reason.find(", over the limit of ") != reason.npos)
    return T4Invalidity::constraints;
  if (reason.starts_with("'") && reason.find("' is wrong: ") != reason.npos)
    return T4Invalidity::correctness;
  return T4Invalidity::runtime;
}

result<ExportLog> parse_export_log(const std::string& path, std::string_view content) {
  ExportLog log;
  log.path = path;
  bool have_header = false;
  int number = 0;
  std::size_t pos = 0;
  while (pos < content.size()) {
    ++number;
    std::size_t nl = content.find('\n', pos);
    if (nl == std::string_view::npos) nl = content.size();
    std::string_view line = content.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto skip = [&](const std::string& what) {
      log.warnings.push_back(fmt::format("{}:{}: warning: skipped {}", path, number, what));
    };
    // Too long or too deep to hold (json copies and dumps recurse): the limits every log
    // reader applies.
    if (line.size() > max_log_line_bytes || json_nesting_problem(line, path)) {
      const std::string what =
          line.size() > max_log_line_bytes
              ? fmt::format("a line longer than {}", describe_size(max_log_line_bytes))
              : fmt::format("a line nesting deeper than {} levels", max_json_depth);
      if (!have_header) return fail(path, number, 0, "not a trial log: the first line is " + what);
      skip(what);
      continue;
    }
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!have_header) {
      if (j.is_discarded() || !j.is_object() || !j.contains("log_schema"))
        return fail(path, number, 0, "not a trial log: the first line is not a log header");
      result<LogHeader> header = header_from_json(j);
      if (!header) return fail(path, number, 0, header.error().message);
      if (header->log_schema != log_schema)
        return fail(path, number, 0,
                    fmt::format("a log of schema {}; this tuner reads schema {}",
                                header->log_schema, log_schema));
      log.header = std::move(*header);
      have_header = true;
      continue;
    }
    if (j.is_discarded()) {
      skip("a line that is not valid JSON");
      continue;
    }
    result<Trial> trial = trial_from_json(j);
    if (!trial) {
      skip("an unreadable trial: " + trial.error().message);
      continue;
    }
    // A time's minimum above its median cannot be measured: a forged or corrupt line.
    if (const MeasuredState* m = trial->state.measured();
        m != nullptr && log.header.objective != "maximize" && m->min_ms > m->median_ms) {
      skip(fmt::format("an inconsistent trial: min_ms {} is above its median_ms {}", m->min_ms,
                       m->median_ms));
      continue;
    }
    log.trials.push_back(std::move(*trial));
  }
  if (!have_header) return fail(path, 0, 0, "an empty trial log (no header line)");
  return log;
}

json t4_result(const Trial& trial, std::string_view objective) {
  const bool maximize = objective == "maximize";
  const std::string objective_name = maximize ? "score" : "time";
  json measurements = json::array();
  auto measurement = [&](std::string name, json value, std::string unit) {
    measurements.push_back(
        {{"name", std::move(name)}, {"value", std::move(value)}, {"unit", unit}});
  };
  T4Invalidity invalidity = T4Invalidity::correct;
  if (const MeasuredState* m = trial.state.measured()) {
    measurement(objective_name, m->median_ms, maximize ? "" : "ms");
    // A score's min_ms is not a time, and no better a score than its median: left out.
    if (!maximize) measurement("time_min", m->min_ms, "ms");
    measurement("reps", m->reps, "");
  } else {
    const std::string& reason = trial.state.invalid()->reason;
    invalidity = classify_invalid_reason(reason);
    measurement("error", reason, "");
  }
  measurement("phase", std::string(to_string(trial.phase)), "");
  if (trial.device) measurement("device", *trial.device, "");
  if (!trial.warnings.empty()) measurement("warnings", trial.warnings, "");

  json out = {
      {"configuration", trial.config},
      {"objectives", json::array({objective_name})},
      // A log keeps each trial's median, min and reps, not every rep's time, nor the time its
      // compile or setup took: `runtimes` stays empty rather than invented.
      {"times", {{"runtimes", json::array()}}},
      {"invalidity", std::string(to_string(invalidity))},
      // T4's correctness is a score of the output; tune only knows pass (or not reached) and
      // fail, so only a failed gate scores 0 (Kernel Tuner writes 1 for every trial).
      {"correctness", invalidity == T4Invalidity::correctness ? 0 : 1},
      {"measurements", std::move(measurements)},
  };
  if (!trial.time.empty()) out["timestamp"] = trial.time;
  return out;
}

namespace {

// The search the logs so far belong to: the first log's header, with source_hash and toolchain
// taken from the first log that carries them (and the path of that log, for messages).
struct MergedHeader {
  LogHeader header;
  std::string path;
  std::string source_hash_path;
  std::string toolchain_path;
};

// Every field in which `h` (of a later log) differs from `m`, as `field 'x' (this log) vs 'y'
// ('<the log it came from>')`: the fields TrialLog::open compares (the search too: the strategy
// and the settings that shape its sequence), source_hash and toolchain only when both sides
// carry one.
std::vector<std::string> merge_differences(const LogHeader& h, const MergedHeader& m) {
  std::vector<std::string> out;
  auto diff = [&](const char* field, const std::string& here, const std::string& there,
                  const std::string& there_path) {
    if (here != there)
      out.push_back(
          fmt::format("{} '{}' (this log) vs '{}' ('{}')", field, here, there, there_path));
  };
  const LogHeader& first = m.header;
  diff("tuner", h.tuner, first.tuner, m.path);
  diff("space_hash", h.space_hash, first.space_hash, m.path);
  diff("arch", h.arch, first.arch, m.path);
  if (h.source_hash && first.source_hash)
    diff("source_hash", *h.source_hash, *first.source_hash, m.source_hash_path);
  if (h.toolchain && first.toolchain)
    diff("toolchain", *h.toolchain, *first.toolchain, m.toolchain_path);
  diff("objective", h.objective, first.objective, m.path);
  diff("search", h.search.dump(), first.search.dump(), m.path);
  return out;
}

}  // namespace

result<T4Export> export_t4(const std::vector<ExportLog>& logs) {
  if (logs.empty()) throw error("export_t4: no logs");
  MergedHeader merged{logs.front().header, logs.front().path, logs.front().path, logs.front().path};
  T4Export out;
  json results = json::array();
  for (const ExportLog& log : logs) {
    const std::vector<std::string> diffs = merge_differences(log.header, merged);
    if (!diffs.empty())
      return fail(log.path, 1, 0,
                  fmt::format("cannot merge with '{}', a log of another search: {}", merged.path,
                              join(diffs, ", ")));
    if (!merged.header.source_hash && log.header.source_hash) {
      merged.header.source_hash = log.header.source_hash;
      merged.source_hash_path = log.path;
    }
    if (!merged.header.toolchain && log.header.toolchain) {
      merged.header.toolchain = log.header.toolchain;
      merged.toolchain_path = log.path;
    }
    for (const Trial& t : log.trials) {
      if (t.phase == Phase::runoff) {
        ++out.runoff_trials;
        continue;
      }
      results.push_back(t4_result(t, merged.header.objective));
    }
  }
  auto opt = [](const std::optional<std::string>& s) { return s ? json(*s) : json(); };
  // Kernel Tuner's own writer puts the time unit here; the rest says which search this is.
  json metadata = {
      {"timeunit", "milliseconds"},
      {"tuner", merged.header.tuner},
      {"arch", merged.header.arch},
      {"space_hash", merged.header.space_hash},
      {"objective", merged.header.objective},
      {"source_hash", opt(merged.header.source_hash)},
      {"toolchain", opt(merged.header.toolchain)},
      {"exported_by", fmt::format("tune {}", tuner_version)},
      {"runoff_trials_left_out", out.runoff_trials},
  };
  out.document = {{"schema_version", std::string(t4_schema_version)},
                  {"results", std::move(results)},
                  {"metadata", std::move(metadata)}};
  return out;
}

}  // namespace tune
