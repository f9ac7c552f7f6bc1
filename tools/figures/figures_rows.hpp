// `saddle figures` inside: the rows of a panel and the three steps that make, tabulate and draw
// them (tools/figures/figures_runs.cpp, tools/figures/figures_table.cpp, tools/figures/figures_draw.cpp); the command
// itself is tools/figures/cmd_figures.cpp, the panel table tools/figures/figures_panels.cpp.
#pragma once
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tools/figures/figures_panels.hpp"

namespace saddle {
namespace figures {

using Params = std::map<std::string, std::string>;

// The whitespace-separated words of s.
std::vector<std::string> split_ws(const std::string& s);
// A finite number spelled exactly by s.
bool to_number(const std::string& s, double& v);

struct Row {  // one row of a panel CSV
  std::string source, series;
  double x = 0, y = 0, se = NAN;
  std::string lambda, alpha;
  int stable = -1;  // 1 stable, 0 RS-unstable, -1 not applicable
  std::string ref;  // reference source the marker is compared with
  double ref_y = NAN, z = NAN;
};

// Runs every subcommand of the panel (in `tmpdir`; a run shared by two entries runs once) and
// collects its rows; `commands` are the runs as shown in the panel CSV's header. A run that
// fails is an InputError (exit 2 of the run: bad input) or a runtime_error, with its message.
struct PanelRuns {
  std::vector<Row> rows;
  std::vector<std::string> commands;
  // Theory points that were computed but did not converge (x, series, lambda; no y): a marker is
  // never compared with a curve interpolated across them.
  std::vector<Row> gaps;
};
PanelRuns run_panel(const Panel& panel, const Params& params, const std::string& tmpdir, bool verbose);

struct Summary {
  std::string name;
  double seconds = 0;
  std::size_t markers = 0, compared = 0, compared_unstable = 0;
  double max_z = 0;
};
// Compares the markers with their references (z), drops replica rows no marker uses, writes the
// panel CSV to `path` and counts the summary.
Summary write_panel_csv(const Panel& panel, const Params& params, std::vector<Row>& rows, const std::vector<Row>& gaps,
                        const std::vector<std::string>& commands, bool quick, const std::string& path);
// The rows of a panel CSV written before (for --redraw).
std::vector<Row> read_panel_csv(const std::string& path);

// Draws the panel's PNG through the one gnuplot driver (tools/plotting/gnuplot.hpp).
void draw_panel(const Panel& panel, const std::vector<Row>& rows, const Params& params, const std::string& png);

}  // namespace figures
}  // namespace saddle
