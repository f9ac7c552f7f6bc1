// `saddle figures [--quick] [--only NAME] [--set KEY=VALUE] [--out DIR]`: redraws the figures of
// the two papers (SLR arXiv 2509.21936, RMT arXiv 2506.18656), theory and simulation together.
//
// Every panel is a row of the table in tools/figures/figures_panels.cpp: its parameters (one "key=value"
// list, with quick-mode overrides) and the runs of existing subcommands that produce its curves
// and markers. This file is the command: options, the chosen panels and their parameters, and
// summary.csv. Per panel: the runs (tools/figures/figures_runs.cpp: this same binary, spawned with an argv
// array, never a shell), the panel CSV in long form with each Monte Carlo row's z-score against
// the theory it is compared with (tools/figures/figures_table.cpp), and the PNG through the one gnuplot
// driver (tools/figures/figures_draw.cpp, tools/plotting/gnuplot.hpp: saddle writes the PNG itself, so no path
// reaches gnuplot).
#include "tools/figures/cmd_figures.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>

#include "tools/cli/cli_common.hpp"
#include "tools/figures/figures_panels.hpp"
#include "tools/figures/figures_rows.hpp"
#include "tools/cli/number_text.hpp"
#include "tools/runner/file_io.hpp"
#include "tools/plotting/gnuplot.hpp"
#include "tools/plotting/plot.hpp"
#include "tools/runner/runner.hpp"
#include "solver/interrupt.hpp"

namespace saddle {
namespace {

using namespace figures;

// Progress lines on stderr: on a terminal or with --verbose (so a bad-input error stays the only
// stderr line otherwise).
bool g_verbose = false;

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
  // Before any panel is computed: its outputs are absent or regular files, gnuplot is there.
  for (const Panel* panel : chosen) {
    const std::string base = o.out + "/" + panel->name;
    if (!o.redraw) file_io::check_output(base + ".csv", "figures", false);
    file_io::check_output(base + ".png", "figures", false);
  }
  if (!o.redraw) file_io::check_output(o.out + "/summary.csv", "figures", false);
  gnuplot::check_ready();
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
  // SIGINT/SIGTERM: the run in progress is stopped, the panels written so far stay, the temporary
  // directory goes, and the message says which panels are left (exit 130).
  StopSignals signals;
  std::size_t done_panels = 0;
  try {
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      check_interrupt();
      const Panel& panel = *chosen[i];
      const std::string base = o.out + "/" + panel.name;
      if (o.redraw) {  // the PNG again from the panel CSV written before (no computation)
        draw_panel(panel, read_panel_csv(base + ".csv"), params[i], base + ".png");
        ++done_panels;
        continue;
      }
      const auto t0 = std::chrono::steady_clock::now();
      PanelRuns runs = run_panel(panel, params[i], tmpdir, g_verbose);
      Summary sum = write_panel_csv(panel, params[i], runs.rows, runs.gaps, runs.commands, o.quick, base + ".csv");
      draw_panel(panel, runs.rows, params[i], base + ".png");
      sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      sums.push_back(sum);
      ++done_panels;
      const auto& s = sums.back();
      if (g_verbose)
        std::fprintf(stderr, "[figures] %s: %.1f s, %zu markers, %zu compared where RS-stable, max |z| = %.2f%s\n",
                   s.name.c_str(), s.seconds, s.markers, s.compared, s.max_z,
                   s.compared_unstable ? (", " + std::to_string(s.compared_unstable) + " at RS-unstable points").c_str()
                                       : "");
    }
  } catch (const Interrupted&) {
    cleanup();
    std::string left;
    for (std::size_t i = done_panels; i < chosen.size(); ++i) left += (left.empty() ? "" : ", ") + chosen[i]->name;
    throw Interrupted("figures: interrupted: " + std::to_string(done_panels) + " of " + std::to_string(chosen.size()) +
                      " panels " + (o.redraw ? "redrawn in '" : "written to '") + o.out + "' (summary.csv not updated); not drawn: " + left);
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
    if (file_io::is_regular(summary_path)) {
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
    double secs = 0.0;
    if (parse_real(it->second[1], &secs).empty() && std::isfinite(secs)) sum_seconds += secs;
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

