// `saddle figures`: a panel's rows as a figure of the one gnuplot driver (tools/gnuplot.hpp):
// theory solid (RS-unstable points open circles, the line broken there), bayes dashed,
// replica-at-the-markers' alpha crosses, Monte Carlo filled points with error bars; the 1RSB
// fixed point dashed where it converged (open triangles where it did not, no line through them),
// ERM extrapolated to D = inf filled squares with error bars; one colour per series.
#include <algorithm>
#include <map>
#include <utility>

#include "tools/figures_rows.hpp"
#include "tools/gnuplot.hpp"

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
      // A curve broken by RS-unstable points also marks its stable points (a lone one stays visible).
      if (!unstable.points.empty()) line.style = gnuplot::Style::LinePoints;
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
      line.style = gnuplot::Style::Crosses;
      line.title += " (replica, finite alpha)";
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
  gnuplot::draw(fig, png);
}

}  // namespace figures
}  // namespace saddle
