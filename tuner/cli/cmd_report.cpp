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
// spread; the invalid trials grouped by reason; and the runoff's statistics. Params with one value
// in every trial are listed once in the header and left out of the config labels, which wrap at
// commas. One self-contained file: inline SVG and CSS, no script and nothing fetched, and the same
// logs always give the same bytes.
//
// --json prints, instead of the `wrote` line, {"output" (null without -o: --json alone writes
// no page), "trials", "logs": [{"log", "tuner",
// "objective", "trials", "measured", "invalid", "best": {"id", "median_ms", "phase"} or null,
// "runoff_winner" (or null), "prior" (the header's, or null), "prior_guided" (trials measured
// first as the prior's best), "costs" (where the time went, as the page's summary says it:
// {"timed_trials", "wall_s", "timed_s", "strategy_s", "compile_wait_s", "compiled", "compile_s",
// "longest_compile_s"}, or null when no trial carries times or compile seconds), "warnings"}]}
// (the same best as the page: runoff lines aside).
// Exit codes: 0 written, 2 bad usage or input (no log given or found, a file that is not a
// trial log), 3 the page cannot be written.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/commands.hpp>
#include <tuner/cli/log_reader.hpp>
#include <tuner/cli/report_tables.hpp>
#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/record/html_plot.hpp>

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

// A y axis for times: linear, or log10 when they span more than 10x.
struct Scale {
  double lo, hi;
  bool log;
  double top, bottom;  // pixel rows of hi and lo
  double y(double v) const {
    const double a = log ? std::log10(lo) : lo;
    const double b = log ? std::log10(hi) : hi;
    const double x = log ? std::log10(v) : v;
    const double f = b > a ? (x - a) / (b - a) : 0.5;
    return bottom - f * (bottom - top);
  }
};

// "Trials in order": each trial's median at its place in the run.
std::string order_plot(const std::vector<json>& trials, bool maximize) {
  std::vector<double> times;
  for (const json& t : trials)
    if (auto m = median_of(t)) times.push_back(*m);
  const double width = 720, height = 300, left = 70, right = 20, top = 30, bottom = 260;
  std::string svg = fmt::format(
      "<svg class=\"plot\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\">\n", width,
      height, width, height);
  if (times.empty()) {
    svg += "<text x=\"20\" y=\"40\">no measured trial</text>\n</svg>\n";
    return svg;
  }
  const auto [lo_it, hi_it] = std::minmax_element(times.begin(), times.end());
  Scale s{*lo_it * 0.95, *hi_it * 1.05, *hi_it / *lo_it > 10, top, bottom};
  const std::size_t n = trials.size();
  auto x = [&](std::size_t i) {
    return n <= 1 ? (left + width - right) / 2
                  : left + (width - right - left) * static_cast<double>(i) /
                               static_cast<double>(n - 1);
  };
  // Axes, and ticks at the low end, the high end and between.
  svg += fmt::format(
      "<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>"
      "<line class=\"axis\" x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\"/>\n",
      left, top - 10, bottom, width - right);
  for (int k = 0; k <= 4; ++k) {
    const double f = k / 4.0;
    const double v =
        s.log ? std::pow(10.0, std::log10(s.lo) + f * (std::log10(s.hi) - std::log10(s.lo)))
              : s.lo + f * (s.hi - s.lo);
    svg += fmt::format(
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.4g}</text>\n",
        left - 6, s.y(v) + 4, v);
  }
  svg += fmt::format(
      "<text class=\"label\" x=\"{}\" y=\"{}\">{}{}</text>"
      "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">trial</text>\n",
      4, 16, maximize ? "score" : "median ms", s.log ? " (log scale)" : "", width - right,
      height - 8);
  svg += fmt::format(
      "<text class=\"tick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">1</text>"
      "<text class=\"tick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
      x(0), bottom + 16, x(n - 1), bottom + 16, n);
  // The best so far among the required and search trials.
  std::string path;
  std::optional<double> best;
  for (std::size_t i = 0; i < n; ++i) {
    const json& t = trials[i];
    const auto m = median_of(t);
    if (!m || t.value("phase", "") == "runoff") continue;
    if (!best || better(*m, *best, maximize)) {
      if (best) path += fmt::format(" L{:.1f},{:.1f}", x(i), s.y(*best));
      best = *m;
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", x(i), s.y(*best));
    }
  }
  if (best) path += fmt::format(" L{:.1f},{:.1f}", x(n - 1), s.y(*best));
  if (!path.empty()) svg += "<path class=\"best\" d=\"" + path + "\"/>\n";
  for (std::size_t i = 0; i < n; ++i) {
    const json& t = trials[i];
    const std::string title =
        escape(fmt::format("#{} {}: {}", i + 1, field(t, "config_id"),
                           median_of(t) ? ms(*median_of(t)) : "invalid: " + field(t, "reason")));
    if (const auto m = median_of(t)) {
      const std::string phase = t.value("phase", "search");
      const double cx = x(i), cy = s.y(*m);
      if (t.contains("prior_rank"))  // measured first as one of the prior's best
        svg += fmt::format(
            "<path class=\"prior\" d=\"M{:.1f},{:.1f} l5,8 l-10,0 z\"><title>{} (prior #{})"
            "</title></path>\n",
            cx, cy - 5, title, t["prior_rank"].dump());
      else if (phase == "required")
        svg += fmt::format(
            "<rect class=\"required\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"8\" height=\"8\">"
            "<title>{}</title></rect>\n",
            cx - 4, cy - 4, title);
      else if (phase == "runoff")
        svg += fmt::format(
            "<path class=\"runoff\" d=\"M{:.1f},{:.1f} l5,5 l-5,5 l-5,-5 z\"><title>{}</title>"
            "</path>\n",
            cx, cy - 5, title);
      else
        svg += fmt::format(
            "<circle class=\"search\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\"><title>{}</title>"
            "</circle>\n",
            cx, cy, title);
    } else {
      svg += fmt::format(
          "<path class=\"invalid\" d=\"M{0:.1f},{1:.1f} l8,8 M{2:.1f},{1:.1f} l-8,8\">"
          "<title>{3}</title></path>\n",
          x(i) - 4, top - 22, x(i) + 4, title);
    }
  }
  svg += "</svg>\n";
  return svg;
}

// Seconds from `first` to the trial's time stamp (UTC, whole seconds), or nullopt.
std::optional<double> seconds_since(const json& t, std::time_t first) {
  std::tm tm{};
  const std::string stamp = field(t, "time");
  if (::strptime(stamp.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) return std::nullopt;
  return std::difftime(::timegm(&tm), first);
}

// "Best so far against time": the strategy's progress in wall-clock seconds since the first
// trial (time stamps have whole seconds), the runoff's start marked.
std::string time_plot(const std::vector<json>& trials, bool maximize) {
  std::tm tm{};
  if (trials.empty() ||
      ::strptime(field(trials.front(), "time").c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr)
    return "<p>no time stamps</p>\n";
  const std::time_t first = ::timegm(&tm);
  PlotSeries best{"best so far", "best", {}, true};
  PlotAxes axes;
  axes.x_label = "seconds since the first trial";
  axes.y_label = maximize ? "best score" : "best median ms";
  axes.mark_label = "the runoff starts";
  std::optional<double> best_v;
  for (const json& t : trials) {
    const std::optional<double> at = seconds_since(t, first);
    if (!at) continue;
    if (t.value("phase", "") == "runoff") {
      if (axes.vertical_marks.empty()) axes.vertical_marks.push_back(*at);
      continue;
    }
    const auto m = median_of(t);
    if (m && (!best_v || better(*m, *best_v, maximize))) best_v = *m;
    if (best_v) best.points.emplace_back(*at, *best_v);
  }
  if (best.points.empty()) return "<p>no measured trial</p>\n";
  const auto [lo, hi] =
      std::minmax_element(best.points.begin(), best.points.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; });
  axes.log_y = lo->second > 0 && hi->second / lo->second > 10;
  return line_plot({best}, axes);
}

// Trials the search measured first as the prior's best (`prior_rank`).
std::size_t prior_guided(const std::vector<json>& trials) {
  return static_cast<std::size_t>(std::count_if(
      trials.begin(), trials.end(), [](const json& t) { return t.contains("prior_rank"); }));
}

std::string section(const LogFile& log) {
  const json& h = log.header;
  const std::vector<json>& trials = log.trials;
  const bool maximize = h.value("objective", "minimize") == "maximize";
  std::size_t measured = 0;
  const json* best = nullptr;
  const json* runoff = nullptr;
  const std::map<std::string, std::string> constant = constant_params(trials);
  std::map<std::string, std::vector<std::string>> reasons;  // reason -> config labels
  for (const json& t : trials) {
    if (const auto m = median_of(t)) {
      ++measured;
      if (t.value("phase", "") != "runoff" &&
          (best == nullptr || better(*m, *median_of(*best), maximize)))
        best = &t;
    } else {
      reasons[field(t, "reason")].push_back(config_label(t, constant));  // one per trial
    }
    // Both finalists' runoff lines carry the same statistics: the first will do.
    if (auto r = t.find("runoff"); runoff == nullptr && r != t.end() && r->is_object())
      runoff = &*r;
  }
  std::string out =
      fmt::format("<section>\n<h2>{}</h2>\n<table class=\"meta\">\n", escape(field(h, "tuner")));
  for (auto [name, key] :
       {std::pair{"log", ""}, std::pair{"arch", "arch"}, std::pair{"space hash", "space_hash"},
        std::pair{"source hash", "source_hash"}, std::pair{"toolchain", "toolchain"},
        std::pair{"objective", "objective"}}) {
    const std::string value = *key == '\0' ? log.path : field(h, key);
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", name, escape(value));
  }
  out += fmt::format("<tr><th>search</th><td>{}</td></tr>\n",
                     escape(h.contains("search") ? h["search"].dump() : "{\"strategy\":\"grid\"}"));
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
  out += fmt::format("<p class=\"summary\">{} trials: {} measured, {} invalid.", trials.size(),
                     measured, trials.size() - measured);
  if (const std::size_t guided = prior_guided(trials); guided > 0)
    out += fmt::format(" {} guided by the prior.", guided);
  if (best != nullptr)
    out +=
        fmt::format(" {}: <b>{}</b> at {} (phase {}).",
                    maximize ? "Highest score" : "Lowest median", escape(field(*best, "config_id")),
                    maximize ? fmt::format("{:.4g}", *median_of(*best)) : ms(*median_of(*best)),
                    escape(field(*best, "phase")));
  if (runoff != nullptr)
    out += fmt::format(" Runoff: <b>{}</b> wins ({}).", escape(field(*runoff, "winner")),
                       escape(field(*runoff, "outcome")));
  out += "</p>\n";
  if (std::optional<OverheadSummary> o = log_overhead(log)) {
    std::string text = describe_overhead(*o);
    const std::size_t nl = text.find('\n');
    out += fmt::format("<p class=\"summary\">{}<br>{}</p>\n", escape(text.substr(0, nl)),
                       escape(text.substr(nl + 1)));
  }
  if (maximize)
    out += "<p>This log maximizes a score: the plots show the scores, higher is better.</p>\n";
  // The two plots side by side where the page is wide enough.
  out += "<div class=\"row\">\n<div>\n<h3>Trials in order</h3>\n" + order_plot(trials, maximize);
  out +=
      "<p class=\"legend\"><span class=\"k-required\">&#9632;</span> required "
      "<span class=\"k-search\">&#9679;</span> search "
      "<span class=\"k-runoff\">&#9670;</span> runoff " +
      std::string(prior_guided(trials) > 0 ? "<span class=\"k-prior\">&#9650;</span> prior's best "
                                           : "") +
      "<span class=\"k-invalid\">&#10005;</span> invalid "
      "<span class=\"k-best\">&#9472;</span> best so far</p>\n</div>\n";
  out += "<div>\n<h3>Best so far against time</h3>\n" + time_plot(trials, maximize) +
         "</div>\n</div>\n";
  out += std::string("<h3>Configs by ") + (maximize ? "score" : "median") + "</h3>\n" +
         bars(trials, maximize, constant);
  out += "<h3>Which params matter</h3>\n" + importance(trials, maximize, constant);
  if (!reasons.empty()) {
    out +=
        "<h3>Invalid trials by reason</h3>\n<table class=\"list\">\n"
        "<tr><th class=\"reason\">reason</th><th>trials</th><th>configs</th></tr>\n";
    std::vector<std::pair<std::string, std::vector<std::string>>> sorted(reasons.begin(),
                                                                         reasons.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.second.size() > b.second.size();
    });
    for (const auto& [reason, trials_of] : sorted) {
      // Each config once (a config retried on resume fails again with the same reason).
      std::vector<std::string> configs;
      for (const std::string& c : trials_of)
        if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
      std::string list;
      for (std::size_t i = 0; i < configs.size() && i < 5; ++i)
        list += (i ? "; " : "") + configs[i];
      if (configs.size() > 5) list += fmt::format("; and {} more", configs.size() - 5);
      out += fmt::format("<tr><td class=\"reason\">{}</td><td>{}</td><td>{}</td></tr>\n",
                         escape(reason), trials_of.size(), list);
    }
    out += "</table>\n";
  }
  if (runoff != nullptr) {
    out += "<h3>Runoff</h3>\n<table class=\"meta\">\n";
    for (const auto& [key, value] : runoff->items())
      out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape(key),
                         escape(value.is_string() ? value.get<std::string>() : value.dump()));
    out += "</table>\n";
  }
  for (const std::string& w : log.warnings)
    out += fmt::format("<p class=\"warning\">{}</p>\n", escape(w));
  out += "</section>\n";
  return out;
}

// Where a log's time went (the page's summary lines) as data, in seconds; null when no trial
// says.
json costs(const LogFile& log) {
  const std::optional<OverheadSummary> o = log_overhead(log);
  if (!o) return nullptr;
  return {{"timed_trials", o->trials},
          {"wall_s", o->total.wall_ms / 1000},
          {"timed_s", o->total.timed_ms / 1000},
          {"strategy_s", o->total.strategy_ms / 1000},
          {"compile_wait_s", o->total.compile_wait_ms / 1000},
          {"compiled", o->compiled},
          {"compile_s", o->compile_s},
          {"longest_compile_s", o->longest_compile_s}};
}

// One log's summary for --json: what the page's summary line says, as data.
json log_summary(const LogFile& log) {
  const bool maximize = log.header.value("objective", "minimize") == "maximize";
  std::size_t measured = 0;
  const json* best = nullptr;
  json runoff_winner = nullptr;
  for (const json& t : log.trials) {
    if (const auto m = median_of(t)) {
      ++measured;
      if (t.value("phase", "") != "runoff" &&
          (best == nullptr || better(*m, *median_of(*best), maximize)))
        best = &t;
    }
    if (auto r = t.find("runoff"); runoff_winner.is_null() && r != t.end() && r->is_object())
      runoff_winner = field(*r, "winner");
  }
  json best_json = nullptr;
  if (best != nullptr)
    best_json = {{"id", field(*best, "config_id")},
                 {"median_ms", *median_of(*best)},
                 {"phase", field(*best, "phase")}};
  return {{"log", log.path},
          {"tuner", field(log.header, "tuner")},
          {"objective", maximize ? "maximize" : "minimize"},
          {"trials", log.trials.size()},
          {"measured", measured},
          {"invalid", log.trials.size() - measured},
          {"best", best_json},
          {"runoff_winner", runoff_winner},
          {"prior", log.header.value("prior", json())},
          {"prior_guided", prior_guided(log.trials)},
          {"costs", costs(log)},
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
  std::string body;
  std::size_t trials = 0;
  json summaries = json::array();
  for (const std::string& file : files) {
    if (auto d = not_regular_problem(file)) {  // /dev/zero would be read until memory ends
      fmt::print(stderr, "{}\n", d->str());
      return exit_bad_input;
    }
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      fmt::print(stderr, "tuner report: error: cannot read '{}'\n", file);
      return exit_bad_input;
    }
    result<LogFile> log = read_log(file, in);  // streamed: a huge line is never held whole
    if (!log) {
      fmt::print(stderr, "{}\n", log.error().str());
      return exit_bad_input;
    }
    for (const std::string& w : log->warnings)
      fmt::print(stderr, "{}\n", w);
    trials += log->trials.size();
    body += section(*log);
    if (opt.json) summaries.push_back(log_summary(*log));
  }
  // --json alone is for scripts reading stdout: no page unless -o asks for one.
  const bool write_page = !opt.json || opt.output_given;
  if (write_page) {
    const std::string page = html_page(
        "tune report", fmt::format("<h1>tune report</h1>\n<p>{} trial log{}, {} trials.</p>\n{}",
                                   files.size(), files.size() == 1 ? "" : "s", trials, body));
    try {
      write_file_atomic(opt.output, page);
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
