// `saddle figures`: the panel CSV. Markers are compared with their reference source (z-scores),
// the rows are written as one tidy table per panel (and read back for --redraw), and the panel's
// summary (markers, how many compared, max |z|) is counted.
#include <algorithm>
#include <cmath>

#include "tools/cli/cli_common.hpp"
#include "tools/figures/figures_rows.hpp"
#include "tools/cli/number_text.hpp"
#include "tools/plotting/plot.hpp"

namespace saddle {
namespace figures {

bool to_number(const std::string& s, double& v) {
  return parse_real(s, &v).empty() && std::isfinite(v);
}

namespace {


std::string opt_num(double v) { return std::isfinite(v) ? fmt(v) : ""; }

// Linear interpolation of the reference curve at x (exact match preferred; only that one when
// exact_only); false outside the curve, and where x or a neighbour of x is a gap of the curve (a
// point computed but not converged: nothing is interpolated across it).
bool reference_at(const std::vector<const Row*>& pts, const std::vector<const Row*>& gaps, double x, double& y,
                  double& se, int& stable, bool exact_only) {
  auto same = [&](double a) { return std::fabs(a - x) <= 1e-9 * std::max(1.0, std::fabs(x)); };
  for (auto r : pts)
    if (same(r->x)) {
      y = r->y;
      se = r->se;
      stable = r->stable;
      return true;
    }
  if (exact_only) return false;
  const Row* lo = nullptr;
  const Row* hi = nullptr;
  for (auto r : pts) {
    if (r->x < x && (!lo || r->x > lo->x)) lo = r;
    if (r->x > x && (!hi || r->x < hi->x)) hi = r;
  }
  if (!lo || !hi) return false;
  for (auto g : gaps)  // a gap at x itself also lies strictly between lo and hi
    if (g->x > lo->x && g->x < hi->x) return false;
  const double t = (x - lo->x) / (hi->x - lo->x);
  y = lo->y + t * (hi->y - lo->y);
  se = std::isfinite(lo->se) && std::isfinite(hi->se) ? std::max(lo->se, hi->se) : NAN;
  stable = (lo->stable == 0 || hi->stable == 0) ? 0 : std::max(lo->stable, hi->stable);
  return true;
}

void compare_markers(std::vector<Row>& rows, const std::vector<Row>& gaps) {
  for (auto& m : rows) {
    if (m.ref.empty()) continue;
    // The 1RSB reference: only a converged point at the marker's own alpha (the dashed curve is
    // broken at unconverged points, so nothing is interpolated across them).
    const bool rsb = m.ref == "rsb";
    auto matches = [&](const Row& r) {
      return r.source == m.ref && r.series == m.series &&
             (r.lambda.empty() || m.lambda.empty() || r.lambda == m.lambda) &&
             (r.alpha.empty() || m.alpha.empty() || r.source == "theory" || r.alpha == m.alpha);
    };
    std::vector<const Row*> pts, gap_pts;
    for (const auto& r : rows)
      if (matches(r) && (!rsb || r.stable == 1)) pts.push_back(&r);
    for (const auto& g : gaps)
      if (matches(g)) gap_pts.push_back(&g);
    double y, se;
    int st;
    if (!reference_at(pts, gap_pts, m.x, y, se, st, rsb)) continue;
    m.ref_y = y;
    m.stable = st;
    double var = std::isfinite(m.se) ? m.se * m.se : 0.0;
    if (std::isfinite(se)) var += se * se;
    if (var > 0) m.z = (m.y - y) / std::sqrt(var);
  }
}

}  // namespace

Summary write_panel_csv(const Panel& panel, const Params& params, std::vector<Row>& rows, const std::vector<Row>& gaps,
                        const std::vector<std::string>& commands, bool quick, const std::string& path) {
  compare_markers(rows, gaps);
  // Replica rows at lambda values no marker picked are not needed in the figure.
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [&](const Row& r) {
                              if (r.source != "replica") return false;
                              for (const auto& m : rows)
                                if (m.source == "mc" && m.ref == "replica" && m.series == r.series && m.x == r.x &&
                                    m.lambda == r.lambda)
                                  return false;
                              return true;
                            }),
             rows.end());

  CsvTable table({"panel", "source", "series", "x", "y", "y_se", "lambda", "alpha", "rs_stable", "compared_with",
                  "reference", "z"});
  table.setting("figure", panel.title);
  table.setting("x", panel.xlabel);
  table.setting("y", panel.ylabel);
  table.setting("mode", quick ? "quick" : "full");
  std::string ps;
  for (const auto& kv : params) ps += (ps.empty() ? "" : " ") + kv.first + "=" + kv.second;
  table.setting("parameters", ps);
  for (const auto& c : commands) table.setting("run", c);
  table.setting("columns",
                "source: theory (curve), bayes (Bayes-optimal, dashed), replica (replica prediction at the "
                "markers' finite alpha), mc (simulation; y_se = standard error over seeds/draws), rsb (1RSB fixed "
                "point where RS is unstable, dashed; rs_stable = 1 converged, 0 not converged: open triangles, "
                "no curve), erm_inf (ERM extrapolated to D = inf, compared with a converged 1RSB point at the "
                "same alpha; both from the compiled-in reference of data/validation/erm_inf); rs_stable: 1/0 "
                "replica-symmetric stability of the theory point, 0 where its row says rs_stability = unstable "
                "(the replicon above 1, or the jump term of the proximal minimiser: jump_share - 2 se above 0.03) "
                "(blank: not applicable); z = (y - reference) / "
                "sqrt(y_se^2 + reference_se^2) for a marker compared with its reference source");
  Summary sum;
  sum.name = panel.name;
  for (const auto& r : rows) {
    table.add_row({panel.name, r.source, r.series, fmt(r.x), fmt(r.y), opt_num(r.se), r.lambda, r.alpha,
                   r.stable < 0 ? "" : std::to_string(r.stable), std::isfinite(r.ref_y) ? r.ref : "",
                   opt_num(r.ref_y), opt_num(r.z)});
    if (r.source != "mc") continue;
    ++sum.markers;
    if (!std::isfinite(r.z)) continue;
    if (r.stable == 0) {
      ++sum.compared_unstable;
      continue;
    }
    ++sum.compared;
    sum.max_z = std::max(sum.max_z, std::fabs(r.z));
  }
  table.write_to(path);
  return sum;
}

std::vector<Row> read_panel_csv(const std::string& path) {
  const CsvData d = read_csv(path);
  const int src = d.col("source"), ser = d.col("series"), xc = d.col("x"), yc = d.col("y"), sc = d.col("y_se"),
            st = d.col("rs_stable");
  if (src < 0 || ser < 0 || xc < 0 || yc < 0 || sc < 0 || st < 0)
    throw InputError("figures: '" + path + "' is not a panel CSV");
  std::vector<Row> rows;
  for (const auto& r : d.rows) {
    Row row;
    row.source = r[src];
    row.series = r[ser];
    if (!to_number(r[xc], row.x) || !to_number(r[yc], row.y)) continue;
    double v;
    if (to_number(r[sc], v)) row.se = v;
    row.stable = r[st].empty() ? -1 : (r[st] == "0" ? 0 : 1);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace figures
}  // namespace saddle
