// `saddle figures [--quick] [--only NAME] [--set KEY=VALUE] [--out DIR]`: redraws the figures of
// the two papers (SLR arXiv 2509.21936, RMT arXiv 2506.18656), theory and simulation together.
//
// Every panel is a row of the table kPanels below (tools/figures_panels.cpp): its parameters
// (one "key=value" list, with quick-mode overrides) and the runs of existing subcommands that
// produce its curves and markers. A run is this same binary, spawned with an argv array (never a
// shell), writing a temporary CSV; the panel CSV collects the wanted columns of all runs in long
// form (one row per point, `source` = theory / bayes / replica / mc), each Monte Carlo row with
// its z-score against the theory it is compared with, and gnuplot draws the PNG from data files.
#include "tools/cmd_figures.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "tools/cli_common.hpp"
#include "tools/plot.hpp"

extern char** environ;

namespace saddle {
namespace {

using Params = std::map<std::string, std::string>;

// Progress lines on stderr: on a terminal or with --verbose (so a bad-input error stays the only
// stderr line otherwise).
bool g_verbose = false;

std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  std::string t;
  while (in >> t) out.push_back(t);
  return out;
}

bool to_number(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* e = nullptr;
  v = std::strtod(s.c_str(), &e);
  return *e == '\0' && std::isfinite(v);
}

// A parameter value reaches a subcommand as (part of) one argv token: no shell ever sees it, but
// keep it to the characters the subcommands' number and list syntax uses.
void check_value(const std::string& key, const std::string& v) {
  if (v.empty()) throw InputError("figures: empty value for '" + key + "'");
  for (char ch : v)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || std::string(".,:;+-_|").find(ch) != std::string::npos))
      throw InputError("figures: value of '" + key + "' may only hold letters, digits and . , : ; + - _ |");
}

// "k=v k=v" -> map.
Params parse_params(const std::string& text, const std::string& where) {
  Params p;
  for (const auto& tok : split_ws(text)) {
    auto eq = tok.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("figures: bad parameter '" + tok + "' in " + where);
    p[tok.substr(0, eq)] = tok.substr(eq + 1);
  }
  return p;
}

// Replaces {key} by params[key] (and {each} by `each`) in one token.
std::string substitute(const std::string& tok, const Params& p, const std::string& each) {
  std::string out;
  std::size_t i = 0;
  while (i < tok.size()) {
    if (tok[i] == '{') {
      auto close = tok.find('}', i);
      if (close == std::string::npos) throw std::logic_error("figures: unclosed '{' in '" + tok + "'");
      std::string key = tok.substr(i + 1, close - i - 1);
      if (key == "each") {
        out += each;
      } else if (key.rfind("each:", 0) == 0) {
        out += each;
      } else {
        auto it = p.find(key);
        if (it == p.end()) throw std::logic_error("figures: no parameter '" + key + "' for '" + tok + "'");
        out += it->second;
      }
      i = close + 1;
    } else {
      out += tok[i++];
    }
  }
  return out;
}

// The name of the list a run is repeated over ({each:NAME} in its arguments), or "".
std::string each_key(const std::string& args) {
  auto at = args.find("{each:");
  if (at == std::string::npos) return "";
  auto close = args.find('}', at);
  return args.substr(at + 6, close - at - 6);
}

// Series label: {col} takes the row's value of column col (or a parameter).
std::string label_for(const std::string& tmpl, const CsvData& d, const std::vector<std::string>& row, const Params& p,
                      const std::string& each) {
  std::string out;
  std::size_t i = 0;
  while (i < tmpl.size()) {
    if (tmpl[i] == '{') {
      auto close = tmpl.find('}', i);
      std::string key = tmpl.substr(i + 1, close - i - 1);
      int c = d.col(key);
      if (key == "each") out += each;
      else if (c >= 0) out += row[c];
      else if (p.count(key)) out += p.at(key);
      else throw std::logic_error("figures: label '" + tmpl + "' names no column or parameter '" + key + "'");
      i = close + 1;
    } else {
      out += tmpl[i++];
    }
  }
  return out;
}

std::string gp_quote(const std::string& s) {  // a gnuplot single-quoted string: '' is a quote
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') out += "''";
    else if (ch == '\n' || ch == '\r') out += ' ';
    else out += ch;
  }
  return out + "'";
}

// posix_spawn of `prog` with `args` (argv[0] = args[0]); stdout and stderr go to `log`.
int spawn_wait(const std::string& prog, const std::vector<std::string>& args, const std::string& log, bool search_path) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  int rc = search_path ? posix_spawnp(&pid, prog.c_str(), &fa, nullptr, argv.data(), environ)
                       : posix_spawn(&pid, prog.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string tail_of(const std::string& path, std::size_t n) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  return s.size() > n ? s.substr(s.size() - n) : s;
}

struct Row {  // one row of a panel CSV
  std::string source, series;
  double x = 0, y = 0, se = NAN;
  std::string lambda, alpha;
  int stable = -1;  // 1 stable, 0 RS-unstable, -1 not applicable
  std::string ref;  // reference source the marker is compared with
  double ref_y = NAN, z = NAN;
};

std::string opt_num(double v) { return std::isfinite(v) ? fmt(v) : ""; }

// Linear interpolation of the reference curve at x (exact match preferred); NaN outside.
bool reference_at(const std::vector<const Row*>& pts, double x, double& y, double& se, int& stable) {
  for (auto r : pts)
    if (std::fabs(r->x - x) <= 1e-9 * std::max(1.0, std::fabs(x))) {
      y = r->y;
      se = r->se;
      stable = r->stable;
      return true;
    }
  const Row* lo = nullptr;
  const Row* hi = nullptr;
  for (auto r : pts) {
    if (r->x < x && (!lo || r->x > lo->x)) lo = r;
    if (r->x > x && (!hi || r->x < hi->x)) hi = r;
  }
  if (!lo || !hi) return false;
  const double t = (x - lo->x) / (hi->x - lo->x);
  y = lo->y + t * (hi->y - lo->y);
  se = std::isfinite(lo->se) && std::isfinite(hi->se) ? std::max(lo->se, hi->se) : NAN;
  stable = (lo->stable == 0 || hi->stable == 0) ? 0 : std::max(lo->stable, hi->stable);
  return true;
}

void compare_markers(std::vector<Row>& rows) {
  for (auto& m : rows) {
    if (m.ref.empty()) continue;
    std::vector<const Row*> pts;
    for (const auto& r : rows)
      if (r.source == m.ref && r.series == m.series && (r.lambda.empty() || m.lambda.empty() || r.lambda == m.lambda) &&
          (r.alpha.empty() || m.alpha.empty() || r.source == "theory" || r.alpha == m.alpha))
        pts.push_back(&r);
    double y, se;
    int st;
    if (!reference_at(pts, m.x, y, se, st)) continue;
    m.ref_y = y;
    m.stable = st;
    double var = std::isfinite(m.se) ? m.se * m.se : 0.0;
    if (std::isfinite(se)) var += se * se;
    if (var > 0) m.z = (m.y - y) / std::sqrt(var);
  }
}

struct Drawn {
  std::string source, series;
};

// Draws the panel with gnuplot: theory solid (RS-unstable points open circles, the line broken
// there), bayes dashed, replica-at-the-markers' alpha crosses, Monte Carlo filled with error bars.
void draw(const Panel& panel, const std::vector<Row>& rows, const std::string& png, const std::string& tmpdir,
          const Params& params) {
  std::vector<std::string> series_order;
  std::map<std::string, int> color;
  std::vector<std::pair<std::string, std::string>> groups;  // (source, series) in order
  for (const std::string src : {"theory", "bayes", "replica", "mc"})
    for (const auto& r : rows)
      if (r.source == src) {
        if (!color.count(r.series)) color[r.series] = static_cast<int>(color.size());
        if (std::find(groups.begin(), groups.end(), std::make_pair(r.source, r.series)) == groups.end())
          groups.emplace_back(r.source, r.series);
      }
  static const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                  "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
  std::ostringstream gp;
  gp << "set terminal pngcairo size 1000,800 enhanced font 'Sans,13'\n";
  gp << "set output " << gp_quote(png) << "\n";
  gp << "set datafile separator ','\nset grid\nset key below left maxcols 3 font ',10' spacing 1.1\n";
  // Linear axes: the data range plus a margin (markers at the ends stay visible).
  if (!panel.logx) gp << "set autoscale xfix\n";
  if (!panel.logy) gp << "set autoscale yfix\n";
  gp << "set offsets " << (panel.logx ? "0, 0" : "graph 0.03, graph 0.03") << ", "
     << (panel.logy ? "0, 0" : "graph 0.05, graph 0.05") << "\n";
  gp << "set title " << gp_quote(panel.title) << " noenhanced\n";
  // Axis labels are gnuplot enhanced text ({/Symbol n}); only {parameter} is replaced.
  std::string xlabel = panel.xlabel;
  for (const auto& kv : params) {
    const std::string key = "{" + kv.first + "}";
    for (auto at = xlabel.find(key); at != std::string::npos; at = xlabel.find(key))
      xlabel.replace(at, key.size(), kv.second);
  }
  gp << "set xlabel " << gp_quote(xlabel) << "\n";
  gp << "set ylabel " << gp_quote(panel.ylabel) << "\n";
  if (panel.logx) gp << "set logscale x\nset format x '10^{%L}'\n";
  if (panel.logy) gp << "set logscale y\nset format y '10^{%L}'\n";
  std::vector<std::string> cmds;
  int file_no = 0;
  for (const auto& g : groups) {
    std::vector<const Row*> pts;
    for (const auto& r : rows)
      if (r.source == g.first && r.series == g.second) pts.push_back(&r);
    std::stable_sort(pts.begin(), pts.end(), [](const Row* a, const Row* b) { return a->x < b->x; });
    const std::string path = tmpdir + "/draw_" + std::to_string(file_no++) + ".dat";
    const std::string upath = tmpdir + "/draw_" + std::to_string(file_no++) + ".dat";
    std::ofstream f(path), fu(upath);
    f.precision(12);
    fu.precision(12);
    std::size_t nu = 0;
    bool broken = false;
    for (auto r : pts) {
      if (panel.logy && r->y <= 0) continue;
      if (g.first == "theory" && r->stable == 0) {
        fu << r->x << "," << r->y << "\n";
        ++nu;
        if (!broken) f << "\n";
        broken = true;
        continue;
      }
      broken = false;
      f << r->x << "," << r->y << "," << (std::isfinite(r->se) ? r->se : 0.0) << "\n";
    }
    const std::string lc = std::string(" lc rgb '") + palette[color[g.second] % 10] + "'";
    const std::string& s = g.first;
    if (s == "theory") {
      // A curve broken by RS-unstable points also marks its stable points (a lone one stays visible).
      cmds.push_back(gp_quote(path) + " using 1:2 with " + (nu > 0 ? "linespoints pt 7 ps 0.4" : "lines") + " lw 2" +
                     lc + " title " + gp_quote(g.second) + " noenhanced");
      if (nu > 0)
        cmds.push_back(gp_quote(upath) + " using 1:2 with points pt 6 ps 1.1" + lc + " title " +
                       gp_quote(g.second + " (RS unstable)") + " noenhanced");
    } else if (s == "bayes") {
      cmds.push_back(gp_quote(path) + " using 1:2 with lines dt 2 lw 2" + lc + " title " + gp_quote(g.second) +
                     " noenhanced");
    } else if (s == "replica") {
      cmds.push_back(gp_quote(path) + " using 1:2 with points pt 2 ps 1.6" + lc + " title " +
                     gp_quote(g.second + " (replica, finite alpha)") + " noenhanced");
    } else {
      cmds.push_back(gp_quote(path) + " using 1:2:3 with yerrorbars pt 7 ps 0.9" + lc + " title " +
                     gp_quote(g.second + " (simulation)") + " noenhanced");
    }
  }
  if (cmds.empty()) throw std::runtime_error("figures: panel " + panel.name + " has nothing to draw");
  gp << "plot ";
  for (std::size_t i = 0; i < cmds.size(); ++i) gp << (i ? ", \\\n     " : "") << cmds[i];
  gp << "\n";
  const std::string script = tmpdir + "/draw.gp";
  {
    std::ofstream sf(script);
    sf << gp.str();
  }
  const std::string log = tmpdir + "/gnuplot.log";
  int rc = spawn_wait("gnuplot", {"gnuplot", script}, log, true);
  if (rc != 0)
    throw InputError("figures: gnuplot failed for panel " + panel.name + " (install gnuplot-nox): " + tail_of(log, 400));
}

struct Summary {
  std::string name;
  double seconds = 0;
  std::size_t markers = 0, compared = 0, compared_unstable = 0;
  double max_z = 0;
};

Summary make_panel(const Panel& panel, const Params& params, const std::string& out_dir, const std::string& tmpdir,
                   bool quick) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Row> rows;
  std::map<std::vector<std::string>, std::string> done;  // argv -> CSV (a run shared by two entries runs once)
  std::vector<std::string> commands;
  for (const auto& run : panel.runs) {
    std::vector<std::string> eaches{""};
    const std::string ek = each_key(run.args);
    if (!ek.empty()) {
      auto it = params.find(ek);
      if (it == params.end()) throw std::logic_error("figures: no list '" + ek + "' in panel " + panel.name);
      eaches.clear();
      for (double v : parse_sweep(it->second, ek)) eaches.push_back(fmt(v));
    }
    for (const auto& each : eaches) {
      std::vector<std::string> argv{"saddle"};
      for (const auto& tok : split_ws(run.args)) argv.push_back(substitute(tok, params, each));
      if (argv.size() > 1 && argv[1] != "mc") argv.push_back("--no-progress");
      std::string csv;
      auto it = done.find(argv);
      if (it != done.end()) {
        csv = it->second;
      } else {
        csv = tmpdir + "/run_" + std::to_string(done.size()) + ".csv";
        std::vector<std::string> full = argv;
        full.push_back("--out");
        full.push_back(csv);
        std::string shown;
        for (std::size_t i = 0; i < argv.size(); ++i) shown += (i ? " " : "") + argv[i];
        if (g_verbose) std::cerr << "[figures] " << panel.name << ": " << shown << "\n";
        const std::string log = tmpdir + "/run_" + std::to_string(done.size()) + ".log";
        const auto r0 = std::chrono::steady_clock::now();
        int rc = spawn_wait("/proc/self/exe", full, log, false);
        if (g_verbose)
          std::fprintf(stderr, "[figures]   %.1f s\n",
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count());
        if (rc != 0) {
          // One line: the child's own error line when it has one (bad input: exit 2, passed on).
          std::string why = tail_of(log, 600), line;
          std::istringstream lines(why);
          for (std::string l; std::getline(lines, l);)
            if (l.rfind("saddle: error: ", 0) == 0) line = l.substr(15);
          if (line.empty()) {
            for (char& ch : why)
              if (ch == '\n' || ch == '\r') ch = ' ';
            line = why;
          }
          const std::string msg = "figures: panel " + panel.name + ": '" + shown + "' failed (exit " +
                                  std::to_string(rc) + "): " + line;
          if (rc == 2) throw InputError(msg);
          throw std::runtime_error(msg);
        }
        done[argv] = csv;
        commands.push_back(shown);
      }
      const CsvData d = read_csv(csv);
      // x spec: "col", "col*FACTOR" (factor may be a {param}) or "@each".
      std::string xs = substitute(run.x, params, each);
      double factor = 1.0;
      if (xs.find('*') != std::string::npos) {
        if (!to_number(xs.substr(xs.find('*') + 1), factor)) throw std::logic_error("figures: bad x spec " + run.x);
        xs = xs.substr(0, xs.find('*'));
      }
      double each_x = NAN;
      if (xs == "@each" && !to_number(each, each_x)) throw std::logic_error("figures: @each needs numbers");
      const int xc = xs == "@each" ? -1 : d.col(xs);
      const int yc = d.col(run.y);
      const int sc = run.se.empty() ? -1 : d.col(run.se);
      if ((xs != "@each" && xc < 0) || yc < 0 || (!run.se.empty() && sc < 0))
        throw std::logic_error("figures: panel " + panel.name + ": column missing (" + run.x + ", " + run.y + ", " +
                               run.se + ")");
      const int conv = d.col("converged"), stab = d.col("rs_stability"), lam = d.col("lambda"),
                alp = d.col("alpha"), jump = d.col("jump_share"), jump_se = d.col("jump_share_se");
      // Row filter "col=value;col=value".
      std::vector<std::pair<int, std::string>> filters;
      if (!run.filter.empty())
        for (const auto& f : split(run.filter, ';')) {
          auto eq = f.find('=');
          int c = d.col(f.substr(0, eq));
          if (c < 0) throw std::logic_error("figures: filter column missing: " + f);
          filters.emplace_back(c, substitute(f.substr(eq + 1), params, each));
        }
      std::vector<Row> these;
      for (const auto& r : d.rows) {
        bool keep = true;
        for (const auto& f : filters) keep = keep && r[f.first] == f.second;
        if (!keep) continue;
        // A non-converged theory point is not drawn; a Monte Carlo row counts its converged seeds.
        if (conv >= 0 && run.source != "mc" && r[conv] == "0") continue;
        Row row;
        row.source = run.source;
        row.series = label_for(run.series, d, r, params, each);
        std::replace(row.series.begin(), row.series.end(), ',', ';');  // the CSV has no quoting
        double xv, yv;
        if (xc >= 0 ? !to_number(r[xc], xv) : !std::isfinite(xv = each_x)) continue;
        if (!to_number(r[yc], yv)) continue;
        row.x = xv * factor;
        row.y = yv;
        double sv;
        if (sc >= 0 && to_number(r[sc], sv)) row.se = sv;
        if (lam >= 0) row.lambda = r[lam];
        if (alp >= 0 && run.source != "theory") row.alpha = r[alp];
        if (stab >= 0) row.stable = r[stab] == "unstable" ? 0 : 1;
        // Jumps of the proximal minimiser make the zero-temperature replicon infinite (the Hessian
        // form cannot see them): RS is not exact where jump_share is significantly above the QMC
        // noise floor of the Stein form (docs/equations/slr_replica.md (S20a), docs/figures.md).
        double js, jse;
        if (run.jump_floor > 0 && stab >= 0 && jump >= 0 && jump_se >= 0 && to_number(r[jump], js) &&
            to_number(r[jump_se], jse) && js - 2 * jse > run.jump_floor)
          row.stable = 0;
        row.ref = run.ref;
        these.push_back(row);
      }
      // pick=min: per (series, x), keep the row with the lowest y (e.g. the best lambda of a grid).
      if (run.pick == "min") {
        std::map<std::pair<std::string, double>, Row> best;
        for (const auto& r : these) {
          auto key = std::make_pair(r.series, r.x);
          auto b = best.find(key);
          if (b == best.end() || r.y < b->second.y) best[key] = r;
        }
        these.clear();
        for (const auto& kv : best) these.push_back(kv.second);
      }
      // The same (series, x) from a shared run (e.g. bayes_risk repeated per activation): once.
      for (const auto& r : these) {
        bool dup = false;
        for (const auto& o : rows)
          dup = dup || (o.source == r.source && o.series == r.series && o.x == r.x && o.lambda == r.lambda &&
                        o.alpha == r.alpha);
        if (!dup) rows.push_back(r);
      }
    }
  }
  compare_markers(rows);
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
                "markers' finite alpha), mc (simulation; y_se = standard error over seeds/draws); rs_stable: 1/0 "
                "replica-symmetric stability of the theory point, 0 where the replicon is above 1 (rs_stability = "
                "unstable) or, in panels that ask for it, the proximal minimiser jumps (jump_share - 2 se above the "
                "panel's floor) (blank: not applicable); z = (y - reference) / "
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
  table.write_to(out_dir + "/" + panel.name + ".csv");
  draw(panel, rows, out_dir + "/" + panel.name + ".png", tmpdir, params);
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return sum;
}

// --redraw: the PNG again from the panel CSV written before (no computation).
void redraw_panel(const Panel& panel, const Params& params, const std::string& out_dir, const std::string& tmpdir) {
  const CsvData d = read_csv(out_dir + "/" + panel.name + ".csv");
  const int src = d.col("source"), ser = d.col("series"), xc = d.col("x"), yc = d.col("y"), sc = d.col("y_se"),
            st = d.col("rs_stable");
  if (src < 0 || ser < 0 || xc < 0 || yc < 0 || sc < 0 || st < 0)
    throw InputError("figures: '" + out_dir + "/" + panel.name + ".csv' is not a panel CSV");
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
  draw(panel, rows, out_dir + "/" + panel.name + ".png", tmpdir, params);
}

struct FigureOptions {
  bool quick = false;
  bool list = false;
  bool verbose = false;
  bool redraw = false;
  std::vector<std::string> only;
  std::vector<std::string> sets;
  std::string out = "data/figures";
};

void run_figures(const FigureOptions& o) {
  g_verbose = o.verbose || ::isatty(2);
  const auto& panels = figure_panels();
  std::set<std::string> names;
  for (const auto& p : panels) names.insert(p.name);
  for (const auto& n : o.only)
    if (!names.count(n)) throw InputError("figures: no panel '" + n + "' (see --list)");
  std::vector<std::pair<std::string, std::string>> sets;
  for (const auto& s : o.sets) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("figures: --set expects KEY=VALUE, got '" + s + "'");
    check_value(s.substr(0, eq), s.substr(eq + 1));
    sets.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  std::vector<const Panel*> chosen;
  for (const auto& p : panels)
    if (o.only.empty() || std::find(o.only.begin(), o.only.end(), p.name) != o.only.end()) chosen.push_back(&p);
  std::vector<Params> params;
  for (auto p : chosen) {
    Params pp = parse_params(p->params, p->name);
    if (o.quick)
      for (const auto& kv : parse_params(p->quick, p->name + " (quick)")) pp[kv.first] = kv.second;
    params.push_back(pp);
  }
  for (const auto& s : sets) {
    bool used = false;
    for (auto& pp : params)
      if (pp.count(s.first)) {
        pp[s.first] = s.second;
        used = true;
      }
    if (!used) throw InputError("figures: no chosen panel has a parameter '" + s.first + "' (see --list)");
  }
  if (o.list) {
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      std::cout << chosen[i]->name << "\t" << chosen[i]->title << "\n";
      for (const auto& kv : params[i]) std::cout << "    " << kv.first << "=" << kv.second << "\n";
    }
    return;
  }
  ::mkdir(o.out.c_str(), 0755);
  struct stat st;
  if (::stat(o.out.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InputError("figures: cannot create the output directory '" + o.out + "'");
  const char* tmp_env = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp_env && *tmp_env ? tmp_env : "/tmp") + "/saddle_figures_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) throw std::runtime_error("figures: cannot create a temporary directory");
  const std::string tmpdir = buf.data();
  auto cleanup = [&] {  // the directory is ours (mkdtemp): remove what we wrote there
    if (DIR* dir = ::opendir(tmpdir.c_str())) {
      std::vector<std::string> files;
      while (dirent* e = ::readdir(dir)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") files.push_back(tmpdir + "/" + n);
      }
      ::closedir(dir);
      for (const auto& f : files) std::remove(f.c_str());
    }
    ::rmdir(tmpdir.c_str());
  };
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Summary> sums;
  try {
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      if (o.redraw) {
        redraw_panel(*chosen[i], params[i], o.out, tmpdir);
        continue;
      }
      sums.push_back(make_panel(*chosen[i], params[i], o.out, tmpdir, o.quick));
      const auto& s = sums.back();
      if (g_verbose)
        std::fprintf(stderr, "[figures] %s: %.1f s, %zu markers, %zu compared where RS-stable, max |z| = %.2f%s\n",
                   s.name.c_str(), s.seconds, s.markers, s.compared, s.max_z,
                   s.compared_unstable ? (", " + std::to_string(s.compared_unstable) + " at RS-unstable points").c_str()
                                       : "");
    }
  } catch (...) {
    cleanup();
    throw;
  }
  cleanup();
  if (o.redraw) return;
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // summary.csv: one row per panel, the latest run of each (rows of panels not run now are kept).
  const std::vector<std::string> cols{"panel", "seconds", "markers", "compared_rs_stable", "max_abs_z",
                                      "compared_rs_unstable", "mode"};
  std::map<std::string, std::vector<std::string>> latest;
  const std::string summary_path = o.out + "/summary.csv";
  {
    std::ifstream probe(summary_path);
    if (probe) {
      try {
        const CsvData old = read_csv(summary_path);
        if (old.columns == cols)
          for (const auto& r : old.rows) latest[r[0]] = r;
      } catch (const InputError&) {
      }
    }
  }
  for (const auto& s : sums)
    latest[s.name] = {s.name, fmt(std::round(s.seconds * 10) / 10), std::to_string(s.markers),
                      std::to_string(s.compared), fmt(std::round(s.max_z * 100) / 100),
                      std::to_string(s.compared_unstable), o.quick ? "quick" : "full"};
  CsvTable summary(cols);
  summary.setting("columns", "seconds: wall time of the panel's latest run; compared_rs_stable: markers with a z-score "
                             "against an RS-stable (or non-replica) theory point; max_abs_z over those");
  double sum_seconds = 0;
  for (const auto& p : panels) {
    auto it = latest.find(p.name);
    if (it == latest.end()) continue;
    summary.add_row(it->second);
    sum_seconds += std::strtod(it->second[1].c_str(), nullptr);
  }
  summary.setting("sum_of_panel_seconds", fmt(std::round(sum_seconds)));
  summary.write_to(summary_path);
  if (g_verbose) std::fprintf(stderr, "[figures] %zu panels in %.1f s -> %s\n", sums.size(), total, o.out.c_str());
}

}  // namespace

void register_figures(CLI::App& app) {
  auto o = std::make_shared<FigureOptions>();
  CLI::App* sub = app.add_subcommand(
      "figures", "Redraw the figures of the SLR and RMT papers: theory and simulation, one CSV and one PNG per panel");
  sub->add_flag("--quick", o->quick, "Smaller simulations (the test suite's mode, under 2 minutes on 2 cores)");
  sub->add_option("--only", o->only, "Only these panels (repeatable; names from --list)");
  sub->add_option("--set", o->sets, "Override a panel parameter, KEY=VALUE (repeatable; e.g. --set L=10)");
  sub->add_option("--out", o->out, "Output directory")->capture_default_str();
  sub->add_flag("--redraw", o->redraw, "Only redraw the PNGs from the panel CSVs already in --out");
  sub->add_flag("--verbose", o->verbose, "Progress lines on stderr even when it is not a terminal");
  sub->add_flag("--list", o->list, "List the panels and their parameters (after --quick/--set) and exit");
  sub->callback([o] { run_figures(*o); });
}

}  // namespace saddle
