// `tuner report <log or folder>... [--output F]`: an HTML page with plots of a tune's trials, one
// section per trial log (a folder stands for every `*.trials.jsonl` below it, in name order).
//
// Each section: the log's header; a summary (trials, measured, invalid, the best config and its
// median); "trials in order", every trial's median against its place in the run (required,
// search and runoff trials marked apart, the prior's best that a warm re-tune measured first as
// triangles, invalid ones as crosses along the top, the best so far as a line, a log scale when
// the times span more than 10x) beside the best so far against time; "configs by median", the
// fastest measured configs as bars with their distance from the best; "which params matter",
// each varying param's values with the median of the configs that have them, params ordered by
// spread, green marking the best config's value as it marks the best config above; the invalid
// trials grouped by reason; and the runoff as a sentence (who was kept, and why) over its
// statistics, formatted. The summary line gives the best config's speed-up over the incumbent
// (the first config of the required phase). A page of several logs starts with a summary table
// (per log: arch, trials, the best config, its median and speed-up, the runoff's outcome, a link
// to its section). Params with one value
// in every trial are listed once in the header and left out of the config labels, which wrap at
// commas. One self-contained file: inline SVG and CSS, no script and nothing fetched, and the same
// logs always give the same bytes.
//
// A log in its kernel's build folder (`<build>/tune/<kernel>/<arch>/<bucket>.trials.jsonl`, the
// manifest at `<build>/tune/<kernel>/manifest.json`) also shows the record's entry of its bucket:
// the config and where it came from (`measured`, `adopted`, `pinned`: never measured, and a pin
// `tuner record set --force` made past an invalid compile), so a page says when the record
// holds something else than what the log measured best.
//
// --json prints, instead of the `wrote` line, {"output" (null without -o: --json alone writes
// no page), "trials", "logs": [{"log", "tuner",
// "objective", "trials", "measured", "invalid", "best": {"id", "median_ms", "phase"} or null,
// "incumbent": {"id", "median_ms"} or null, "speed_up" (the incumbent's median over the best's,
// the best's score over the incumbent's when the log maximizes; or null),
// "runoff_winner" (or null), "prior" (the header's, or null), "prior_guided" (trials measured
// first as the prior's best), "costs" (where the time went, as the page's summary says it:
// {"timed_trials", "wall_s", "timed_s", "strategy_s", "compile_wait_s", "compiled", "compile_s",
// "longest_compile_s", "cached"}, or null when no trial carries times or compile seconds), "record"
// (the record's entry of the bucket: {"record", "config" (null when it has none), "source",
// "median_ms", "samples", "origin", "forced" ({"status", "reason"} or null)}, or null where there
// is no manifest beside the log or no record that reads), "warnings"}]}
// (the same best as the page: runoff lines aside).
// Exit codes: 0 written, 2 bad usage or input (no log given or found, a file that is not a
// trial log), 3 the page cannot be written.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/commands.hpp>
#include <tuner/cli/log_reader.hpp>
#include <tuner/cli/report_plots.hpp>
#include <tuner/cli/report_tables.hpp>
#include <tuner/cli/scratch_file.hpp>
#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/log_lines.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/build/kernel_build.hpp>
#include <tuner/core/record/html_plot.hpp>
#include <tuner/core/record/record.hpp>
#include <tuner/core/search/overhead.hpp>
#include <tuner/core/search/runoff.hpp>

namespace tune::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ReportOptions {
  std::vector<std::string> inputs;
  std::string output = "tune_report.html";
  bool output_given = false;  // -o: with --json, only then is a page written
  bool json = false;
};

std::string escape(std::string_view text) {
  return html_escape(text);
}

// What a section says of one log, gathered a trial at a time: counts, the best trial, the first
// runoff's statistics, per config what the tables need, per reason its configs, the plots'
// marks. Memory grows with the configs, not the trials (but for the time plot's points).
struct LogDigest {
  std::string path;
  std::size_t index = 0;  // its place on the page: the section's anchor `log-<index>`
  json header;
  bool maximize = false;
  std::vector<std::string> warnings;
  std::size_t trials = 0, measured = 0, prior_guided = 0;
  std::optional<json> best;  // {config_id, median_ms, phase} of the best non-runoff trial
  double best_median = 0;
  json runoff;                               // the first runoff statistics, or null
  std::optional<IncumbentTiming> incumbent;  // the first config of the required phase
  bool incumbent_seen = false;
  ConstantParams constant;
  std::map<std::string, ConfigDigest> configs;
  struct Reason {
    std::size_t trials = 0;
    std::vector<json> configs;  // {config_id, params} of each distinct one, in order
    std::set<std::string> seen;
  };
  std::map<std::string, Reason> reasons;
  std::unique_ptr<TrialMarks> marks = std::make_unique<TrialMarks>();
  std::optional<TimePlot> time;
  OverheadTally overhead;
  json record;  // the record's entry of the bucket (record_entry), or null

  void add(const json& t) {
    ++trials;
    if (!incumbent_seen && t.value("phase", "") == "required") {
      incumbent_seen = true;
      if (const auto m = median_of(t)) incumbent = IncumbentTiming{field(t, "config_id"), *m};
    }
    if (t.contains("prior_rank")) ++prior_guided;
    constant.add(t);
    add_config_trial(configs, t, maximize);
    if (const auto m = median_of(t)) {
      ++measured;
      if (t.value("phase", "") != "runoff" && (!best || better(*m, best_median, maximize))) {
        best = json{{"config_id", field(t, "config_id")}, {"phase", field(t, "phase")}};
        best_median = *m;
      }
    } else {
      Reason& r = reasons[field(t, "reason")];
      ++r.trials;
      json c = {{"config_id", t.value("config_id", json())}};
      if (auto p = t.find("params"); p != t.end()) c["params"] = *p;
      if (r.seen.insert(c.dump()).second) r.configs.push_back(std::move(c));
    }
    // Both finalists' runoff lines carry the same statistics: the first will do.
    if (auto r = t.find("runoff"); runoff.is_null() && r != t.end() && r->is_object()) runoff = *r;
    marks->add(t);
    time->add(t);
  }
};

// The params of the log's best config (the one "configs by median" marks), or null.
json best_params(const LogDigest& log) {
  if (!log.best) return nullptr;
  auto it = log.configs.find(field(*log.best, "config_id"));
  if (it == log.configs.end() || !it->second.params) return nullptr;
  return *it->second.params;
}

void section(std::ostream& page, LogDigest& log) {
  const json& h = log.header;
  const bool maximize = log.maximize;
  const std::map<std::string, std::string> constant = log.constant.result();
  std::string out = fmt::format("<section id=\"log-{}\">\n<h2>{}</h2>\n<table class=\"meta\">\n",
                                log.index, escape(field(h, "tuner")));
  for (auto [name, key] :
       {std::pair{"log", ""}, std::pair{"arch", "arch"}, std::pair{"space hash", "space_hash"},
        std::pair{"source hash", "source_hash"}, std::pair{"toolchain", "toolchain"},
        std::pair{"objective", "objective"}}) {
    const std::string value = *key == '\0' ? log.path : field(h, key);
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", name, escape(value));
  }
  out += fmt::format("<tr><th>search</th><td>{}</td></tr>\n",
                     escape(h.contains("search") ? h["search"].dump() : "{\"strategy\":\"grid\"}"));
  if (log.record.is_object())
    out += fmt::format("<tr><th>record</th><td>{}</td></tr>\n", escape(record_text(log.record)));
  if (auto p = h.find("prior"); p != h.end() && p->is_object())
    out += fmt::format(
        "<tr><th>prior</th><td>{} ({}): {} of its configs in this space, its best {} measured "
        "first (triangles)</td></tr>\n",
        escape(field(*p, "from")), escape(field(*p, "tuner")),
        escape(p->value("configs", json()).dump()), escape(p->value("top_k", json()).dump()));
  if (!constant.empty()) {
    std::vector<std::string> parts;
    for (const auto& [name, value] : constant)
      parts.push_back(name + "=" + value);
    out += fmt::format(
        "<tr><th>constant params</th><td>{} (the same in every trial: left out of the labels "
        "below)</td></tr>\n",
        escape(join(parts, ", ")));
  }
  out += "</table>\n";
  out += fmt::format("<p class=\"summary\">{} trials: {} measured, {} invalid.", log.trials,
                     log.measured, log.trials - log.measured);
  if (log.prior_guided > 0) out += fmt::format(" {} guided by the prior.", log.prior_guided);
  if (log.best)
    out += fmt::format(" {}: <b>{}</b> at {} (phase {}).",
                       maximize ? "Highest score" : "Lowest median",
                       escape(field(*log.best, "config_id")),
                       maximize ? fmt::format("{:.4g}", log.best_median) : ms(log.best_median),
                       escape(field(*log.best, "phase")));
  if (log.best && log.incumbent)
    out += " " +
           escape(capitalized(describe_speedup(*log.incumbent, field(*log.best, "config_id"),
                                               log.best_median, maximize))) +
           ".";
  if (!log.runoff.is_null())
    out += fmt::format(" Runoff: <b>{}</b> wins ({}).", escape(field(log.runoff, "winner")),
                       escape(field(log.runoff, "outcome")));
  out += "</p>\n";
  if (std::optional<OverheadSummary> o = log.overhead.summary()) {
    std::string text = describe_overhead(*o);
    const std::size_t nl = text.find('\n');
    out += fmt::format("<p class=\"summary\">{}<br>{}</p>\n", escape(text.substr(0, nl)),
                       escape(text.substr(nl + 1)));
  }
  if (maximize)
    out += "<p>This log maximizes a score: the plots show the scores, higher is better.</p>\n";
  // The two plots side by side where the page is wide enough.
  out += "<div class=\"row\">\n<div>\n<h3>Trials in order</h3>\n";
  page << out;
  order_plot(page, *log.marks, maximize);
  out =
      "<p class=\"legend\"><span class=\"k-required\">&#9632;</span> required "
      "<span class=\"k-search\">&#9679;</span> search "
      "<span class=\"k-runoff\">&#9670;</span> runoff " +
      std::string(log.prior_guided > 0 ? "<span class=\"k-prior\">&#9650;</span> prior's best "
                                       : "") +
      "<span class=\"k-invalid\">&#10005;</span> invalid "
      "<span class=\"k-best\">&#9472;</span> best so far</p>\n</div>\n";
  out += "<div>\n<h3>Best so far against time</h3>\n" + log.time->svg() + "</div>\n</div>\n";
  out += std::string("<h3>Configs by ") + (maximize ? "score" : "median") + "</h3>\n" +
         bars(log.configs, maximize, constant);
  out += "<h3>Which params matter</h3>\n" +
         importance(log.configs, maximize, constant, best_params(log));
  if (!log.reasons.empty()) {
    out +=
        "<h3>Invalid trials by reason</h3>\n<table class=\"list\">\n"
        "<tr><th class=\"reason\">reason</th><th>trials</th><th>configs</th></tr>\n";
    std::vector<std::pair<std::string, const LogDigest::Reason*>> sorted;
    for (const auto& [reason, r] : log.reasons)
      sorted.emplace_back(reason, &r);
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.second->trials > b.second->trials;
    });
    for (const auto& [reason, r] : sorted) {
      // Each config once (a config retried on resume fails again with the same reason).
      std::vector<std::string> configs;
      for (const json& c : r->configs)
        if (std::string label = config_label(c, constant);
            std::find(configs.begin(), configs.end(), label) == configs.end())
          configs.push_back(std::move(label));
      std::string list;
      for (std::size_t i = 0; i < configs.size() && i < 5; ++i)
        list += (i ? "; " : "") + configs[i];
      if (configs.size() > 5) list += fmt::format("; and {} more", configs.size() - 5);
      out += fmt::format("<tr><td class=\"reason\">{}</td><td>{}</td><td>{}</td></tr>\n",
                         escape(reason), r->trials, list);
    }
    out += "</table>\n";
  }
  if (!log.runoff.is_null()) out += "<h3>Runoff</h3>\n" + runoff_table(log.runoff);
  for (const std::string& w : log.warnings)
    out += fmt::format("<p class=\"warning\">{}</p>\n", escape(w));
  out += "</section>\n";
  page << out;
}

// One row of the page's summary of several logs: the log's name (a link to its section), arch,
// trials, the best config and its median, the speed-up over the incumbent, the runoff's outcome.
std::string summary_row(const LogDigest& log) {
  std::string best = "none";
  std::string median = "-";
  std::string speed_up = "-";
  if (log.best) {
    best = escape(field(*log.best, "config_id"));
    median = log.maximize ? fmt::format("{:.4g}", log.best_median) : ms(log.best_median);
    if (log.incumbent && log.best_median > 0)
      speed_up =
          field(*log.best, "config_id") == log.incumbent->config_id
              ? "the incumbent"
              : fmt::format("{:.2f}x", log.maximize ? log.best_median / log.incumbent->median_ms
                                                    : log.incumbent->median_ms / log.best_median);
  }
  std::string label;
  for (char c : best) {  // long ids wrap at commas
    label += c;
    if (c == ',') label += "<wbr>";
  }
  return fmt::format(
      "<tr><td><a href=\"#log-{}\">{}</a></td><td>{}</td><td class=\"num\">{} of {}</td>"
      "<td class=\"cfg\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td>"
      "</tr>\n",
      log.index, escape(field(log.header, "tuner")), escape(field(log.header, "arch")),
      log.measured, log.trials, label, median, speed_up,
      log.runoff.is_null() ? "-" : escape(field(log.runoff, "outcome")));
}

// Where a log's time went (the page's summary lines) as data, in seconds; null when no trial
// says.
json costs(const LogDigest& log) {
  const std::optional<OverheadSummary> o = log.overhead.summary();
  if (!o) return nullptr;
  return {{"timed_trials", o->trials},
          {"wall_s", o->total.wall_ms / 1000},
          {"timed_s", o->total.timed_ms / 1000},
          {"strategy_s", o->total.strategy_ms / 1000},
          {"compile_wait_s", o->total.compile_wait_ms / 1000},
          {"compiled", o->compiled},
          {"compile_s", o->compile_s},
          {"longest_compile_s", o->longest_compile_s},
          {"cached", o->cached}};
}

// One log's summary for --json: what the page's summary line says, as data.
json log_summary(const LogDigest& log) {
  json best_json = nullptr;
  if (log.best)
    best_json = {{"id", field(*log.best, "config_id")},
                 {"median_ms", log.best_median},
                 {"phase", field(*log.best, "phase")}};
  json incumbent = nullptr;
  if (log.incumbent)
    incumbent = {{"id", log.incumbent->config_id}, {"median_ms", log.incumbent->median_ms}};
  json speed_up = nullptr;
  if (log.incumbent && log.best && log.best_median > 0)
    speed_up = log.maximize ? log.best_median / log.incumbent->median_ms
                            : log.incumbent->median_ms / log.best_median;
  return {{"log", log.path},
          {"tuner", field(log.header, "tuner")},
          {"objective", log.maximize ? "maximize" : "minimize"},
          {"trials", log.trials},
          {"measured", log.measured},
          {"invalid", log.trials - log.measured},
          {"best", best_json},
          {"incumbent", incumbent},
          {"speed_up", speed_up},
          {"runoff_winner", log.runoff.is_null() ? json() : json(field(log.runoff, "winner"))},
          {"prior", log.header.value("prior", json())},
          {"prior_guided", log.prior_guided},
          {"costs", costs(log)},
          {"record", log.record},
          {"warnings", log.warnings}};
}

int run_report(const ReportOptions& opt) {
  std::vector<std::string> files;
  for (const std::string& input : opt.inputs) {
    std::error_code ec;
    if (fs::is_directory(input, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(input, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (it->is_regular_file() && name.ends_with(".trials.jsonl"))
          found.push_back(it->path().string());
      }
      std::sort(found.begin(), found.end());
      if (found.empty()) {
        fmt::print(stderr, "tuner report: error: no trial log (*.trials.jsonl) under '{}'\n",
                   input);
        return exit_bad_input;
      }
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(input);
    }
  }
  // The sections go to a scratch file as each log is read (the page's first line counts the
  // trials of every log); the page is written from it.
  ScratchFile body;
  std::size_t trials = 0;
  json summaries = json::array();
  std::string summary;  // one row per log, on top of a page of several
  for (const std::string& file : files) {
    // /dev/zero would be read until memory ends; a log over the limit is refused as export does.
    if (auto d = log_file_problem(file)) {
      fmt::print(stderr, "{}\n", d->str());
      return exit_bad_input;
    }
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      fmt::print(stderr, "tuner report: error: cannot read '{}'\n", file);
      return exit_bad_input;
    }
    LogDigest log;
    log.path = file;
    log.index = summaries.size() + 1;
    LogLines lines(file, in);
    std::optional<diagnostic> problem = visit_log(lines, {[&](const json& header, bool maximize) {
                                                            log.header = header;
                                                            log.maximize = maximize;
                                                            log.time.emplace(maximize);
                                                          },
                                                          [&](const json& t, const Trial& parsed) {
                                                            log.add(t);
                                                            log.overhead.add(parsed);
                                                          },
                                                          [&](std::string&& w) {
                                                            fmt::print(stderr, "{}\n", w);
                                                            log.warnings.push_back(std::move(w));
                                                          }});
    if (problem) {
      fmt::print(stderr, "{}\n", problem->str());
      return exit_bad_input;
    }
    trials += log.trials;
    log.record = record_entry(file, log.header);
    section(body.stream(), log);
    summary += summary_row(log);
    summaries.push_back(log_summary(log));
  }
  // --json alone is for scripts reading stdout: no page unless -o asks for one.
  const bool write_page = !opt.json || opt.output_given;
  if (write_page) {
    // The page around a mark where its body goes (html_page escapes the title, not the body).
    const std::string frame = html_page("tune report", "\x01");
    const std::size_t at = frame.find('\x01');
    try {
      std::istream& sections = body.rewind();
      write_file_atomic(opt.output, [&](std::ostream& out) {
        out.write(frame.data(), static_cast<std::streamsize>(at));
        out << fmt::format("<h1>tune report</h1>\n<p>{} trial log{}, {} trials.</p>\n",
                           files.size(), files.size() == 1 ? "" : "s", trials);
        if (files.size() > 1)
          out << "<h2>Summary</h2>\n<table class=\"list\">\n<tr><th>log</th><th>arch</th>"
                 "<th>measured</th><th class=\"cfg\">best config</th><th>median</th>"
                 "<th>speed-up over the incumbent</th><th>runoff</th></tr>\n"
              << summary << "</table>\n";
        if (sections.peek() != std::char_traits<char>::eof()) out << sections.rdbuf();
        out << frame.substr(at + 1);
      });
    } catch (const std::exception& e) {
      fmt::print(stderr, "tuner report: error: {}\n", e.what());
      return exit_environment;
    }
  }
  if (opt.json)
    fmt::print("{}\n", dump_json(json{{"output", write_page ? json(opt.output) : json(nullptr)},
                                      {"trials", trials},
                                      {"logs", summaries}},
                                 2));
  else
    fmt::print("wrote {} ({} trial log{}, {} trials)\n", opt.output, files.size(),
               files.size() == 1 ? "" : "s", trials);
  return exit_ok;
}

}  // namespace

void add_report_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<ReportOptions>();
  auto* sub = app.add_subcommand("report", "write an HTML page with plots of a tune's trials");
  sub->add_option("logs", opt->inputs,
                  "trial logs (.trials.jsonl), or folders to search for them (e.g. "
                  "build/tune/<kernel>)")
      ->required();
  sub->add_option("-o,--output", opt->output,
                  "the page to write (default: tune_report.html; with --json, none unless given)")
      ->each([opt](const std::string&) { opt->output_given = true; });
  sub->add_flag("--json", opt->json,
                "print each log's summary (trials, best) as JSON; writes the page only with -o");
  sub->footer(
      "Exit status: 0 written, 2 bad usage or input (no trial log, a file that is not one), 3 "
      "the page cannot be written.");
  sub->callback([&run, opt] { run = [opt] { return run_report(*opt); }; });
}

}  // namespace tune::cli
