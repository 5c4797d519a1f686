#include <tuner/cli/report_tables.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include <fmt/core.h>

#include <tuner/core/base/text.hpp>
#include <tuner/core/build/kernel_build.hpp>
#include <tuner/core/record/html_plot.hpp>
#include <tuner/core/record/record.hpp>
#include <tuner/core/search/runoff.hpp>

namespace tune::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string escape(std::string_view text) {
  return html_escape(text);
}

}  // namespace

std::string field(const json& obj, const char* name) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return "-";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::optional<double> median_of(const json& t) {
  if (t.value("state", "") != "measured") return std::nullopt;
  auto it = t.find("median_ms");
  if (it == t.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v) || v <= 0) return std::nullopt;
  return v;
}

// Whether `a` beats `b`: lower times, or higher scores when the log maximizes.
bool better(double a, double b, bool maximize) {
  return maximize ? a > b : a < b;
}

// Milliseconds, four significant digits.
std::string ms(double v) {
  return fmt::format("{:.4g} ms", v);
}

// The params every trial of the log has with one value (a convolution's filter size): said
// once in the section's header, left out of every config's label.
void ConstantParams::add(const json& t) {
  auto p = t.find("params");
  if (p == t.end() || !p->is_object()) return;
  if (ids_.empty())
    for (const auto& [name, value] : p->items())
      constant_.emplace(name, value.dump());
  ids_.insert(field(t, "config_id"));
  std::erase_if(constant_, [&](const auto& kv) {
    auto v = p->find(kv.first);
    return v == p->end() || v->dump() != kv.second;
  });
}

std::map<std::string, std::string> ConstantParams::result() const {
  if (ids_.size() < 2) return {};
  return constant_;
}

// A config's label without the constant params (its id when nothing else is left), with a
// break opportunity after each comma so that a long label wraps instead of being cut.
std::string config_label(const json& t, const std::map<std::string, std::string>& constant) {
  std::vector<std::string> parts;
  if (auto p = t.find("params"); p != t.end() && p->is_object())
    for (const auto& [name, value] : p->items())
      if (!constant.contains(name)) parts.push_back(name + "=" + value.dump());
  std::string label = parts.empty() ? field(t, "config_id") : join(parts, ",");
  std::string out;
  for (char c : escape(label)) {
    out += c;
    if (c == ',') out += "<wbr>";
  }
  return out;
}

namespace {

// Each measured config's best median (search and required trials) and its label, best first.
std::vector<std::pair<std::string, double>> ranked_configs(
    const std::map<std::string, ConfigDigest>& configs, bool maximize,
    const std::map<std::string, std::string>& constant) {
  std::vector<std::pair<std::string, double>> sorted;
  for (const auto& [id, c] : configs)
    if (c.labelled) sorted.emplace_back(config_label(*c.labelled, constant), c.best);
  std::stable_sort(sorted.begin(), sorted.end(), [maximize](const auto& a, const auto& b) {
    return better(a.second, b.second, maximize);
  });
  return sorted;
}

// A bar of `fraction` of its cell (0..1), as a div: the table keeps labels whole and the bars
// take the width the page has.
std::string bar_div(double fraction, bool best) {
  return fmt::format("<div class=\"{}\" style=\"width:{:.1f}%\"></div>",
                     best ? "bar best-bar" : "bar", 100 * std::clamp(fraction, 0.005, 1.0));
}

}  // namespace

void add_config_trial(std::map<std::string, ConfigDigest>& configs, const json& t, bool maximize) {
  const auto m = median_of(t);
  if (!m || t.value("phase", "") == "runoff") return;
  ConfigDigest& c = configs[field(t, "config_id")];
  if (!c.labelled) {
    json labelled = {{"config_id", t.value("config_id", json())}};
    if (auto p = t.find("params"); p != t.end()) labelled["params"] = *p;
    c.labelled = std::move(labelled);
    c.best = *m;
  } else if (better(*m, c.best, maximize)) {
    c.best = *m;
  }
  auto p = t.find("params");
  if (p == t.end() || !p->is_object()) return;
  if (!c.params) {
    c.params = *p;
    c.params_best = *m;
  } else if (better(*m, c.params_best, maximize)) {
    c.params_best = *m;
  }
}

// "Configs by median": the fastest measured configs as rows of a table (label, median, a bar
// with the distance from the best); labels wrap at commas instead of being clipped.
std::string bars(const std::map<std::string, ConfigDigest>& configs, bool maximize,
                 const std::map<std::string, std::string>& constant) {
  const std::vector<std::pair<std::string, double>> sorted =
      ranked_configs(configs, maximize, constant);
  constexpr std::size_t shown = 30;
  const std::size_t count = std::min(sorted.size(), shown);
  if (count == 0) return "<p>no measured config</p>\n";
  double longest = 0;
  for (std::size_t i = 0; i < count; ++i)
    longest = std::max(longest, sorted[i].second);
  const double best = sorted.front().second;
  std::string out =
      "<table class=\"bars\">\n<tr><th class=\"cfg\">config</th><th>median</th>"
      "<th class=\"barcell\"></th></tr>\n";
  for (std::size_t i = 0; i < count; ++i) {
    const auto& [label, v] = sorted[i];
    out += fmt::format(
        "<tr><td class=\"cfg\">{}</td><td class=\"num\">{}{}</td><td class=\"barcell\">{}"
        "</td></tr>\n",
        label, maximize ? fmt::format("{:.4g}", v) : ms(v),
        i == 0 ? "" : fmt::format(" ({:+.1f}%)", 100 * (v / best - 1)),
        bar_div(v / longest, i == 0));
  }
  out += "</table>\n";
  if (sorted.size() > shown)
    out += fmt::format("<p>{} more measured configs not shown.</p>\n", sorted.size() - shown);
  return out;
}

// "Which params matter": per param that varies, each value's median over the measured configs
// that have it (each config by its best median), their best, and a bar against the slowest
// value; params ordered by spread (the slowest value's median over the fastest's), widest
// first, so the params that decide the time come first.
std::string importance(const std::map<std::string, ConfigDigest>& digests, bool maximize,
                       const std::map<std::string, std::string>& constant,
                       const json& best_params) {
  // Each measured config's params and best median.
  std::map<std::string, std::pair<const json*, double>> configs;
  for (const auto& [id, c] : digests)
    if (c.params) configs.emplace(id, std::pair{&*c.params, c.params_best});
  struct ValueStats {
    std::string value;
    std::vector<double> medians;
    double median = 0, best = 0;
  };
  struct ParamStats {
    std::string name;
    std::vector<ValueStats> values;
    double spread = 1;
  };
  std::map<std::string, std::map<std::string, std::vector<double>>> by_param;
  for (const auto& [id, pm] : configs)
    for (const auto& [name, value] : pm.first->items())
      if (!constant.contains(name)) by_param[name][value.dump()].push_back(pm.second);
  std::vector<ParamStats> params;
  for (auto& [name, values] : by_param) {
    if (values.size() < 2) continue;
    ParamStats ps{name, {}, 1};
    double lo = 0, hi = 0;
    for (auto& [value, medians] : values) {
      std::sort(medians.begin(), medians.end());
      const std::size_t n = medians.size();
      ValueStats vs{value, medians,
                    n % 2 ? medians[n / 2] : (medians[n / 2 - 1] + medians[n / 2]) / 2,
                    maximize ? medians.back() : medians.front()};
      lo = ps.values.empty() ? vs.median : std::min(lo, vs.median);
      hi = ps.values.empty() ? vs.median : std::max(hi, vs.median);
      ps.values.push_back(std::move(vs));
    }
    ps.spread = lo > 0 ? hi / lo : 1;
    std::stable_sort(ps.values.begin(), ps.values.end(), [maximize](const auto& a, const auto& b) {
      return better(a.median, b.median, maximize);
    });
    params.push_back(std::move(ps));
  }
  if (params.empty()) return "<p>no param takes two values among the measured configs</p>\n";
  std::stable_sort(params.begin(), params.end(),
                   [](const auto& a, const auto& b) { return a.spread > b.spread; });
  std::string out =
      "<p class=\"legend\">Values by the median of their configs, fastest first; "
      "<span class=\"k-best\">green</span>: the best config's value.</p>\n"
      "<table class=\"bars\">\n<tr><th>param</th><th>value</th><th>configs</th><th>median"
      "</th><th>best</th><th class=\"barcell\">median of the value's configs</th></tr>\n";
  const auto num = [maximize](double v) { return maximize ? fmt::format("{:.4g}", v) : ms(v); };
  for (const ParamStats& ps : params) {
    double longest = 0;
    for (const ValueStats& vs : ps.values)
      longest = std::max(longest, vs.median);
    for (std::size_t i = 0; i < ps.values.size(); ++i) {
      const ValueStats& vs = ps.values[i];
      const auto winner = best_params.is_object() ? best_params.find(ps.name) : best_params.end();
      const bool winners_value =
          best_params.is_object() && winner != best_params.end() && winner->dump() == vs.value;
      const std::string name_cell =
          i == 0 ? fmt::format("<td rowspan=\"{}\"><b>{}</b><br>spread {:.2f}x</td>",
                               ps.values.size(), escape(ps.name), ps.spread)
                 : "";
      out += fmt::format(
          "<tr{}>{}<td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"barcell\">{}</td></tr>\n",
          i == 0 ? " class=\"group\"" : "", name_cell, escape(vs.value), vs.medians.size(),
          num(vs.median), num(vs.best), bar_div(vs.median / longest, winners_value));
    }
  }
  out += "</table>\n";
  return out;
}

// `text` with its first letter in upper case, to start a sentence.
std::string capitalized(std::string text) {
  if (!text.empty() && text[0] >= 'a' && text[0] <= 'z') text[0] = static_cast<char>(text[0] - 32);
  return text;
}

// The runoff as a sentence (who was kept, and why) over its statistics, formatted.
std::string runoff_table(const json& runoff) {
  RunoffStats s;
  try {
    s = runoff.get<RunoffStats>();
  } catch (const json::exception&) {  // not a runoff's statistics: shown as they are
    std::string out = "<table class=\"meta\">\n";
    for (const auto& [key, value] : runoff.items())
      out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape(key),
                         escape(value.is_string() ? value.get<std::string>() : value.dump()));
    return out + "</table>\n";
  }
  std::string out =
      fmt::format("<p>{}.</p>\n<table class=\"meta\">\n", escape(capitalized(describe_runoff(s))));
  const auto row = [&](const std::string& name, const std::string& value) {
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape(name), escape(value));
  };
  row("outcome", to_string(s.outcome) + (s.winner.empty() ? "" : ": " + s.winner + " kept"));
  row("incumbent", fmt::format("{} ({} paired median)", s.incumbent, ms(s.incumbent_median_ms)));
  row("challenger", fmt::format("{} ({} paired median)", s.challenger, ms(s.challenger_median_ms)));
  row("pairs", fmt::format("{}, {} with the challenger faster", s.pairs, s.challenger_faster));
  row("paired median difference",
      fmt::format("{:+.2f}% (challenger against incumbent)", s.median_diff_pct));
  row("p-value",
      fmt::format("{:.3g} (one-sided sign test; significant below {:g})", s.p_value, s.alpha));
  row("margin",
      fmt::format("{:g}%: a smaller difference is a tie, and the incumbent stays", s.margin_pct));
  if (s.incumbent_alone_ms > 0 || s.challenger_alone_ms > 0)
    row("timed alone before the pairs",
        fmt::format("incumbent {}, challenger {}", ms(s.incumbent_alone_ms),
                    ms(s.challenger_alone_ms)));
  for (const std::string& w : s.warnings)
    row("warning", w);
  return out + "</table>\n";
}

// The record's entry of the log's bucket, when the log lies in its kernel's build folder and the
// record reads (see the top of this file); null otherwise.
json record_entry(const std::string& log_path, const json& header) {
  const fs::path manifest = fs::path(log_path).parent_path().parent_path() / "manifest.json";
  std::error_code ec;
  if (!fs::is_regular_file(manifest, ec)) return nullptr;
  result<Manifest> m = Manifest::load(manifest);
  const std::string tuner = field(header, "tuner");  // <kernel>/<bucket>
  const std::size_t slash = tuner.find('/');
  if (!m || slash == std::string::npos || tuner.substr(0, slash) != m->kernel) return nullptr;
  result<fs::path> path = m->record_path(field(header, "arch"));
  if (!path || !fs::is_regular_file(*path, ec)) return nullptr;
  result<Record> r = Record::load(*path);
  if (!r) return nullptr;
  json out = {{"record", display_path(*m, *path)}, {"config", nullptr}};
  const RecordEntry* e = r->get(tuner.substr(slash + 1));
  if (e == nullptr) return out;
  out["config"] = e->config_id;
  out["source"] = e->source;
  out["median_ms"] = e->median_ms ? json(*e->median_ms) : json(nullptr);
  out["samples"] = e->samples;
  out["origin"] = e->origin ? json(*e->origin) : json(nullptr);
  out["forced"] = e->forced ? json{{"status", e->forced->status}, {"reason", e->forced->reason}}
                            : json(nullptr);
  return out;
}

// The record's entry as the page's header says it: `records/k.json: BM=64, pinned (never
// measured)`.
std::string record_text(const json& r) {
  std::string text = field(r, "record") + ": ";
  if (r.at("config").is_null()) return text + "no entry for this bucket";
  text += field(r, "config") + ", " + field(r, "source");
  const std::string source = field(r, "source");
  if (source == "pinned") text += " (never measured)";
  if (source != "pinned" && r.at("median_ms").is_number())
    text += fmt::format(" ({} over {} samples{})", ms(r.at("median_ms").get<double>()),
                        field(r, "samples"),
                        r.at("origin").is_string() ? ", " + field(r, "origin") : std::string());
  if (r.at("forced").is_object())
    text += fmt::format("; pinned with --force, although invalid ({}): {}",
                        field(r.at("forced"), "status"), field(r.at("forced"), "reason"));
  return text;
}

}  // namespace tune::cli
