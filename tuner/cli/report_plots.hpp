// The two plots of a `tuner report` section that show every trial (tuner/cli/cmd_report.cpp):
// "trials in order" and "best so far against time". Each is fed a trial at a time as the log is
// read; the first keeps its marks in a scratch file (its scale and x positions are known only
// after the last trial), the second one point a trial.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <ostream>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/report_tables.hpp>
#include <tuner/cli/scratch_file.hpp>
#include <tuner/core/record/html_plot.hpp>

namespace tune::cli {

using nlohmann::json;

// What the "trials in order" plot needs of each trial, written to a scratch file as the trials
// come (the plot's scale and x positions are known only after the last), read back twice.
class TrialMarks {
 public:
  void add(const json& t) {
    std::ostream& out = scratch_.stream();
    const std::optional<double> m = median_of(t);
    char kind = 'x';  // invalid
    if (m)
      kind = t.contains("prior_rank")                   ? 'p'
             : t.value("phase", "search") == "required" ? 'q'
             : t.value("phase", "search") == "runoff"   ? 'r'
                                                        : 's';
    const bool runoff = t.value("phase", "") == "runoff";
    const std::string title =
        html_escape(fmt::format("#{} {}: {}", ++count_, field(t, "config_id"),
                                m ? ms(*m) : "invalid: " + field(t, "reason")));
    const std::string prior = kind == 'p' ? t["prior_rank"].dump() : "";
    const double v = m.value_or(0);
    out.put(kind);
    out.put(runoff ? '1' : '0');
    out.write(reinterpret_cast<const char*>(&v), sizeof v);
    for (const std::string* text : {&title, &prior}) {
      const std::uint64_t size = text->size();
      out.write(reinterpret_cast<const char*>(&size), sizeof size);
      out.write(text->data(), static_cast<std::streamsize>(size));
    }
    if (m) {
      lo_ = count_measured_++ == 0 ? *m : std::min(lo_, *m);
      hi_ = count_measured_ == 1 ? *m : std::max(hi_, *m);
    }
  }

  struct Mark {
    char kind = 'x';
    bool runoff = false;
    double median = 0;
    std::string title, prior;
  };
  // Calls `each(i, mark)` for every trial in order.
  template <class F>
  void for_each(F&& each) {
    std::istream& in = scratch_.rewind();
    Mark m;
    for (std::size_t i = 0; i < count_; ++i) {
      m.kind = static_cast<char>(in.get());
      m.runoff = in.get() == '1';
      in.read(reinterpret_cast<char*>(&m.median), sizeof m.median);
      for (std::string* text : {&m.title, &m.prior}) {
        std::uint64_t size = 0;
        in.read(reinterpret_cast<char*>(&size), sizeof size);
        text->resize(size);
        in.read(text->data(), static_cast<std::streamsize>(size));
      }
      each(i, m);
    }
    scratch_.stream().seekp(0, std::ios::end);
  }
  std::size_t count() const noexcept { return count_; }
  std::size_t measured() const noexcept { return count_measured_; }
  double lo() const noexcept { return lo_; }
  double hi() const noexcept { return hi_; }

 private:
  ScratchFile scratch_;
  std::size_t count_ = 0, count_measured_ = 0;
  double lo_ = 0, hi_ = 0;
};

/// Writes the "trials in order" plot of `marks` (SVG).
void order_plot(std::ostream& out, TrialMarks& marks, bool maximize);

// "Best so far against time": the strategy's progress in wall-clock seconds since the first
// trial (time stamps have whole seconds), the runoff's start marked; gathered a trial at a time
// (a point a trial: 16 bytes).
class TimePlot {
 public:
  explicit TimePlot(bool maximize) : maximize_(maximize) {
    best_ = PlotSeries{"best so far", "best", {}, true};
    axes_.x_label = "seconds since the first trial";
    axes_.y_label = maximize ? "best score" : "best median ms";
    axes_.mark_label = "the runoff starts";
  }
  void add(const json& t) {
    if (first_trial_) {
      first_trial_ = false;
      std::tm tm{};
      if (::strptime(field(t, "time").c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) != nullptr)
        first_ = ::timegm(&tm);
    }
    if (!first_) return;
    const std::optional<double> at = seconds_since(t, *first_);
    if (!at) return;
    if (t.value("phase", "") == "runoff") {
      if (axes_.vertical_marks.empty()) axes_.vertical_marks.push_back(*at);
      return;
    }
    const auto m = median_of(t);
    if (m && (!best_v_ || better(*m, *best_v_, maximize_))) best_v_ = *m;
    if (best_v_) best_.points.emplace_back(*at, *best_v_);
  }
  std::string svg() {
    if (!first_) return "<p>no time stamps</p>\n";
    if (best_.points.empty()) return "<p>no measured trial</p>\n";
    const auto [lo, hi] =
        std::minmax_element(best_.points.begin(), best_.points.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; });
    axes_.log_y = lo->second > 0 && hi->second / lo->second > 10;
    return line_plot({best_}, axes_);
  }

 private:
  // Seconds from `first` to the trial's time stamp (UTC, whole seconds), or nullopt.
  static std::optional<double> seconds_since(const json& t, std::time_t first) {
    std::tm tm{};
    const std::string stamp = field(t, "time");
    if (::strptime(stamp.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) return std::nullopt;
    return std::difftime(::timegm(&tm), first);
  }
  bool maximize_;
  bool first_trial_ = true;
  std::optional<std::time_t> first_;
  PlotSeries best_;
  PlotAxes axes_;
  std::optional<double> best_v_;
};

}  // namespace tune::cli
