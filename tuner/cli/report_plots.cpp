#include <tuner/cli/report_plots.hpp>

#include <cmath>

namespace tune::cli {

namespace {

// A y axis for times: linear, or log10 when they span more than 10x.
struct Scale {
  double lo, hi;
  bool log;
  double top, bottom;  // pixel rows of hi and lo
  double y(double v) const { return plot_row(v, lo, hi, log, top, bottom); }
};

}  // namespace

// "Trials in order": each trial's median at its place in the run.
void order_plot(std::ostream& out, TrialMarks& marks, bool maximize) {
  const double width = 720, height = 300, left = 70, right = 20, top = 30, bottom = 260;
  out << fmt::format(
      "<svg class=\"plot\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\">\n", width,
      height, width, height);
  if (marks.measured() == 0) {
    out << "<text x=\"20\" y=\"40\">no measured trial</text>\n</svg>\n";
    return;
  }
  Scale s{marks.lo() * 0.95, marks.hi() * 1.05, marks.hi() / marks.lo() > 10, top, bottom};
  const std::size_t n = marks.count();
  auto x = [&](std::size_t i) {
    return n <= 1 ? (left + width - right) / 2
                  : left + (width - right - left) * static_cast<double>(i) /
                               static_cast<double>(n - 1);
  };
  // Axes, and ticks at the low end, the high end and between.
  out << fmt::format(
      "<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>"
      "<line class=\"axis\" x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\"/>\n",
      left, top - 10, bottom, width - right);
  for (int k = 0; k <= 4; ++k) {
    const double f = k / 4.0;
    const double v =
        s.log ? std::pow(10.0, std::log10(s.lo) + f * (std::log10(s.hi) - std::log10(s.lo)))
              : s.lo + f * (s.hi - s.lo);
    out << fmt::format(
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.4g}</text>\n",
        left - 6, s.y(v) + 4, v);
  }
  out << fmt::format(
      "<text class=\"label\" x=\"{}\" y=\"{}\">{}{}</text>"
      "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">trial</text>\n",
      4, 16, maximize ? "score" : "median ms", s.log ? " (log scale)" : "", width - right,
      height - 8);
  out << fmt::format(
      "<text class=\"tick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">1</text>"
      "<text class=\"tick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
      x(0), bottom + 16, x(n - 1), bottom + 16, n);
  // The best so far among the required and search trials.
  bool any = false;
  std::optional<double> best;
  marks.for_each([&](std::size_t i, const TrialMarks::Mark& m) {
    if (m.kind == 'x' || m.runoff) return;
    if (!best || better(m.median, *best, maximize)) {
      out << (any ? "" : "<path class=\"best\" d=\"");
      if (best) out << fmt::format(" L{:.1f},{:.1f}", x(i), s.y(*best));
      best = m.median;
      out << fmt::format("{}{:.1f},{:.1f}", any ? " L" : "M", x(i), s.y(*best));
      any = true;
    }
  });
  if (best) out << fmt::format(" L{:.1f},{:.1f}", x(n - 1), s.y(*best));
  if (any) out << "\"/>\n";
  marks.for_each([&](std::size_t i, const TrialMarks::Mark& m) {
    const double cx = x(i), cy = m.kind == 'x' ? 0 : s.y(m.median);
    switch (m.kind) {
      case 'p':  // measured first as one of the prior's best
        out << fmt::format(
            "<path class=\"prior\" d=\"M{:.1f},{:.1f} l5,8 l-10,0 z\"><title>{} (prior #{})"
            "</title></path>\n",
            cx, cy - 5, m.title, m.prior);
        break;
      case 'q':
        out << fmt::format(
            "<rect class=\"required\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"8\" height=\"8\">"
            "<title>{}</title></rect>\n",
            cx - 4, cy - 4, m.title);
        break;
      case 'r':
        out << fmt::format(
            "<path class=\"runoff\" d=\"M{:.1f},{:.1f} l5,5 l-5,5 l-5,-5 z\"><title>{}</title>"
            "</path>\n",
            cx, cy - 5, m.title);
        break;
      case 's':
        out << fmt::format(
            "<circle class=\"search\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\"><title>{}</title>"
            "</circle>\n",
            cx, cy, m.title);
        break;
      default:
        out << fmt::format(
            "<path class=\"invalid\" d=\"M{0:.1f},{1:.1f} l8,8 M{2:.1f},{1:.1f} l-8,8\">"
            "<title>{3}</title></path>\n",
            x(i) - 4, top - 22, x(i) + 4, m.title);
    }
  });
  out << "</svg>\n";
}

}  // namespace tune::cli
