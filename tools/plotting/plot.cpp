// Figures from saddle CSVs (see tools/plotting/plot.hpp): the CSV reader, and the choice of axes, curves
// and styles from the file itself, drawn by the one gnuplot driver (tools/plotting/gnuplot.hpp). The
// swept parameters come from the file's '# sweep:' line (else the command's hints, else the
// options of its '# command:' line that name a column); curves are split by every swept column
// that varies, besides the x axis. Nothing here depends on a model.
#include "tools/plotting/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "tools/cli/cli_common.hpp"
#include "tools/runner/csv.hpp"
#include "tools/cli/number_text.hpp"
#include "tools/runner/file_io.hpp"
#include "tools/plotting/gnuplot.hpp"

namespace saddle {
namespace {

const std::vector<std::string> kDefaultY{"test_error", "risk", "error", "mean", "train_error"};
const std::vector<std::string> kReferences{"bayes_risk", "error_ridge"};
const char* kSweepPrefix = "# sweep:";

bool is_number(const std::string& s, double& v) { return parse_real(s, &v).empty(); }

double number_or_nan(const std::string& s) {
  double v = 0.0;
  return parse_real(s, &v).empty() ? v : std::nan("");
}

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// The axis label of a column: known columns get an enhanced-text label, any other name (from the
// CSV) is shown literally.
gnuplot::Label label_of(const std::string& col) {
  static const std::map<std::string, std::string> names{
      {"alpha", "sample ratio {/Symbol a} = N/D"}, {"lambda", "ridge {/Symbol l}"},
      {"nu", "signal strength {/Symbol n}"},      {"gamma", "ridge {/Symbol g}"},
      {"c", "c = p/n"},                           {"L", "sequence length L"},
      {"snr", "||{/Symbol m}||^2"},               {"delta", "noise variance {/Symbol D}"},
      {"test_error", "test error (excess over {/Symbol D})"}, {"risk", "population risk"},
      {"error", "interpolation error"},           {"train_error", "training error"},
      {"error_ridge", "ridge interpolation error"}, {"bayes_risk", "Bayes risk"}};
  auto it = names.find(col);
  return it == names.end() ? gnuplot::Label{col, false} : gnuplot::Label{it->second, true};
}

// `text` shown literally inside gnuplot enhanced text (its special characters escaped).
std::string escape_enhanced(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (std::string("_^{}@&~\\").find(ch) != std::string::npos) out += "\\";
    out += ch;
  }
  return out;
}

// "a minus b" of two labels (enhanced text if either is; a literal one is then escaped).
gnuplot::Label minus(const gnuplot::Label& a, const gnuplot::Label& b) {
  const bool enhanced = a.enhanced || b.enhanced;
  auto text = [&](const gnuplot::Label& l) { return enhanced && !l.enhanced ? escape_enhanced(l.text) : l.text; };
  return {text(a) + " minus " + text(b), enhanced};
}

}  // namespace

std::vector<std::string> swept_parameters(const CsvData& d, const PlotHints& hints, bool* from_file) {
  std::vector<std::string> out;
  auto add = [&](const std::string& c) {
    if (d.col(c) >= 0 && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  for (const auto& line : d.comments)
    if (line.rfind(kSweepPrefix, 0) == 0)
      for (const auto& c : split(line.substr(std::string(kSweepPrefix).size()), ',')) add(trim(c));
  if (from_file) *from_file = !out.empty();
  if (!out.empty()) return out;
  for (const auto& c : hints.params) add(c);
  if (!out.empty()) return out;
  // The options of the recorded command that name a column (--alpha 0.5:4:8 -> alpha).
  for (const auto& line : d.comments)
    if (line.rfind("# command:", 0) == 0) {
      std::istringstream in(line.substr(10));
      for (std::string tok; in >> tok;)
        if (tok.size() > 2 && tok.compare(0, 2, "--") == 0) add(tok.substr(2));
    }
  return out;
}

std::string sweep_header(const std::vector<std::string>& columns) {
  std::string s = kSweepPrefix;
  for (std::size_t i = 0; i < columns.size(); ++i) s += (i ? ", " : " ") + columns[i];
  return s;
}

std::vector<std::string> swept_columns(const std::vector<std::pair<std::string, std::size_t>>& counts) {
  std::vector<std::string> out;
  for (const auto& c : counts)
    if (c.second > 1) out.push_back(c.first);
  return out;
}

int CsvData::col(const std::string& name) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return static_cast<int>(i);
  return -1;
}

CsvData read_csv(const std::string& path) {
  const std::string text = file_io::read_text(path, "plot");  // a regular file, bounded (tools/runner/file_io.hpp)
  CsvData d;
  std::string error;
  const std::string why = parse_csv(
      text,
      [&](const std::string& line) {
        if (d.columns.empty()) d.comments.push_back(line);
      },
      [&](std::vector<std::string>&& fields, std::size_t line) {
        if (!error.empty()) return;
        if (d.columns.empty()) {
          d.columns = std::move(fields);
          return;
        }
        if (fields.size() != d.columns.size())
          error = "'" + path + "' is not a saddle CSV: the row on line " + std::to_string(line) + " has " +
                  std::to_string(fields.size()) + " fields, the header " + std::to_string(d.columns.size());
        else
          d.rows.push_back(std::move(fields));
      });
  if (!why.empty()) throw InputError("'" + path + "' is not a CSV file (" + why + ")");
  if (!error.empty()) throw InputError(error);
  if (d.comments.empty() || d.comments[0].rfind("# saddle ", 0) != 0 || d.columns.empty())
    throw InputError("'" + path + "' is not a saddle CSV (no '# saddle' header line)");
  return d;
}


void plot_csv(const CsvData& data, const PlotHints& hints, const PlotOptions& opt, const std::string& png) {
  if (!output_rank()) return;  // MPI: rank 0 draws (tools/cli/cli_common.hpp)
  gnuplot::draw(plot_figure(data, hints, opt), png, opt.timeout);
}

// Whether the figure is that of a comparison table (validate: columns z and verdict) drawn as
// comparison_figure: when no axis or column is chosen.
template <class Has>
bool comparison_default(const PlotOptions& opt, const Has& has) {
  return has("z") && has("verdict") && opt.x.empty() && opt.y.empty() && opt.z.empty() && opt.by.empty() &&
         opt.diff.empty();
}

// The columns to draw: --y, else the hints', else the first default column the data has.
template <class Has>
std::vector<std::string> y_columns(const PlotOptions& opt, const PlotHints& hints, const Has& has) {
  if (!opt.y.empty()) return split(opt.y, ',');
  if (!hints.y.empty()) return hints.y;
  for (const auto& y : kDefaultY)
    if (has(y)) return {y};
  return {};
}

void check_plot_options(const std::vector<std::string>& columns, const std::vector<std::string>& sweep,
                        const PlotHints& hints, const PlotOptions& opt) {
  auto has = [&](const std::string& c) { return std::find(columns.begin(), columns.end(), c) != columns.end(); };
  auto need = [&](const std::string& c) {
    if (!has(c)) throw InputError("plot: no column '" + c + "' in the data");
  };
  if (!opt.x.empty()) need(opt.x);
  if (!opt.diff.empty()) {
    const auto colon = opt.diff.find(':');
    const auto dash = opt.diff.find('-', colon == std::string::npos ? 0 : colon);
    if (colon == std::string::npos || dash == std::string::npos)
      throw InputError(opt.flag_prefix + "diff: expected COL:A-B, got '" + opt.diff + "'");
    need(opt.diff.substr(0, colon));
  }
  if (comparison_default(opt, has)) return;
  std::vector<std::string> ycols = y_columns(opt, hints, has);
  if (ycols.empty()) throw InputError("plot: say which column to plot (" + opt.flag_prefix + "y)");
  for (const auto& y : ycols) need(y);
  if (!opt.z.empty()) {
    if (!has(opt.z) && opt.z.find('-') != std::string::npos) {
      need(opt.z.substr(0, opt.z.find('-')));
      need(opt.z.substr(opt.z.find('-') + 1));
    } else {
      need(opt.z);
    }
  }
  if (!opt.by.empty()) need(opt.by);
  const bool heat = !opt.z.empty() || !opt.by.empty() || !opt.diff.empty();
  if (heat && opt.by.empty() && !sweep.empty()) {
    bool other = false;
    for (const auto& s : sweep) other = other || s != opt.x;
    if (!other || (opt.x.empty() && sweep.size() < 2))
      throw InputError("plot: a heat map needs a second swept parameter (" + opt.flag_prefix + "by)");
  }
}

void check_plot_request(const std::string& png, const std::vector<std::string>& columns,
                        const std::vector<std::string>& sweep, const PlotHints& hints, const PlotOptions& opt) {
  if (png.empty()) return;
  gnuplot::check_timeout(opt.timeout, "--plot-timeout");
  check_plot_options(columns, sweep, hints, opt);
  gnuplot::check_ready();
}

void plot_after_output(const CsvData& data, const PlotHints& hints, const PlotOptions& opt, const std::string& png,
                       const std::string& written) {
  try {
    plot_csv(data, hints, opt, png);
  } catch (const InputError& e) {
    throw LateFailure(std::string(e.what()) + "; the CSV is complete (" + written + "), only the figure is missing");
  }
}

namespace {

// The figure of a comparison table (validate: columns z and verdict): the z of every comparison
// that has one, numbered in file order, one marker per verdict (counts in the legend), and the
// pass band |z| <= 4 as dashed lines. What has no z (theory rows, a comparison without a value)
// is counted in a note.
gnuplot::Figure comparison_figure(const CsvData& data, const PlotOptions& opt) {
  const int zc = data.col("z"), vc = data.col("verdict"), src = data.col("source");
  struct Look {
    const char* verdict;
    gnuplot::Style style;
    int color;
  };
  static const Look looks[] = {{"pass", gnuplot::Style::Points, 2},
                               {"FAIL", gnuplot::Style::Crosses, 1},
                               {"known_gap", gnuplot::Style::OpenCircles, 4},
                               {"rs_unstable", gnuplot::Style::OpenCircles, 3},
                               {"rsb_gap", gnuplot::Style::OpenTriangles, 5}};
  std::vector<std::string> order;  // verdicts in order of first appearance
  std::map<std::string, gnuplot::Series> by_verdict;
  std::size_t k = 0, no_z = 0;
  double zmax = 4.0;
  for (const auto& r : data.rows) {
    if (src >= 0 && r[src] != "mc") continue;  // a comparison is its simulation row
    double z;
    if (!is_number(r[zc], z) || !std::isfinite(z)) {
      ++no_z;
      continue;
    }
    ++k;
    zmax = std::max(zmax, std::abs(z));
    const std::string& v = r[vc];
    if (!by_verdict.count(v)) {
      gnuplot::Series s{v, gnuplot::Style::OpenTriangles, 8, {}};
      for (const auto& l : looks)
        if (v == l.verdict) {
          s.style = l.style;
          s.color = l.color;
        }
      by_verdict[v] = s;
      order.push_back(v);
    }
    by_verdict[v].points.push_back({double(k), z, 0.0});
  }
  if (k == 0) throw InputError("plot: no comparison has a z value (nothing to draw)");
  gnuplot::Figure fig;
  fig.title = opt.title.empty() ? "theory against simulation: z of each comparison" : opt.title;
  fig.x = {"comparison (simulation rows with a z, in file order)", false};
  fig.y = {"z = (mc - theory) / s.e.", false};
  fig.pad = true;
  for (const auto& v : order) {
    gnuplot::Series s = by_verdict[v];
    s.title = v + " (" + std::to_string(s.points.size()) + ")";
    fig.series.push_back(s);
  }
  const double x0 = 0.5, x1 = k + 0.5;
  fig.series.push_back({"pass band |z| <= 4", gnuplot::Style::DashedLine, -1, {{x0, 4.0, 0.0}, {x1, 4.0, 0.0}}});
  fig.series.push_back({"", gnuplot::Style::DashedLine, -1, {{x0, -4.0, 0.0}, {x1, -4.0, 0.0}}});
  fig.ymin = -1.35 * zmax;  // room for the notes below the band
  fig.ymax = 1.2 * zmax;
  fig.notes.push_back("a verdict may also use an allowance beside the band (the file's '# verdict:' line)");
  if (no_z > 0) fig.notes.push_back(std::to_string(no_z) + " comparison(s) without a z value are not drawn");
  return fig;
}

}  // namespace

gnuplot::Figure plot_figure(const CsvData& data, const PlotHints& hints_in, const PlotOptions& opt) {
  if (data.rows.empty()) throw InputError("plot: no rows to plot");
  check_plot_options(data.columns, {}, hints_in, opt);
  if (comparison_default(opt, [&](const std::string& c) { return data.col(c) >= 0; }))
    return comparison_figure(data, opt);
  PlotHints hints = hints_in;
  if (hints.flag_column.empty() && data.col("rs_stability") >= 0) {  // `saddle plot` of slr erm
    hints.flag_column = "rs_stability";
    hints.flag_value = "unstable";
    hints.flag_label = "RS unstable";
  } else if (hints.flag_column.empty() && data.col("repelling") >= 0) {  // of a generic model
    hints.flag_column = "repelling";
    hints.flag_value = "1";
    hints.flag_label = "repelling fixed point";
  }
  auto need = [&](const std::string& c) {
    if (data.col(c) < 0) throw InputError("plot: no column '" + c + "' in the data");
    return data.col(c);
  };
  auto distinct = [&](int c) {
    std::set<std::string> s;
    for (const auto& r : data.rows) s.insert(r[c]);
    return s.size();
  };
  auto numeric = [&](int c) {
    double v;
    for (const auto& r : data.rows)
      if (!is_number(r[c], v)) return false;
    return true;
  };
  // Axes: the swept parameters that vary, numeric ones first by number of values.
  bool sweep_from_file = false;
  std::vector<std::string> swept, categories;
  for (const auto& n : swept_parameters(data, hints, &sweep_from_file))
    if (distinct(data.col(n)) > 1) (numeric(data.col(n)) ? swept : categories).push_back(n);
  std::stable_sort(swept.begin(), swept.end(), [&](const std::string& a, const std::string& b) {
    return distinct(data.col(a)) > distinct(data.col(b));
  });
  std::string x = !opt.x.empty() ? opt.x : (swept.empty() ? data.columns[0] : swept[0]);
  const int xc = need(x);
  std::string by = opt.by;
  std::string diff_col, diff_a, diff_b;
  if (!opt.diff.empty()) {
    auto colon = opt.diff.find(':'), dash = opt.diff.find('-', colon == std::string::npos ? 0 : colon);
    if (colon == std::string::npos || dash == std::string::npos)
      throw InputError(opt.flag_prefix + "diff: expected COL:A-B, got '" + opt.diff + "'");
    diff_col = opt.diff.substr(0, colon);
    diff_a = opt.diff.substr(colon + 1, dash - colon - 1);
    diff_b = opt.diff.substr(dash + 1);
    need(diff_col);
  }
  std::vector<std::string> ycols = y_columns(opt, hints, [&](const std::string& c) { return data.col(c) >= 0; });
  if (ycols.empty()) throw InputError("plot: say which column to plot (" + opt.flag_prefix + "y)");
  for (const auto& y : ycols) need(y);
  const bool heat = !opt.z.empty() || !by.empty() || !diff_col.empty() ||
                    (swept.size() >= 2 && distinct(data.col(swept[1])) >= 5);
  if (heat && by.empty()) {
    for (const auto& s : swept)
      if (s != x) {
        by = s;
        break;
      }
    if (by.empty()) throw InputError("plot: a heat map needs a second swept parameter (" + opt.flag_prefix + "by)");
  }
  auto is_log = [&](const std::string& c) {
    if (std::find(hints.log_axes.begin(), hints.log_axes.end(), c) != hints.log_axes.end()) return true;
    double lo = INFINITY, hi = 0, v;
    for (const auto& r : data.rows) {
      if (!is_number(r[data.col(c)], v) || v <= 0) return false;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    return hi / lo >= 100.0;
  };
  gnuplot::Figure fig;
  fig.title = opt.title;
  fig.x = label_of(x);
  fig.logx = is_log(x);
  const int conv = data.col("converged");
  const int flag = hints.flag_column.empty() ? -1 : data.col(hints.flag_column);

  if (heat) {
    const int bc = need(by);
    std::string z = !opt.z.empty() ? opt.z : ycols[0];
    // z may be a difference of two columns, "colA-colB" (e.g. error-error_ridge).
    int zc = data.col(z), zc2 = -1;
    if (zc < 0 && z.find('-') != std::string::npos) {
      zc = need(z.substr(0, z.find('-')));
      zc2 = need(z.substr(z.find('-') + 1));
    } else {
      zc = need(z);
    }
    // Grid (by, x) -> z, possibly a difference of two categories.
    std::map<std::pair<double, double>, double> A, B;
    for (const auto& r : data.rows) {
      double xv, bv, zv;
      if (!is_number(r[xc], xv) || !is_number(r[bc], bv) || !is_number(r[zc], zv)) continue;
      if (conv >= 0 && r[conv] == "0") zv = NAN;  // unconverged points are left blank
      if (flag >= 0 && r[flag] == hints.flag_value) zv = NAN;  // so are flagged ones
      double z2;
      if (zc2 >= 0) {
        if (!is_number(r[zc2], z2)) continue;
        zv -= z2;
      }
      if (!diff_col.empty()) {
        const std::string& cat = r[data.col(diff_col)];
        if (cat == diff_a) A[{bv, xv}] = zv;
        else if (cat == diff_b) B[{bv, xv}] = zv;
      } else {
        A[{bv, xv}] = zv;
      }
    }
    for (const auto& kv : A) {
      double zv = kv.second;
      if (!diff_col.empty()) {
        auto it = B.find(kv.first);
        if (it == B.end()) continue;
        zv -= it->second;
      }
      fig.heat_map.cells.push_back({kv.first.second, kv.first.first, zv});
    }
    fig.heat = true;
    fig.heat_map.diverging = !diff_col.empty() || zc2 >= 0;
    // The colour bar says what is coloured: the quantity, and for a difference which minus which.
    fig.heat_map.z = label_of(z);
    if (!diff_col.empty())
      fig.heat_map.z = {label_of(z).enhanced ? label_of(z).text + ", " + escape_enhanced(diff_a) + " minus " +
                                                   escape_enhanced(diff_b)
                                             : z + ", " + diff_a + " minus " + diff_b,
                        label_of(z).enhanced};
    if (zc2 >= 0) fig.heat_map.z = minus(label_of(data.columns[zc]), label_of(data.columns[zc2]));
    bool blank = false;
    for (const auto& c : fig.heat_map.cells) blank = blank || !std::isfinite(c[2]);
    if (blank)
      fig.notes.push_back(std::string("grey: no value (") + (conv >= 0 ? "did not converge" : "not a number") +
                          (flag >= 0 ? " or " + hints.flag_label : "") + ")");
    fig.y = label_of(by);
    fig.logy = is_log(by);
    return fig;
  }

  // Curves: one per combination of the other swept parameters (numeric and categorical) that
  // vary; without a '# sweep:' line also per value of a categorical column with few values.
  std::vector<int> group_cols;
  auto add_group = [&](int c) {
    if (c < 0 || c == xc || c == flag || data.columns[c] == "source") return;
    if (std::find(hints.not_series.begin(), hints.not_series.end(), data.columns[c]) != hints.not_series.end())
      return;
    if (std::find(group_cols.begin(), group_cols.end(), c) == group_cols.end()) group_cols.push_back(c);
  };
  for (const auto& s : swept) add_group(data.col(s));
  for (const auto& s : categories) add_group(data.col(s));
  for (const auto& s : hints.series)
    if (data.col(s) >= 0 && distinct(data.col(s)) > 1) add_group(data.col(s));
  if (!sweep_from_file)
    for (std::size_t c = 0; c < data.columns.size(); ++c) {
      const std::string& name = data.columns[c];
      const int ci = static_cast<int>(c);
      if (!numeric(ci) && distinct(ci) > 1 && distinct(ci) < 12 && name.find("_se") == std::string::npos &&
          name != "reason" && name != "path")
        add_group(ci);
    }
  const int src = data.col("source");
  fig.y = ycols.size() == 1 ? label_of(ycols[0]) : gnuplot::Label{"value", false};
  std::vector<std::string> refs;
  for (const auto& r : kReferences)
    if (data.col(r) >= 0) refs.push_back(r);
  for (const auto& r : hints.references)
    if (data.col(r) >= 0 && std::find(refs.begin(), refs.end(), r) == refs.end()) refs.push_back(r);
  std::map<std::string, std::vector<const std::vector<std::string>*>> groups;
  for (const auto& r : data.rows) {
    std::string key;
    for (int g : group_cols) key += (key.empty() ? "" : ", ") + data.columns[g] + "=" + r[g];
    groups[key].push_back(&r);
  }
  std::vector<gnuplot::Series> curves, references;
  std::set<std::string> drawn_refs;
  int color = 0;
  for (const auto& kv : groups) {
    auto rows = kv.second;
    std::stable_sort(rows.begin(), rows.end(), [&](auto a, auto b) {
      return number_or_nan((*a)[xc]) < number_or_nan((*b)[xc]);
    });
    // The points of column `col` (Monte Carlo rows or the others); flagged theory points go to
    // their own series of open circles and break the line.
    auto emit = [&](std::vector<gnuplot::Series>& into, const std::string& col, bool mc, const std::string& title,
                    gnuplot::Style style, int c) {
      const int yc = data.col(col);
      int se = -1;
      for (const std::string& cand : {col + "_se", std::string("se")})
        if (se < 0) se = data.col(cand);
      gnuplot::Series line{title, mc ? gnuplot::Style::ErrorBars : style, c, {}};
      gnuplot::Series flagged{title + " (" + hints.flag_label + ")", gnuplot::Style::OpenCircles, c, {}};
      std::size_t n = 0;
      for (auto r : rows) {
        if (src >= 0 && ((*r)[src] == "mc") != mc) continue;
        if (conv >= 0 && (*r)[conv] == "0") continue;  // not drawn
        double xv, yv, sv = 0;
        if (!is_number((*r)[xc], xv) || !is_number((*r)[yc], yv)) continue;
        if (se >= 0) is_number((*r)[se], sv);
        if (!mc && flag >= 0 && (*r)[flag] == hints.flag_value) {
          flagged.points.push_back({xv, yv, 0.0});
          line.points.push_back({NAN, NAN, NAN});
          continue;
        }
        line.points.push_back({xv, yv, sv});
        ++n;
      }
      if (mc) line.title += " (MC)";
      if (!flagged.points.empty()) into.push_back(flagged);
      if (n > 0) into.push_back(line);
    };
    for (const auto& y : ycols) {
      std::string t = (ycols.size() > 1 ? y + (kv.first.empty() ? "" : ", ") : "") + kv.first;
      if (t.empty()) t = y;
      emit(curves, y, false, t, gnuplot::Style::Line, color);
      if (src >= 0) emit(curves, y, true, t, gnuplot::Style::Line, color);
      ++color;
    }
    // A reference (Bayes risk, ridge baseline) does not depend on the categorical columns:
    // drawn once per combination of the numeric ones only, on top of the curves.
    std::string ref_key;
    for (int g : group_cols) {
      double v;
      if (is_number((*rows[0])[g], v)) ref_key += (ref_key.empty() ? "" : ", ") + data.columns[g] + "=" + (*rows[0])[g];
    }
    for (const auto& ref : refs)
      if (drawn_refs.insert(ref + "|" + ref_key).second)
        emit(references, ref, false, ref + (ref_key.empty() ? "" : " (" + ref_key + ")"),
             gnuplot::Style::DashedLine, -1);
  }
  fig.series = curves;
  fig.series.insert(fig.series.end(), references.begin(), references.end());
  return fig;
}

}  // namespace saddle
