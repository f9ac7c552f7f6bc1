// Figures of saddle CSVs, drawn by the one gnuplot driver (tools/plotting/gnuplot.hpp): curves for 1-D
// sweeps, one per combination of the other swept parameters that vary (the file's '# sweep:'
// line), theory lines, Monte Carlo points with error bars when a `source` column says mc,
// reference columns such as bayes_risk or error_ridge dashed; heat maps with contour lines for
// 2-D sweeps, optionally of a difference between two values of a category (e.g. test_error of
// softmax minus linear).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "tools/plotting/gnuplot.hpp"

namespace saddle {

struct PlotHints {
  // Swept-parameter columns, for a file without a '# sweep:' line (default: the options of its
  // '# command:' line that name a column).
  std::vector<std::string> params;
  std::vector<std::string> y;           // default y columns (e.g. test_error)
  std::vector<std::string> references;  // dashed reference columns (e.g. bayes_risk)
  std::vector<std::string> series;      // category columns that split curves (e.g. activation)
  std::vector<std::string> not_series;  // columns that never split curves (e.g. a verdict or a note)
  std::vector<std::string> log_axes;    // parameters best shown on a log axis (e.g. gamma)
  // Rows whose flag_column equals flag_value break the theory line and are drawn as open markers
  // titled "(flag_label)" (e.g. rs_stability = unstable: "RS unstable"); the column never splits
  // curves.
  std::string flag_column, flag_value, flag_label;
};

struct PlotOptions {
  std::string x, y, z, by;  // override the automatic choice (columns)
  std::string diff;         // "COL:A-B": plot z of rows with COL=A minus rows with COL=B
  std::string title;
  // How the caller spells these options, for error messages: "--plot-" (--plot on a subcommand:
  // --plot-y, --plot-by) or "--" (`saddle plot`: --y, --by).
  std::string flag_prefix = "--plot-";
  double timeout = gnuplot::kDefaultTimeout;  // seconds gnuplot may take (--plot-timeout)
};

struct CsvData {
  std::vector<std::string> comments;  // '#' lines
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  int col(const std::string& name) const;  // -1 if absent
};
// Largest number of cells (rows x columns) read_csv takes: a 1e6-point grid of 64 columns.
constexpr std::size_t kMaxCsvCells = 64000000;
// Reads a CSV written by saddle; throws InputError if it is not one (no header, ragged rows),
// or not a regular file, or larger than saddle writes (tools/runner/file_io.hpp, kMaxCsvCells).
CsvData read_csv(const std::string& path);

// The header line naming the swept parameter columns, "# sweep: a, b" (written by the runner,
// read by plot_csv: curves are split by every swept column that varies).
std::string sweep_header(const std::vector<std::string>& columns);
// The columns of `counts` (name, number of values) with more than one value, in order.
std::vector<std::string> swept_columns(const std::vector<std::pair<std::string, std::size_t>>& counts);

// The swept parameter columns of `data`: its '# sweep:' line (*from_file = true), else
// hints.params, else the options of its '# command:' line that name a column.
std::vector<std::string> swept_parameters(const CsvData& data, const PlotHints& hints, bool* from_file = nullptr);

// The figure plot_csv draws (axes, curves, styles), without drawing it.
gnuplot::Figure plot_figure(const CsvData& data, const PlotHints& hints, const PlotOptions& opt);

// Writes `png` from the data; throws InputError if gnuplot is missing, fails or runs out of time
// (opt.timeout).
void plot_csv(const CsvData& data, const PlotHints& hints, const PlotOptions& opt,
              const std::string& png);

// What can be checked of a figure before its data exist (InputError otherwise): the columns the
// options name (x, y, z, by, the column of --plot-diff and its COL:A-B form), that there is a y
// column, and, when `sweep` (the swept columns that vary) is given, that a heat map has a second
// axis. plot_figure makes the same checks, with the same messages.
void check_plot_options(const std::vector<std::string>& columns, const std::vector<std::string>& sweep,
                        const PlotHints& hints, const PlotOptions& opt);
// Before computing a table that `png` (empty: no figure) will show: check_plot_options, the
// --plot-timeout, and that gnuplot and a temporary directory are there (gnuplot::check_ready).
void check_plot_request(const std::string& png, const std::vector<std::string>& columns,
                        const std::vector<std::string>& sweep, const PlotHints& hints, const PlotOptions& opt);
// plot_csv after the CSV was written completely: a failure is a LateFailure (exit 4) whose
// message says the CSV is complete (`written`, e.g. "12 rows in 'r.csv'").
void plot_after_output(const CsvData& data, const PlotHints& hints, const PlotOptions& opt, const std::string& png,
                       const std::string& written);

}  // namespace saddle
