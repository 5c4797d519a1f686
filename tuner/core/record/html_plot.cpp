#include <tuner/core/record/html_plot.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/core.h>

namespace tune {

std::string html_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string_view html_style() {
  return R"(body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:2em}
h3{font-size:1em;margin-bottom:.3em}
table{border-collapse:collapse}th,td{padding:2px 10px;text-align:left;vertical-align:top}
table.list,table.bars{width:100%}
table.list td,table.list th,table.bars td,table.bars th{border-bottom:1px solid #eee}
td.reason{width:55%;overflow-wrap:anywhere}td.cfg{max-width:40em;overflow-wrap:anywhere}
td.num{white-space:nowrap;text-align:right}th.barcell,td.barcell{width:40%}
tr.group td{border-top:1px solid #ccc}
div.bar{height:12px;background:#9bb7d9}div.best-bar{background:#2a9d4b}
.row>div{display:inline-block;vertical-align:top;margin-right:3em}
th{font-weight:600;color:#555}.warning{color:#a60}
.plot text{font-size:11px;fill:#333}.axis{stroke:#888}
.search{fill:#777}.required{fill:#1f5fbf}.runoff{fill:#e08a00}.prior{fill:#2a9d3f}
.invalid{stroke:#c0392b;stroke-width:2}.best{fill:none;stroke:#2a9d4b;stroke-width:1.5}
.bar{fill:#9bb7d9}.best-bar{fill:#2a9d4b}
.k-required{color:#1f5fbf}.k-search{color:#777}.k-runoff{color:#e08a00}.k-prior{color:#2a9d3f}
.k-invalid{color:#c0392b}.k-best{color:#2a9d4b}
.mark{stroke:#e08a00;stroke-dasharray:4 3}
.s0,.s1,.s2,.s3,.s4,.s5{fill:none;stroke-width:1.5}
.s0{stroke:#2a9d4b}.s1{stroke:#1f5fbf}.s2{stroke:#e08a00}.s3{stroke:#8e44ad}
.s4{stroke:#c0392b}.s5{stroke:#777}
)";
}

double plot_row(double v, double lo, double hi, bool log, double top, double bottom) {
  const double a = log ? std::log10(lo) : lo;
  const double b = log ? std::log10(hi) : hi;
  const double x = log ? std::log10(v) : v;
  const double f = b > a ? (x - a) / (b - a) : 0.5;
  return bottom - f * (bottom - top);
}

std::string html_page(std::string_view title, std::string_view body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n"
      "<style>\n{}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
      html_escape(title), html_style(), body);
}

namespace {

struct Frame {
  double width = 720, height = 300, left = 70, right = 130, top = 30, bottom = 260;
  double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  bool log_y = false;
  double x(double v) const {
    const double f = x_hi > x_lo ? (v - x_lo) / (x_hi - x_lo) : 0.5;
    return left + f * (width - right - left);
  }
  double y(double v) const { return plot_row(v, y_lo, y_hi, log_y, top, bottom); }
};

std::string axes_svg(const Frame& f, const PlotAxes& axes) {
  std::string svg = fmt::format(
      "<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>"
      "<line class=\"axis\" x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\"/>\n",
      f.left, f.top - 10, f.bottom, f.width - f.right);
  for (int k = 0; k <= 4; ++k) {
    const double q = k / 4.0;
    const double v =
        f.log_y ? std::pow(10.0, std::log10(f.y_lo) + q * (std::log10(f.y_hi) - std::log10(f.y_lo)))
                : f.y_lo + q * (f.y_hi - f.y_lo);
    const double xv = f.x_lo + q * (f.x_hi - f.x_lo);
    svg += fmt::format(
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.4g}</text>"
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.4g}</text>\n",
        f.left - 6, f.y(v) + 4, v, f.x(xv), f.bottom + 16, xv);
  }
  svg += fmt::format(
      "<text class=\"label\" x=\"4\" y=\"16\">{}{}</text>"
      "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
      html_escape(axes.y_label), f.log_y ? " (log scale)" : "", f.width - f.right, f.height - 8,
      html_escape(axes.x_label));
  for (double m : axes.vertical_marks)
    svg += fmt::format(
        "<line class=\"mark\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"><title>{3}"
        "</title></line>\n",
        f.x(m), f.top - 10, f.bottom, html_escape(axes.mark_label));
  return svg;
}

}  // namespace

std::string line_plot(const std::vector<PlotSeries>& series, const PlotAxes& axes) {
  Frame f;
  f.log_y = axes.log_y;
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  for (const PlotSeries& s : series)
    for (const auto& [x, y] : s.points) {
      x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x);
      if (!axes.log_y || y > 0) y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
    }
  std::string svg = fmt::format(
      "<svg class=\"plot\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\">\n",
      f.width, f.height);
  if (!std::isfinite(x_lo) || !std::isfinite(y_lo)) {
    svg += "<text x=\"20\" y=\"40\">no data</text>\n</svg>\n";
    return svg;
  }
  for (double m : axes.vertical_marks)
    x_lo = std::min(x_lo, m), x_hi = std::max(x_hi, m);
  f.x_lo = x_lo, f.x_hi = x_hi;
  f.y_lo = axes.y_min.value_or(y_lo), f.y_hi = axes.y_max.value_or(y_hi);
  svg += axes_svg(f, axes);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const PlotSeries& s = series[i];
    std::string path;
    for (std::size_t p = 0; p < s.points.size(); ++p) {
      const auto& [x, y] = s.points[p];
      if (axes.log_y && y <= 0) continue;
      if (s.steps && !path.empty())
        path += fmt::format(" L{:.1f},{:.1f}", f.x(x), f.y(s.points[p - 1].second));
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", f.x(x), f.y(y));
    }
    if (!path.empty())
      svg += fmt::format("<path class=\"{}\" d=\"{}\"><title>{}</title></path>\n",
                         html_escape(s.css_class), path, html_escape(s.name));
    if (series.size() > 1)
      svg += fmt::format(
          "<line class=\"{0}\" x1=\"{1:.1f}\" y1=\"{2:.1f}\" x2=\"{3:.1f}\" y2=\"{2:.1f}\"/>"
          "<text class=\"tick\" x=\"{4:.1f}\" y=\"{5:.1f}\">{6}</text>\n",
          html_escape(s.css_class), f.width - f.right + 10, f.top + 14.0 * static_cast<double>(i),
          f.width - f.right + 30, f.width - f.right + 34, f.top + 14.0 * static_cast<double>(i) + 4,
          html_escape(s.name));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace tune
