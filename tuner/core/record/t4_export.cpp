#include <tuner/core/record/t4_export.hpp>

#include <sstream>

#include <fmt/core.h>

#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/base/version.hpp>
#include <tuner/core/search/trial_lines.hpp>

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

std::optional<diagnostic> read_export_log(
    LogLines& lines, const std::function<std::optional<diagnostic>(const LogHeader&)>& on_header,
    const std::function<void(Trial&&)>& on_trial,
    const std::function<void(std::string&&)>& on_warning) {
  // The one reader of log lines (tuner/core/search/trial_lines.hpp): a key written twice, a
  // time's minimum above its median, a line over the limits are skipped as every reader skips
  // them.
  return read_log_lines(lines, {on_header, [&](Trial&& t, int) { on_trial(std::move(t)); },
                                [&](std::string&& w) { on_warning(std::move(w)); }});
}

result<ExportLog> parse_export_log(const std::string& path, std::string_view content) {
  ExportLog log;
  log.path = path;
  std::istringstream in{std::string(content)};
  LogLines lines(path, in);
  std::optional<diagnostic> problem = read_export_log(
      lines,
      [&](const LogHeader& h) {
        log.header = h;
        return std::optional<diagnostic>();
      },
      [&](Trial&& t) { log.trials.push_back(std::move(t)); },
      [&](std::string&& w) { log.warnings.push_back(std::move(w)); });
  if (problem) return fail(*problem);
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

// Every field in which `h` (of a later log) differs from `m`, as `field 'x' (this log) vs 'y'
// ('<the log it came from>')`: the fields TrialLog::open compares (the search too: the strategy
// and the settings that shape its sequence), source_hash and toolchain only when both sides
// carry one.
std::vector<std::string> merge_differences(const LogHeader& h, const LogHeader& first,
                                           const std::string& path,
                                           const std::string& source_hash_path,
                                           const std::string& toolchain_path) {
  std::vector<std::string> out;
  auto diff = [&](const char* field, const std::string& here, const std::string& there,
                  const std::string& there_path) {
    if (here != there)
      out.push_back(
          fmt::format("{} '{}' (this log) vs '{}' ('{}')", field, here, there, there_path));
  };
  diff("tuner", h.tuner, first.tuner, path);
  diff("space_hash", h.space_hash, first.space_hash, path);
  diff("arch", h.arch, first.arch, path);
  if (h.source_hash && first.source_hash)
    diff("source_hash", *h.source_hash, *first.source_hash, source_hash_path);
  if (h.toolchain && first.toolchain)
    diff("toolchain", *h.toolchain, *first.toolchain, toolchain_path);
  diff("objective", h.objective, first.objective, path);
  diff("search", h.search.dump(), first.search.dump(), path);
  return out;
}

}  // namespace

std::optional<diagnostic> T4Writer::begin(const std::string& path, const LogHeader& header) {
  if (!header_) {
    header_ = header;
    path_ = source_hash_path_ = toolchain_path_ = path;
    return std::nullopt;
  }
  const std::vector<std::string> diffs =
      merge_differences(header, *header_, path_, source_hash_path_, toolchain_path_);
  if (!diffs.empty())
    return diagnostic{path, 1, 0,
                      fmt::format("cannot merge with '{}', a log of another search: {}", path_,
                                  join(diffs, ", "))};
  if (!header_->source_hash && header.source_hash) {
    header_->source_hash = header.source_hash;
    source_hash_path_ = path;
  }
  if (!header_->toolchain && header.toolchain) {
    header_->toolchain = header.toolchain;
    toolchain_path_ = path;
  }
  return std::nullopt;
}

void T4Writer::add(const Trial& trial) {
  if (trial.phase == Phase::runoff) {
    ++runoff_trials_;
    return;
  }
  write_json_element(results_, t4_result(trial, header_->objective), results_written_++ == 0);
}

void T4Writer::finish(std::istream& results, std::ostream& out) const {
  if (!header_) throw error("T4Writer::finish: no log");
  auto opt = [](const std::optional<std::string>& s) { return s ? json(*s) : json(); };
  // Kernel Tuner's own writer puts the time unit here; the rest says which search this is.
  const json metadata = {
      {"timeunit", "milliseconds"},
      {"tuner", header_->tuner},
      {"arch", header_->arch},
      {"space_hash", header_->space_hash},
      {"objective", header_->objective},
      {"source_hash", opt(header_->source_hash)},
      {"toolchain", opt(header_->toolchain)},
      {"exported_by", fmt::format("tune {}", tuner_version)},
      {"runoff_trials_left_out", runoff_trials_},
  };
  JsonArrayWriter document(out,
                           json{{"schema_version", std::string(t4_schema_version)},
                                {"results", json::array()},
                                {"metadata", metadata}},
                           "results");
  document.add_written(results, results_written_);
  document.finish();
  out << '\n';
}

result<T4Export> export_t4(const std::vector<ExportLog>& logs) {
  if (logs.empty()) throw error("export_t4: no logs");
  std::stringstream results;
  T4Writer writer(results);
  for (const ExportLog& log : logs) {
    if (auto problem = writer.begin(log.path, log.header)) return fail(*problem);
    for (const Trial& t : log.trials)
      writer.add(t);
  }
  std::ostringstream text;
  writer.finish(results, text);
  return T4Export{json::parse(text.str()), writer.runoff_trials()};
}

}  // namespace tune
