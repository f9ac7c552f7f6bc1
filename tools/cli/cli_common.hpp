// Conventions shared by every `saddle` subcommand: sweep parsing (value, comma list,
// start:stop:count, start:stop:count:log), cartesian grids, solver-option flags, and the CSV
// writer with its '#' header (version, command line, settings). Bad input throws InputError,
// which main() turns into a one-line message and exit code 2.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "solver/curve.hpp"
#include "solver/fixed_point.hpp"
#include "solver/interrupt.hpp"
#include "solver/model_card.hpp"
#include "tools/cli/input_error.hpp"

namespace saddle {

// The fields of `s` between the separators `sep` (n separators give n + 1 fields; "" gives one
// empty field).
std::vector<std::string> split(const std::string& s, char sep);

// Exit codes of `saddle` (README "Errors and exit codes"): 0 ok, 1 a validation disagreement (or
// an internal error), 2 bad input, 3 a point did not converge under --strict, 4 a late failure
// (the CSV is complete, its --plot figure could not be drawn), 130 interrupted (SIGINT) after
// writing every complete chain.
constexpr int kExitOk = 0, kExitValidation = 1, kExitBadInput = 2, kExitStrict = 3, kExitLate = 4,
              kExitInterrupted = 130;

// A failure after the result was written (exit 4): the CSV is complete (the message says where),
// only what came after it (the --plot figure) failed. Everything checkable is checked before
// computing, so this is what only the end can tell: gnuplot failing or running out of time, a
// full disk for the PNG.
struct LateFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Thrown by the runner under --strict at the first unconverged point (exit 3), after the rows
// computed so far are written.
struct StrictFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Interrupted (exit 130) is thrown by the runner after SIGINT: solver/interrupt.hpp.

// Checked size arithmetic: the product of `factors` (counts that multiply into one allocation or
// one loop, e.g. points x replicates), or InputError naming `what` and the size if it exceeds
// `limit`.
double checked_count(std::initializer_list<double> factors, double limit, const std::string& what);

// Largest number of points (CSV rows) one run computes: the grid is counted from the sweep sizes
// before anything is built (check_grid_points), so memory stays bounded on any grid. Larger
// studies are several runs (or --shard over a cluster: each shard is still one run's grid).
constexpr double kMaxGridPoints = 1e6;
// Throws InputError when `points` (a product of sweep sizes) exceeds kMaxGridPoints.
void check_grid_points(double points, const std::string& what = "the grid");
// Product of sweep sizes, checked as above (e.g. check_grid({alphas.size(), lambdas.size()})).
double check_grid(std::initializer_list<std::size_t> sizes);

// Throws InputError (naming `what`) when `path` cannot be written: its directory is missing or
// not writable, or it exists and is not a writable regular file (a directory, FIFO, device or
// socket is refused: tools/runner/file_io.hpp). Creates nothing. "" and "-" (stdout) pass.
void check_writable(const std::string& path, const std::string& what);
// Writes `text` to `path` (stdout when empty or "-"); throws InputError when it cannot be written
// completely (a missing directory, a full disk, a closed stdout).
// Under MPI only rank 0 writes (set_output_rank(false) on the others, tools/saddle.cpp): every
// rank runs a command that is not a grid run (its result is the same), and write_output and the
// plots do nothing on the others, so a table is written once.
// completely (a missing directory, a full disk, a closed stdout). A file is written whole through
// a temporary file renamed onto it (tools/runner/file_io.hpp): a failure leaves it as it was.
void write_output(const std::string& path, const std::string& text);
void set_output_rank(bool writes);
bool output_rank();

// What a swept parameter may take: ParamDomain (solver/model_card.hpp), the one domain type.

// The two most common rules: values > 0 (alpha, gamma, c) and values >= 0 (delta, snr).
inline ParamDomain positive_rule() {
  ParamDomain r;
  r.min = 0.0;
  r.min_inclusive = false;
  return r;
}
inline ParamDomain nonneg_rule() {
  ParamDomain r;
  r.min = 0.0;
  return r;
}

// Parses "x", "a,b,c", "start:stop:count", "start:stop:count:log", or a comma list mixing values and
// ranges ("0,1e-6:1:13:log"). Throws InputError naming
// `name` on malformed text, count < 1, NaN, inf where not allowed, or values out of range.
std::vector<double> parse_sweep(const std::string& text, const std::string& name,
                                const ParamDomain& rules = {});

// Cartesian product; the LAST axis varies fastest (so continuation runs along the last axis).
std::vector<std::vector<double>> cartesian(const std::vector<std::vector<double>>& axes);

// Comma-separated list of names checked against `allowed` (e.g. activations).
std::vector<std::string> parse_names(const std::string& text, const std::string& name,
                                     const std::vector<std::string>& allowed);

// A number for CSV: as printf %.12g in the C locale, whatever the process locale ("inf", "-inf",
// "nan"; tools/cli/number_text.hpp).
std::string fmt(double v);
// True when `text` spells a non-finite number (nan, -nan, inf, -inf, infinity, any case).
bool is_nonfinite_text(const std::string& text);

// Guard of an output row: throws std::runtime_error naming the column when a computed value
// (columns first_output.. of the row) is nan, inf or -inf (in any spelling fmt or printf uses). Input parameters (before first_output) may
// legitimately be inf (nu = inf for max-SLR).
void require_finite(const std::vector<std::string>& row, const std::vector<std::string>& columns,
                    std::size_t first_output, const std::string& where);
// The guard of a row that carries its own converged flag: a converged row must be finite
// (require_finite); a row that says converged = 0 leaves empty the values that could not be
// computed (e.g. the model's values outside its domain), never writing "nan".
void finish_row(std::vector<std::string>& row, const std::vector<std::string>& columns,
                std::size_t first_output, bool converged, const std::string& where);

// Solver flags (--method, --mix, --tol, --max-iter, --anderson-depth, --no-polish) bound 1:1 to
// a SolverOptions struct.
void add_solver_options(CLI::App* sub, SolverOptions& opt, std::string& method_text);
// Validates the parsed solver options (throws InputError) and fills opt.method.
void finish_solver_options(SolverOptions& opt, const std::string& method_text);
// The options' own checks (SolverOptions::is_valid, CurveOptions::is_valid) as bad input:
// InputError naming the flag ("--max-iter: must be in 1..1e6"). A command that sets fields after
// finish_curve_options (--target-se, --max-refine) checks again.
void check_options(const SolverOptions& opt);
void check_options(const CurveOptions& opt);
// "method=anderson mix=0.5 tol=1e-10 ..." for the CSV header.
std::string describe(const SolverOptions& opt);

// The convergence flags of every curve command, next to the CurveOptions they set
// (solver/curve.hpp): --stall-window, --noise-factor, --no-retry, --predictor; --stall-accept (which once made
// a stalled iteration "converged") is refused with the reason. Defaults: the command's own
// CurveOptions.
struct CurveCli {
  int stall_window = 0;
  double noise_factor = 0.1;
  bool no_retry = false;
  std::string predictor;     // --predictor secant|warm (CurveOptions::secant_predictor)
  std::string stall_accept;  // only to refuse the removed flag
  CurveCli() : CurveCli(CurveOptions{}) {}
  explicit CurveCli(const CurveOptions& d)
      : stall_window(d.solver.stall_window), noise_factor(d.noise_factor), no_retry(!d.retry),
        predictor(d.secant_predictor ? "secant" : "warm") {}
};
void add_curve_options(CLI::App* sub, CurveCli& o);
// Validates the flags (InputError) and writes them into copt (copt.solver already set).
void finish_curve_options(const CurveCli& o, CurveOptions& copt);
// The convergence rule as the CSV header and --help state it (the same words in every command).
std::string convergence_rule_text(const CurveOptions& copt);
// The start of each point of a warm continuation, for the CSV header ("predictor=secant (...)").
std::string predictor_text(const CurveOptions& copt);
// The status columns every curve command writes after its own: why the point ended and the
// amplitude of a limit cycle (CurveStatus::reason, amplitude), and their cells.
std::vector<std::string> curve_status_columns();
void push_curve_status(std::vector<std::string>& row, const CurveStatus& s);

// A tidy CSV table built in memory and written only when complete, so a failing run never
// leaves a partial CSV on stdout.
class CsvTable {
 public:
  explicit CsvTable(std::vector<std::string> columns) : columns_(std::move(columns)) {}
  // Free-form settings written as "# key: value" header lines.
  void setting(const std::string& key, const std::string& value) {
    settings_.emplace_back(key, value);
  }
  // Appends a row; its size must equal the number of columns.
  void add_row(std::vector<std::string> row);
  const std::vector<std::string>& columns() const { return columns_; }
  const std::vector<std::pair<std::string, std::string>>& settings() const { return settings_; }
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }
  // Writes "# saddle <version>", "# command: ...", settings, header, rows.
  void write(std::ostream& os) const;
  // The '#' lines and the column header only (what write() puts before the rows).
  void write_header(std::ostream& os) const;
  // To `path`, or stdout if path is empty or "-". Throws InputError if the file can't be opened.
  void write_to(const std::string& path) const;

 private:
  std::vector<std::string> columns_;
  std::vector<std::pair<std::string, std::string>> settings_;
  std::vector<std::vector<std::string>> rows_;
};

// Adds to every option of `app` and its subcommands that takes a value a check rejecting an empty
// value (`--out ''`, `--activation ''`): empty values, lists and file names are bad input. Options
// bound to a number read it with tools/cli/number_text.hpp, whatever the process locale: hexadecimal,
// octal, NaN, a value beyond the type's range (2^64, 1e400) are refused, never converted.
void reject_empty_values(CLI::App& app);

// The full command line of this process (set once by main()).
void set_command_line(int argc, char** argv);
const std::string& command_line();
// The same, as tokens (argv[0] reduced to its basename).
const std::vector<std::string>& command_args();

// Each subcommand module provides one of these, called by main() to add itself to the app.
// Registration functions live in tools/cmd_*.cpp.
void register_slr(CLI::App& app);
void register_rmt(CLI::App& app);
// The `mc` and `validate` groups (tools/commands/cmd_groups.cpp), which hold the per-model simulations.
void register_groups(CLI::App& app);
// " (OpenMP, MPI: no)"-style suffix for --version.
std::string build_features();

}  // namespace saddle
