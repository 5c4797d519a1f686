// `tuner show <record.json | trials.jsonl> [--sort order|median] [--top N] [--json]`: a record or
// a trial log as a table.
//
// A record: its provenance, then one row per bucket (bucket, config, median_ms, samples,
// source (`measured`, `adopted`, `pinned`, or `pinned (forced)` for a pin `record set --force`
// made past an invalid compile), speed_up over the incumbent the tune measured, runoff outcome,
// cache key shortened to 12 hex digits), then per bucket the runoff as a sentence (who was kept
// and why: `<bucket>: runoff: 567 of 1000 pairs favoured ...`) and the winner against the
// incumbent (`<bucket>: speed-up 1.83x over the incumbent BM=128 (0.0603 ms)`), why a bucket's
// runoff was skipped (`<bucket>: no runoff: the budget is exhausted ...`) and why a forced pin's
// config was invalid (`<bucket>: pinned with --force, although invalid (failed): ...`).
// A trial log (`.jsonl`, or a first line with `log_schema`): its header (`kernel/bucket` is the
// log's tuner name), one row per trial (#, config, state, median_ms, min_ms, reps, phase, note:
// the reason of an invalid trial, `batched`, the runoff outcome, warnings), the best measured
// config (the lowest median outside the runoff) and its speed-up over the incumbent (the first
// config of the required phase), and the runoff as a sentence. `--sort median` orders the measured
// trials fastest first (highest score first for a log that maximizes), then the invalid ones in
// log order; `--top N` shows the first N rows and says how many more there are.
// --json prints the record, or {"header", "trials"}, as JSON (all of them, in log order).
// Exit codes: 0 shown, 2 bad usage or a file that does not read as a record or a log.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/cli_checks.hpp>
#include <tuner/cli/commands.hpp>
#include <tuner/cli/log_reader.hpp>
#include <tuner/cli/scratch_file.hpp>
#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/log_lines.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/record/record.hpp>
#include <tuner/core/search/runoff.hpp>

namespace tune::cli {

namespace {

using nlohmann::json;
using Table = std::vector<std::vector<std::string>>;

struct ShowOptions {
  std::string file;
  std::string sort = "order";
  std::optional<std::size_t> top;
  bool json = false;
};

// Prints rows with each column padded to its widest cell, two spaces apart, no trailing blanks.
void print_table(const Table& raw) {
  // Cells come from the file: its control characters (an escape sequence) are shown, not sent.
  Table rows = raw;
  for (auto& row : rows)
    for (auto& cell : row)
      cell = printable(cell);
  std::vector<std::size_t> width;
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    fmt::print("{}\n", line);
  }
}

std::string ms(const json& v) {
  if (!v.is_number()) return "-";
  const double d = v.get<double>();
  // Four decimals for times a kernel takes; an absurd one (1.79e308) in a few characters, not
  // a 309-digit number.
  if (std::abs(d) >= 1e9) return fmt::format("{:.4g}", d);
  return fmt::format("{:.4f}", d);
}

std::string text(const json& obj, const char* name) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return "-";
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

// The runoff's statistics of a record entry or a trial, when they read as such (a skipped
// runoff's object does not).
std::optional<RunoffStats> runoff_stats(const json& runoff) {
  if (!runoff.is_object() || !runoff.contains("pairs")) return std::nullopt;
  try {
    return runoff.get<RunoffStats>();
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

int show_record(const ShowOptions& opt, const std::string& content) {
  result<Record> r = Record::parse(content, opt.file);
  if (!r) {
    fmt::print(stderr, "{}\n", r.error().str());
    return exit_bad_input;
  }
  if (r->schema_version != record_schema_version) {  // its entries cannot be read
    fmt::print(stderr,
               "{}: error: record schema_version {} is not supported (this tuner reads {})\n",
               opt.file, r->schema_version, record_schema_version);
    return exit_bad_input;
  }
  if (opt.json) {
    fmt::print("{}", r->dump());
    return exit_ok;
  }
  auto ctx = [](const std::optional<std::string>& s) { return s ? *s : std::string("-"); };
  print_table({{"record", opt.file},
               {"kernel", r->kernel},
               {"arch", r->arch},
               {"schema", std::to_string(r->schema_version)},
               {"toolchain", r->toolchain},
               {"tuner version", r->tuner_version},
               {"source_hash", r->source_hash},
               {"space_hash", r->space_hash},
               {"device", ctx(r->context.device)},
               {"driver", ctx(r->context.driver)},
               {"host_compiler", ctx(r->context.host_compiler)},
               {"machine", ctx(r->context.machine)},
               {"date", ctx(r->context.date)}});
  fmt::print("\n");
  Table rows{
      {"bucket", "config", "median_ms", "samples", "source", "speed_up", "runoff", "cache_key"}};
  for (const auto& e : r->entries()) {
    std::string runoff = "-";
    if (e.runoff.is_object()) runoff = text(e.runoff, "outcome");
    std::string key = "-";
    if (e.cache_key) key = e.cache_key->schema + ":" + e.cache_key->digest.substr(0, 12);
    std::string speed_up = "-";
    if (e.incumbent && e.median_ms && *e.median_ms > 0)
      speed_up = fmt::format("{:.2f}x", e.incumbent->median_ms / *e.median_ms);
    rows.push_back({e.bucket, e.config_id, e.median_ms ? ms(*e.median_ms) : "-",
                    std::to_string(e.samples), e.forced ? e.source + " (forced)" : e.source,
                    speed_up, runoff, key});
  }
  print_table(rows);
  // Per bucket: who the runoff kept and why, and the winner against the incumbent.
  for (const auto& e : r->entries()) {
    if (std::optional<RunoffStats> stats = runoff_stats(e.runoff))
      fmt::print("{}: runoff: {}\n", printable(e.bucket), printable(describe_runoff(*stats)));
    if (e.incumbent && e.median_ms)
      fmt::print("{}: {}\n", printable(e.bucket),
                 printable(describe_speedup(*e.incumbent, e.config_id, *e.median_ms)));
  }
  // Why a bucket had no runoff (the budget left no room for one round of pairs).
  for (const auto& e : r->entries())
    if (e.runoff.is_object() && text(e.runoff, "outcome") == "skipped" &&
        e.runoff.contains("reason"))
      fmt::print("{}: {}\n", printable(e.bucket), printable(text(e.runoff, "reason")));
  // Where a pin went past an invalid compile (`tuner record set --force`), and why it was invalid.
  for (const auto& e : r->entries())
    if (e.forced)
      fmt::print("{}: pinned with --force, although invalid ({}): {}\n", printable(e.bucket),
                 printable(e.forced->status), printable(e.forced->reason));
  fmt::print("{} {}\n", r->entries().size(), r->entries().size() == 1 ? "entry" : "entries");
  return exit_ok;
}

// A table of many rows (a log's trials) printed as print_table prints one, without holding
// them: each row's cells go to a scratch file as they come, with the widths so far, and are
// printed from there at the end.
class StreamedTable {
 public:
  void add(const std::vector<std::string>& raw) {
    std::ostream& out = scratch_.stream();
    out << raw.size() << '\n';
    for (std::size_t i = 0; i < raw.size(); ++i) {
      const std::string cell = printable(raw[i]);
      if (width_.size() <= i) width_.push_back(0);
      width_[i] = std::max(width_[i], cell.size());
      out << cell.size() << '\n' << cell;
    }
  }
  void print() {
    std::istream& in = scratch_.rewind();
    std::size_t cells = 0;
    std::string cell;
    while (in >> cells) {
      std::string line;
      for (std::size_t i = 0; i < cells; ++i) {
        std::size_t size = 0;
        in >> size;
        in.get();  // the newline after the size
        cell.resize(size);
        in.read(cell.data(), static_cast<std::streamsize>(size));
        line += cell;
        if (i + 1 < cells) line += std::string(width_[i] - cell.size() + 2, ' ');
      }
      while (!line.empty() && line.back() == ' ')
        line.pop_back();
      fmt::print("{}\n", line);
    }
  }

 private:
  ScratchFile scratch_;
  std::vector<std::size_t> width_;
};

// The log a line at a time: what is printed per trial is written as it comes (--json) or kept
// in a scratch file until the column widths are known; memory holds the best trial and the
// counts, not the trials. `--sort median` holds the measured rows to sort them (with --top N,
// only the N best); `--top N` in log order prints the first N.
int show_log(const ShowOptions& opt) {
  if (auto d = log_file_problem(opt.file)) {  // as export: not a device, not over the limit
    fmt::print(stderr, "{}\n", d->str());
    return exit_bad_input;
  }
  std::ifstream in(opt.file, std::ios::binary);
  LogLines lines(opt.file, in);
  bool maximize = false;
  json header;
  std::optional<JsonArrayWriter> json_out;  // --json
  std::optional<StreamedTable> rows;        // the table
  const bool by_median = opt.sort == "median";
  // --sort median: the measured rows with their medians, and the invalid ones in log order.
  std::vector<std::pair<double, std::vector<std::string>>> measured_rows;
  std::vector<std::vector<std::string>> invalid_rows;
  std::size_t trials = 0;
  std::size_t shown = 0;
  int measured = 0;
  std::optional<std::pair<std::string, double>> best;  // config_id, median
  std::optional<IncumbentTiming> incumbent;            // the first config of the required phase
  bool incumbent_seen = false;
  std::optional<RunoffStats> runoff;  // the first runoff's statistics
  OverheadTally overhead;
  const auto beats = [&](double a, double b) { return maximize ? a > b : a < b; };
  std::optional<diagnostic> problem = visit_log(
      lines, {[&](const json& h, bool max) {
                header = h;
                maximize = max;
                std::fflush(stdout);
                if (opt.json) {
                  json_out.emplace(std::cout, json{{"header", header}, {"trials", json::array()}},
                                   "trials");
                  json_out->start();
                  return;
                }
                rows.emplace();
                rows->add({"#", "config", "state", "median_ms", "min_ms", "reps", "phase", "note"});
              },
              [&](const json& t, const Trial& parsed) {
                ++trials;
                overhead.add(parsed);
                if (json_out) {
                  json_out->add(t);
                  return;
                }
                std::string state = text(t, "state");
                std::vector<std::string> notes;
                if (state == "invalid") notes.push_back(text(t, "reason"));
                if (t.value("batched", false)) notes.push_back("batched");
                if (auto r = t.find("runoff"); r != t.end() && r->is_object()) {
                  notes.push_back("runoff: " + text(*r, "outcome"));
                  if (!runoff) runoff = runoff_stats(*r);
                }
                if (auto w = t.find("warnings"); w != t.end() && w->is_array())
                  for (const auto& s : *w)
                    notes.push_back(s.is_string() ? s.get<std::string>() : s.dump());
                std::string note;
                for (const auto& n : notes)
                  note += (note.empty() ? "" : "; ") + n;
                std::vector<std::string> row = {std::to_string(trials),
                                                text(t, "config_id"),
                                                state,
                                                ms(t.value("median_ms", json())),
                                                ms(t.value("min_ms", json())),
                                                text(t, "reps"),
                                                text(t, "phase"),
                                                note};
                const bool timed = state == "measured" && t.value("median_ms", json()).is_number();
                if (parsed.phase == Phase::required && !incumbent_seen) {
                  incumbent_seen = true;
                  if (timed) incumbent = IncumbentTiming{parsed.id(), t["median_ms"].get<double>()};
                }
                if (by_median) {
                  if (timed) {
                    measured_rows.emplace_back(t["median_ms"].get<double>(), std::move(row));
                    // With --top N only the N best are kept: memory stays bounded.
                    if (opt.top && measured_rows.size() > 2 * *opt.top + 64) {
                      std::stable_sort(
                          measured_rows.begin(), measured_rows.end(),
                          [&](const auto& a, const auto& b) { return beats(a.first, b.first); });
                      measured_rows.resize(*opt.top);
                    }
                  } else if (!opt.top || invalid_rows.size() < *opt.top) {
                    invalid_rows.push_back(std::move(row));
                  }
                } else if (!opt.top || shown < *opt.top) {
                  rows->add(row);
                  ++shown;
                }
                if (timed) {
                  ++measured;
                  const double v = t["median_ms"].get<double>();
                  // The header's objective decides: with --maximize the value is a score, higher is
                  // better.
                  // The runoff's paired medians are not comparable with the others (`tuner
                  // report` leaves them out too); its decision is said below.
                  if (parsed.phase != Phase::runoff && (!best || beats(v, best->second)))
                    best.emplace(text(t, "config_id"), v);
                }
              },
              [](std::string&& w) { fmt::print(stderr, "{}\n", w); }});
  if (problem) {
    if (json_out) std::cout.flush();  // what was written stays whole up to here
    fmt::print(stderr, "{}\n", problem->str());
    return exit_bad_input;
  }
  if (json_out) {
    json_out->finish();
    std::cout << '\n';
    std::cout.flush();
    return exit_ok;
  }
  if (by_median) {
    std::stable_sort(measured_rows.begin(), measured_rows.end(),
                     [&](const auto& a, const auto& b) { return beats(a.first, b.first); });
    for (const auto& [median, row] : measured_rows)
      if (!opt.top || shown < *opt.top) {
        rows->add(row);
        ++shown;
      }
    for (const auto& row : invalid_rows)
      if (!opt.top || shown < *opt.top) {
        rows->add(row);
        ++shown;
      }
  }
  print_table({{"log", opt.file},
               {"kernel/bucket", text(header, "tuner")},
               {"arch", text(header, "arch")},
               {"schema", text(header, "log_schema")},
               {"space_hash", text(header, "space_hash")},
               {"source_hash", text(header, "source_hash")},
               {"toolchain", text(header, "toolchain")}});
  fmt::print("\n");
  rows->print();
  if (shown < trials)
    fmt::print("({} more trial{} not shown: --top {})\n", trials - shown,
               trials - shown == 1 ? "" : "s", shown);
  if (best && maximize)
    fmt::print("best: {} (score {}), {} of {} trials measured\n", best->first, ms(best->second),
               measured, trials);
  else if (best)
    fmt::print("best: {} ({} ms), {} of {} trials measured\n", best->first, ms(best->second),
               measured, trials);
  else
    fmt::print("best: none, 0 of {} trials measured\n", trials);
  if (best && incumbent)
    fmt::print("{}\n", describe_speedup(*incumbent, best->first, best->second, maximize));
  if (runoff) fmt::print("runoff: {}\n", describe_runoff(*runoff));
  if (std::optional<OverheadSummary> o = overhead.summary())
    fmt::print("{}\n", describe_overhead(*o));
  return exit_ok;
}

int run_show(const ShowOptions& opt) {
  if (auto d = not_regular_problem(opt.file)) {  // /dev/zero would be read until memory ends
    fmt::print(stderr, "{}\n", d->str());
    return exit_bad_input;
  }
  std::ifstream in(opt.file, std::ios::binary);
  if (!in) {
    fmt::print(stderr, "tuner show: error: cannot read '{}'\n", opt.file);
    return exit_bad_input;
  }
  if (looks_like_log(opt.file, first_line(opt.file))) return show_log(opt);
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(opt.file, ec);
  if (!ec)
    if (auto d = size_problem(opt.file, size, max_record_bytes, "a record")) {
      fmt::print(stderr, "{}\n", d->str());
      return exit_bad_input;
    }
  std::ostringstream ss;
  ss << in.rdbuf();
  return show_record(opt, ss.str());
}

}  // namespace

void add_show_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<ShowOptions>();
  auto* sub = app.add_subcommand("show", "show a record or a trial log as a table");
  sub->add_option("file", opt->file, "a record (.json) or a trial log (.jsonl)")->required();
  sub->add_option("--sort", opt->sort,
                  "a log's trials in log order (order, the default) or fastest first (median: "
                  "measured trials by median, highest score first for a log that maximizes, then "
                  "the invalid ones)")
      ->check(CLI::IsMember({"order", "median"}));
  sub->add_option("--top", opt->top, "show only the first N trials of a log (after --sort)")
      ->check(whole_number(1, 1000000000));
  sub->add_flag("--json", opt->json, "print the record or the log as JSON");
  sub->footer(
      "Exit status: 0 shown, 2 bad usage or a file that does not read as a record or a trial "
      "log.");
  sub->callback([&run, opt] { run = [opt] { return run_show(*opt); }; });
}

}  // namespace tune::cli
