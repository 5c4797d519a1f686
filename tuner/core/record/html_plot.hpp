// The pieces of tune's HTML pages (`tuner report`, the search benchmark): escaping, one style
// sheet, and line plots as inline SVG. Pages are self-contained (no script, nothing fetched) and
// deterministic: the same data always gives the same bytes.
//
// Example:
//   PlotSeries best{"anneal", "s0", {{0.01, 1.3}, {0.05, 1.02}, {0.2, 1.0}}};
//   std::string svg = line_plot({best}, {"fraction of the space", "best / optimum"});
//   std::string page = html_page("search benchmark", "<h1>...</h1>" + svg);
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tune {

/// `text` with &, <, >, " and ' escaped for HTML.
std::string html_escape(std::string_view text);

/// The style sheet every page shares (plot classes: axis, tick, label, best, search, required,
/// runoff, invalid, bar, marker, and series colours s0 to s5).
std::string_view html_style();

/// A whole page: doctype, title, the style sheet, then `body`.
std::string html_page(std::string_view title, std::string_view body);

/// One line of a line plot: a name for the legend, a CSS class (a colour), and its points in
/// data units; drawn as steps when `steps` (a best-so-far line).
struct PlotSeries {
  std::string name;
  std::string css_class;
  std::vector<std::pair<double, double>> points;
  bool steps = false;
};

/// The frame of a line plot.
struct PlotAxes {
  std::string x_label;
  std::string y_label;
  bool log_y = false;           ///< log10 y axis (times that span more than 10x)
  std::optional<double> y_min;  ///< default: from the data
  std::optional<double> y_max;
  std::vector<double> vertical_marks;  ///< x positions drawn as dashed lines (the runoff)
  std::string mark_label;              ///< what the marks are
};

/// An SVG line plot of `series` (720 x 300), with a legend when there is more than one.
std::string line_plot(const std::vector<PlotSeries>& series, const PlotAxes& axes);

/// The pixel row of `v` on a y axis that runs from `lo` (row `bottom`) to `hi` (row `top`),
/// linear or, with `log`, in log10; the middle row when `hi` is not above `lo`.
double plot_row(double v, double lo, double hi, bool log, double top, double bottom);

}  // namespace tune
