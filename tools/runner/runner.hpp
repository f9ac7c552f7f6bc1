// Grid runner shared by every subcommand (issue 6): a sweep is a list of continuation chains
// (one chain = the points along the continuation axis for fixed other parameters). The runner
// computes chains in parallel (OpenMP), or across MPI ranks, or for one shard of the grid, writes
// rows in chain order as soon as a prefix of chains is complete (an interrupted run loses
// nothing), resumes a partial file (--resume), reuses cached chains (--cache DIR), shows a
// progress bar on a terminal, and plots the result (--plot FILE.png). The output does not depend
// on the number of threads or ranks: each chain is computed independently and deterministically.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tools/cli/cli_common.hpp"
#include "tools/runner/grid_job.hpp"
#include "tools/plotting/plot.hpp"

namespace saddle {

// Largest --threads: far above any node's cores, small enough that every thread gets its stack.
constexpr int kMaxThreads = 1024;

// Options every subcommand gets from add_run_options (1:1 with the flags).
struct RunOptions {
  std::string out;        // --out FILE ("" = stdout)
  std::string plot;       // --plot FILE.png
  bool resume = false;    // --resume: continue an interrupted --out file
  std::string shard;      // --shard i/N (0-based i); default from SLURM_ARRAY_TASK_ID/COUNT
  int threads = 0;        // --threads N: N cores in total, whatever the nesting (0: one per core)
  bool progress = true;   // --no-progress disables the stderr progress bar
  std::string cache_dir;  // --cache DIR: reuse chains computed before with the same settings
  bool strict = false;    // --strict: stop at the first unconverged point (exit 3)
  PlotOptions plot_options;
};
void add_run_options(CLI::App* sub, RunOptions& r);

// Runs the job according to `r` and writes the CSV (and the plot). Throws InputError for bad
// run options (malformed --shard, --resume without --out, a resume file made differently,
// --threads outside 0..kMaxThreads, a grid above kMaxGridPoints rows, a --plot or --cache path
// that cannot be written), all checked before anything is computed, and when the output cannot be
// written (disk full): the computation stops at once. A chain that throws stops the run: the
// complete chains before it are written, then its error is rethrown (InputError stays InputError,
// with the number of rows kept). Rows are held in memory only for --plot.
// When the columns include `converged`, rows with converged = 0 are counted: the run writes
// every row and then one summary line on stderr, or with --strict throws StrictFailure after the
// rows before and including the first such row. SIGINT/SIGTERM (or the interrupt flag) during the
// run cancel the chains in progress within their next poll (solver/interrupt.hpp): the complete
// chains are written (no timing line, so --resume continues the file) and Interrupted is thrown,
// saying how many rows are left; a signal after the last chain changes nothing. Under MPI every
// rank sends each of its chains with a status (done, not computed, failed) to rank 0, which
// writes, decides the outcome and broadcasts it: every rank returns or throws the same way, and
// the timing line is written only when every row is there.
void run_grid(const GridJob& job, const RunOptions& r);

// SIGINT/SIGTERM for the lifetime of a run (the grid runner, `validate`): a signal sets the
// interrupt flag (solver/interrupt.hpp), so that every long loop stops within a fraction of a
// second; a second signal ends the process at once. Installed only where the signal has no
// handler of its own (the `saddle` program): a host process with its own handler (the Python
// module, whose Ctrl-C sets the interrupt flag) keeps it. The previous handlers come back after.
// Called by the saddle program's main: SIGINT/SIGTERM are the process's own (StopSignals takes
// them over also where they are ignored, as in a script's background job), and a stop that the
// computation cannot notice in time ends the process (run_grid). Never called in a host process
// (the Python module), whose signal settings are kept and which is never ended.
void set_program_process();

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  bool received() const;  // a signal arrived since the constructor

 private:
  static void (*install(int sig))(int);  // the previous handler, or SIG_ERR when left alone
  void (*old_int_)(int);
  void (*old_term_)(int);
};

// A stop that the computation cannot notice in time (one Eigen product of a large draw, one
// long L-BFGS iteration) must not hold up the process: in the saddle program only
// (set_program_process), and when `enabled`, kStopGrace (1.5 s) after SIGINT/SIGTERM a thread
// calls `overdue`, which writes what is complete and says what is left; when it returns true the
// process ends with exit 130 (as the normal path would have), when false (everything already
// written) the normal path goes on. A host process (the Python module) is never ended. The
// run's end (finish(), or the destructor) stops the watchdog; it waits for an `overdue` in progress.
class StopWatchdog {
 public:
  StopWatchdog(bool enabled, std::function<bool()> overdue);
  ~StopWatchdog();
  StopWatchdog(const StopWatchdog&) = delete;
  StopWatchdog& operator=(const StopWatchdog&) = delete;
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Writes "saddle: " + msg and a newline to stderr at once (a stop's last words, from any thread).
void write_stop_message(const std::string& msg);

// A progress bar for a command that is not a grid run (validate): `cases` cases, and the fractions
// of them that the computation reports through current_work() (solver/interrupt.hpp: each case,
// each seed within one) while this object lives on the calling thread. Drawn on stderr when it is
// a terminal and `on`; its line is ended before anything else is printed (end_line, destructor).
class CaseProgress {
 public:
  CaseProgress(std::size_t cases, bool on);
  ~CaseProgress();
  void end_line();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The run of a command of cases (validate): SIGINT/SIGTERM for its lifetime (StopSignals), its
// progress bar (CaseProgress), and the rows of the leading complete cases kept as they complete,
// so that a stop the computation cannot notice in time still writes them (StopWatchdog:
// write_interrupted(rows, complete) writes the table and returns the message). `run(complete,
// on_complete)` is the computation (run_rmt_validation, run_slr_validation with their last two
// arguments). Returns its rows; *complete as run sets it.
template <class Row, class Run, class WriteInterrupted>
std::vector<Row> run_cases(std::size_t n_cases, bool progress_on, std::size_t* complete, const Run& run,
                           const WriteInterrupted& write_interrupted) {
  StopSignals signals;
  CaseProgress progress(n_cases, progress_on);
  std::mutex mu;  // under it: the rows of the complete cases
  std::vector<Row> kept;
  std::size_t kept_cases = 0;
  StopWatchdog watchdog(true, [&] {
    std::lock_guard<std::mutex> lock(mu);
    progress.end_line();
    write_stop_message(write_interrupted(kept, kept_cases));
    return true;
  });
  std::vector<Row> rows = run(complete, [&](const std::vector<Row>& r, std::size_t k) {
    std::lock_guard<std::mutex> lock(mu);
    kept = r;
    kept_cases = k;
  });
  watchdog.finish();
  return rows;
}

// --plot for subcommands that write one table (Monte Carlo, validation, Hermite data).
struct TablePlot {
  std::string png;
  PlotOptions options;
};
void add_plot_options(CLI::App* sub, TablePlot& p);
// Writes the table (to `out`, or stdout) and then, if asked, its figure.
void write_table(const CsvTable& table, const std::string& out, const TablePlot& p,
                 const PlotHints& hints = {});
// The figure alone, of a table already written to `out` (nothing when no --plot was given).
void plot_table(const CsvTable& table, const std::string& out, const TablePlot& p, const PlotHints& hints);

// `saddle merge PART... --out FILE`: joins shard outputs into the file a single run writes.
void register_merge(CLI::App& app);
// `saddle plot CSV --out PNG [...]`: plots an existing CSV.
void register_plot(CLI::App& app);

}  // namespace saddle
