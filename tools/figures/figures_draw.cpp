// `saddle figures`: a panel's rows as a figure of the one gnuplot driver (tools/plotting/gnuplot.hpp):
// theory as lines (solid; RS-unstable points open circles, the line broken there), bayes dashed,
// the replica at the markers' alpha a short horizontal line at each marker, Monte Carlo filled
// points with error bars (wide caps); the 1RSB fixed point dashed where it converged (open
// triangles where it did not, no line through them), ERM extrapolated to D = inf filled squares
// with error bars; one colour per series. A theory point missing from a curve's grid (its fixed
// point did not converge) is named in a note; on a log y axis, RS-unstable theory values far above
// everything else are drawn as an arrow at the top edge with their value.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "tools/figures/figures_rows.hpp"
#include "tools/plotting/gnuplot.hpp"

namespace saddle {
namespace figures {

void draw_panel(const Panel& panel, const std::vector<Row>& rows, const Params& params, const std::string& png) {
  std::map<std::string, int> color;
  std::vector<std::pair<std::string, std::string>> groups;  // (source, series) in order
  for (const std::string src : {"theory", "bayes", "replica", "mc", "rsb", "erm_inf"})
    for (const auto& r : rows)
      if (r.source == src) {
        if (!color.count(r.series)) color[r.series] = static_cast<int>(color.size());
        if (std::find(groups.begin(), groups.end(), std::make_pair(r.source, r.series)) == groups.end())
          groups.emplace_back(r.source, r.series);
      }
  gnuplot::Figure fig;
  fig.height = 800;
  fig.key = gnuplot::Key::Below;
  fig.pad = true;
  fig.title = panel.title;
  // Axis labels are gnuplot enhanced text from the panel table ({/Symbol n}); {parameter} is
  // replaced by its value (which --set restricts to letters, digits and . , : ; + - _ |).
  std::string xlabel = panel.xlabel;
  for (const auto& kv : params) {
    const std::string key = "{" + kv.first + "}";
    for (auto at = xlabel.find(key); at != std::string::npos; at = xlabel.find(key, at + kv.second.size()))
      xlabel.replace(at, key.size(), kv.second);
  }
  fig.x = {xlabel, true};
  fig.y = {panel.ylabel, true};
  fig.logx = panel.logx;
  fig.logy = panel.logy;
  for (const auto& g : groups) {
    std::vector<const Row*> pts;
    for (const auto& r : rows)
      if (r.source == g.first && r.series == g.second) pts.push_back(&r);
    std::stable_sort(pts.begin(), pts.end(), [](const Row* a, const Row* b) { return a->x < b->x; });
    const int c = color[g.second];
    gnuplot::Series line{g.second, gnuplot::Style::Line, c, {}};
    gnuplot::Series unstable{g.second + " (RS unstable)", gnuplot::Style::OpenCircles, c, {}};
    if (g.first == "rsb") unstable = {g.second + " (1RSB, not converged)", gnuplot::Style::OpenTriangles, c, {}};
    for (auto r : pts) {
      if (panel.logy && r->y <= 0) continue;
      if (g.first == "rsb" && r->stable == 0) {  // an unconverged 1RSB point: a mark, never a curve
        unstable.points.push_back({r->x, r->y, 0.0});
        line.points.push_back({NAN, NAN, NAN});
        continue;
      }
      if (g.first == "theory" && r->stable == 0) {
        unstable.points.push_back({r->x, r->y, 0.0});
        line.points.push_back({NAN, NAN, NAN});  // the line is broken there
        continue;
      }
      line.points.push_back({r->x, r->y, r->se});
    }
    const std::string& s = g.first;
    if (s == "theory") {
      // A curve broken by RS-unstable points stays a line (a lone stable point: a short one).
      fig.series.push_back(line);
      if (!unstable.points.empty()) fig.series.push_back(unstable);
    } else if (s == "bayes") {
      line.style = gnuplot::Style::DashedLine;
      fig.series.push_back(line);
    } else if (s == "rsb") {
      line.style = gnuplot::Style::DashedLinePoints;
      line.title += " (1RSB, where RS is unstable)";
      bool drawn = false;
      for (const auto& p : line.points) drawn = drawn || !std::isnan(p[0]);
      if (drawn) fig.series.push_back(line);
      if (!unstable.points.empty()) fig.series.push_back(unstable);
    } else if (s == "erm_inf") {
      line.style = gnuplot::Style::SquareErrorBars;
      line.title += " (ERM extrapolated to D = inf)";
      fig.series.push_back(line);
    } else if (s == "replica") {
      line.style = gnuplot::Style::Dashes;
      line.title += " (replica at the markers' alpha)";
      fig.series.push_back(line);
    } else {
      line.style = gnuplot::Style::ErrorBars;
      line.title += " (simulation)";
      fig.series.push_back(line);
    }
  }
  bool any = false;
  for (const auto& s : fig.series)
    for (const auto& p : s.points) any = any || !std::isnan(p[0]);
  if (!any) throw std::runtime_error("figures: panel " + panel.name + " has nothing to draw");

  // Theory points missing from a curve (the fixed point did not converge there, so the run wrote
  // no value): named in a note, per series, over the x grid the panel's theory curves share.
  std::string xname = "x";
  for (const auto& run : panel.runs)
    if (run.source == "theory") {
      xname = run.x.substr(0, run.x.find('*'));
      break;
    }
  std::set<double> grid;
  std::map<std::string, std::set<double>> have;
  for (const auto& r : rows)
    if (r.source == "theory") {
      grid.insert(r.x);
      have[r.series].insert(r.x);
    }
  for (const auto& kv : have) {
    std::string missing;
    int n = 0;
    for (double x : grid)
      if (!kv.second.count(x) && x > *kv.second.begin() && x < *kv.second.rbegin()) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", x);
        missing += (n++ ? ", " : "") + std::string(buf);
      }
    if (n > 0)
      fig.notes.push_back(kv.first + ": no theory point at " + xname + " = " + missing +
                          " (the fixed point did not converge)");
  }
  // On a log y axis, RS-unstable theory values above the decade that holds everything else
  // (markers with their error bars, stable theory, references) would squeeze the rest: the axis
  // ends at that decade and those values become arrows at the top edge, labelled.
  if (panel.logy) {
    double top = 0, unstable_top = 0;
    for (const auto& r : rows) {
      const double hi = r.y + (std::isfinite(r.se) && r.source != "theory" ? r.se : 0.0);
      if (r.source == "theory" && r.stable == 0) unstable_top = std::max(unstable_top, r.y);
      else if (std::isfinite(hi)) top = std::max(top, hi);
    }
    if (top > 0 && unstable_top > 0) {
      const double decade = std::pow(10.0, std::ceil(std::log10(top) - 1e-9));
      if (unstable_top > decade) fig.ymax = decade;
    }
  }
  gnuplot::draw(fig, png);
}

}  // namespace figures
}  // namespace saddle
