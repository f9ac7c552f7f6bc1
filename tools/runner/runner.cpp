// Grid runner: chains in parallel, ordered incremental output, resume, cache, shards, MPI,
// progress bar, plots (the files it reads and writes: tools/runner/grid_files.hpp; `saddle merge` and
// `saddle plot`: tools/commands/cmd_merge.cpp).
#include "tools/runner/runner.hpp"

#include <omp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#ifdef SADDLE_HAVE_MPI
#include <mpi.h>
#endif

#include "saddle_version.hpp"
#include "solver/interrupt.hpp"
#include "solver/parallel.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/runner/csv.hpp"
#include "tools/runner/file_io.hpp"
#include "tools/runner/grid_files.hpp"
#include "tools/cli/number_text.hpp"

namespace saddle {
namespace {

using namespace grid_files;

// SIGINT/SIGTERM during a run: the signal number, 0 when none arrived.
volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_stop_signal(int sig) {
  g_signal = sig;
  request_interrupt();        // the chains in progress stop at their next poll (lock-free atomic)
  std::signal(sig, SIG_DFL);  // a second signal ends the process at once
}

// Whether the run was asked to stop (a signal, or the front end's interrupt flag: Python's Ctrl-C).
bool stopping() { return g_signal != 0 || interrupt_requested(); }
// How long a stop may wait for the chains in progress to notice it (run_grid's watchdog).
constexpr std::chrono::milliseconds kStopGrace{1500};
// Set by the saddle program's main (set_program_process): the signals are the process's own.
std::atomic<bool> g_program{false};

// The progress display: points done, counting the parts of the chains in progress (WorkMeter,
// solver/interrupt.hpp: a curve's solves, a simulation's seeds), redrawn a few times a second on
// a terminal by a thread of its own, with the rate and an estimate of the time left; the
// process-wide counters (progress_counters(), which the Python module reports) follow it.
class Progress {
 public:
  // sizes: the rows of each chain still to compute (slot i), total: their sum.
  Progress(std::vector<std::size_t> sizes, std::size_t total, bool on, const char* unit = "points",
           const char* rate_unit = "pts")
      : unit_(unit), rate_unit_(rate_unit), sizes_(std::move(sizes)), total_(total), on_(on && ::isatty(2)),
        meters_(sizes_.size()),
        active_(sizes_.size(), 0) {
    t0_ = std::chrono::steady_clock::now();
    progress_counters().done = 0;
    progress_counters().total = total;
    thread_ = std::thread([this] { loop(); });
  }
  ~Progress() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
    end_line();
  }
  // Chain slot i starts on this thread: its meter receives the parts done.
  WorkMeter* begin(std::size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    meters_[i].reset();
    active_[i] = 1;
    running_.push_back(i);
    return &meters_[i];
  }
  // Chain slot i ended (finished with `points` rows, or cancelled with 0).
  void end(std::size_t i, std::size_t points) {
    std::lock_guard<std::mutex> lock(mu_);
    if (active_[i]) {
      active_[i] = 0;
      running_.erase(std::find(running_.begin(), running_.end(), i));
    }
    finished_ += points;
    publish(false);
  }
  // Ends the bar's line, so that what follows on stderr starts on a line of its own.
  void end_line() {
    std::lock_guard<std::mutex> lock(mu_);
    if (drawn_) std::fputs("\n", stderr);
    drawn_ = false;
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!quit_) {
      cv_.wait_for(lock, std::chrono::milliseconds(250));
      if (!quit_) publish(true);
    }
  }
  // Under mu_: updates the counters and, on a terminal, redraws (at most 4 times a second).
  void publish(bool tick) {
    double done = static_cast<double>(finished_);
    for (std::size_t i : running_) done += meters_[i].done() * static_cast<double>(sizes_[i]);
    const std::size_t d = std::min(total_, static_cast<std::size_t>(done));
    progress_counters().done = d;
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!tick && d < total_ && now - last_draw_ < std::chrono::milliseconds(250)) return;
    last_draw_ = now;
    const double el = std::chrono::duration<double>(now - t0_).count();
    const double rate = el > 0 ? done / el : 0.0;
    const int w = 30, fill = total_ ? static_cast<int>(w * std::min(1.0, done / total_)) : w;
    char left[48] = "";
    if (rate > 0 && d < total_) {
      const double secs = (total_ - done) / rate;
      if (secs < 120) std::snprintf(left, sizeof left, "  %.0f s left", secs);
      else if (secs < 7200) std::snprintf(left, sizeof left, "  %.0f min left", secs / 60);
      else std::snprintf(left, sizeof left, "  %.1f h left", secs / 3600);
    }
    std::fprintf(stderr, "\r[%s%s] %zu/%zu %s  %.3g %s/s%s\033[K", std::string(fill, '#').c_str(),
                 std::string(w - fill, '.').c_str(), d, total_, unit_, rate, rate_unit_, left);
    std::fflush(stderr);
    drawn_ = true;
    if (d >= total_) {
      std::fputs("\n", stderr);
      drawn_ = false;
    }
  }
  const char *unit_, *rate_unit_;
  std::vector<std::size_t> sizes_;
  std::size_t total_, finished_ = 0;
  bool on_, quit_ = false, drawn_ = false;
  std::vector<WorkMeter> meters_;
  std::vector<char> active_;
  std::vector<std::size_t> running_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  std::chrono::steady_clock::time_point t0_, last_draw_;
};

}  // namespace

struct CaseProgress::Impl {
  Progress bar;
  WorkMeter* meter;
  WorkScope scope;
  Impl(std::size_t cases, bool on)
      : bar({cases}, cases, on, "cases", "cases"), meter(bar.begin(0)), scope(WorkShare{meter, 1.0}) {}
};
CaseProgress::CaseProgress(std::size_t cases, bool on) : impl_(std::make_unique<Impl>(cases, on)) {}
CaseProgress::~CaseProgress() = default;
void CaseProgress::end_line() { impl_->bar.end_line(); }

StopSignals::StopSignals() {
  g_signal = 0;
  old_int_ = install(SIGINT);
  old_term_ = install(SIGTERM);
}
StopSignals::~StopSignals() {
  if (old_int_ != SIG_ERR) std::signal(SIGINT, old_int_);
  if (old_term_ != SIG_ERR) std::signal(SIGTERM, old_term_);
}
bool StopSignals::received() const { return g_signal != 0; }

struct StopWatchdog::Impl {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;  // under mu: the run has ended
  std::thread thread;
};
StopWatchdog::StopWatchdog(bool enabled, std::function<bool()> overdue) : impl_(std::make_unique<Impl>()) {
  if (!enabled || !g_program) return;
  Impl* w = impl_.get();
  w->thread = std::thread([w, overdue = std::move(overdue)] {
    try {
      std::unique_lock<std::mutex> wl(w->mu);
      // A signal handler cannot notify: the signal is polled, the end of the run is notified.
      while (!w->done && g_signal == 0) w->cv.wait_for(wl, std::chrono::milliseconds(50));
      if (w->done || w->cv.wait_for(wl, kStopGrace, [w] { return w->done; })) return;
      wl.unlock();
      if (overdue()) std::_Exit(kExitInterrupted);
    } catch (...) {  // nothing may leave a thread: the normal path stops the run
    }
  });
}
void StopWatchdog::finish() {
  {
    std::lock_guard<std::mutex> l(impl_->mu);
    impl_->done = true;
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}
StopWatchdog::~StopWatchdog() { finish(); }

void write_stop_message(const std::string& msg) {
  const std::string line = "saddle: " + msg + "\n";
  if (::write(2, line.data(), line.size()) < 0) {
  }
}
void set_program_process() { g_program = true; }
void (*StopSignals::install(int sig))(int) {
  // The disposition is read without changing it: reading it by setting SIG_DFL (std::signal) left
  // a window in which a signal meant for the host's handler (the Python module's SIGTERM guard)
  // ended the process before its cleanup.
  struct sigaction old {};
  if (::sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO)) return SIG_ERR;
  void (*prev)(int) = old.sa_handler;
  // SIG_IGN: a background job of a script (the program only: a host that ignores a signal, e.g. a
  // Python script's SIGTERM, keeps ignoring it).
  if (prev == SIG_DFL || (prev == SIG_IGN && g_program)) {
    std::signal(sig, on_stop_signal);
    return prev;
  }
  return SIG_ERR;  // not ours to replace
}

namespace {
void add_plot_flags(CLI::App* sub, std::string& png, PlotOptions& o) {
  sub->add_option("--plot", png, "Also draw a PNG figure of the result (gnuplot; absent or a regular file, not --out)")->group("Output");
  sub->add_option("--plot-x", o.x, "Plot: x column (default: the longest sweep)")->group("Output");
  sub->add_option("--plot-y", o.y, "Plot: y column(s), comma-separated")->group("Output");
  sub->add_option("--plot-z", o.z, "Plot: heat-map column of a 2-D sweep (or colA-colB)")->group("Output");
  sub->add_option("--plot-by", o.by, "Plot: second axis of a 2-D heat map")->group("Output");
  sub->add_option("--plot-diff", o.diff, "Plot: 'COL:A-B' draws z of rows with COL=A minus rows with COL=B")
      ->group("Output");
  sub->add_option("--plot-title", o.title, "Plot: title")->group("Output");
  sub->add_option("--plot-timeout", o.timeout,
                  "Plot: seconds gnuplot may take, in (0, 86400]; then it is stopped and saddle exits with code 4 "
                  "(the CSV is complete)")
      ->capture_default_str()
      ->group("Output");
}
}  // namespace

void add_plot_options(CLI::App* sub, TablePlot& p) { add_plot_flags(sub, p.png, p.options); }

void write_table(const CsvTable& table, const std::string& out, const TablePlot& p, const PlotHints& hints) {
  table.write_to(out);
  plot_table(table, out, p, hints);
}

void plot_table(const CsvTable& table, const std::string& out, const TablePlot& p, const PlotHints& hints) {
  if (p.png.empty()) return;
  CsvData data;
  data.comments.push_back("# saddle");
  data.columns = table.columns();
  data.rows = table.rows();
  plot_after_output(data, hints, p.options, p.png,
                    std::to_string(data.rows.size()) + " rows " +
                        (out.empty() || out == "-" ? std::string("on stdout") : "in '" + out + "'"));
}

void add_run_options(CLI::App* sub, RunOptions& r) {
  sub->add_option("--out", r.out, "Write the CSV to FILE (rows appended as chains finish)")->group("Output");
  add_plot_flags(sub, r.plot, r.plot_options);
  sub->add_flag("--resume", r.resume, "Skip the points already in --out (same settings required)")->group("Run");
  sub->add_option("--shard", r.shard,
                  "Compute shard i/N of the grid (0-based; default from SLURM_ARRAY_TASK_ID/COUNT)")->group("Run");
  sub->add_option("--threads", r.threads,
                  "Cores in total, 0..1024, whatever the nesting: chains, starts, replicates and seeds share "
                  "one team of threads (0: one per core, or OMP_NUM_THREADS)")
      ->group("Run");
  sub->add_flag("!--no-progress", r.progress, "No progress bar on stderr")->group("Run");
  sub->add_option("--cache", r.cache_dir, "Cache directory for computed chains")->group("Run");
  sub->add_flag("--strict", r.strict, "Stop at the first point that did not converge (exit code 3)")
      ->group("Run");
}

namespace {
// How a run ended, the same on every MPI rank (rank 0 decides and tells the others).
enum Outcome : int { kDone = 0, kRuntimeError = 1, kInputError = 2, kStrict = 3, kStopped = 130 };

#ifdef SADDLE_HAVE_MPI
// A chain's result sent by an MPI rank to rank 0: its index, its status and its text (the rows,
// or the error message).
enum ChainStatus : unsigned long long { kChainDone = 0, kChainSkipped = 1, kChainInputError = 2, kChainError = 3 };
#endif

// Throws on a rank other than 0 the exception of the outcome that rank 0 reported (its message is
// not shown: only rank 0 prints, tools/saddle.cpp).
[[noreturn]] void throw_outcome(int code) {
  if (code == kInputError) throw InputError("(reported by rank 0)");
  if (code == kStrict) throw StrictFailure("(reported by rank 0)");
  if (code == kStopped) throw Interrupted("(reported by rank 0)");
  throw std::runtime_error("(reported by rank 0)");
}
}  // namespace

void run_grid(const GridJob& job, const RunOptions& r) {
  const auto t0 = std::chrono::steady_clock::now();
  // ---- every run option is checked before anything is computed or written ----
  if (r.threads < 0 || r.threads > kMaxThreads)
    throw InputError("--threads: must be in 0.." + std::to_string(kMaxThreads) + " (0: one per core)");
  if (r.threads > 0) omp_set_num_threads(r.threads);
  const Shard sh = parse_shard(r.shard);
  if (r.resume && (r.out.empty() || r.out == "-")) throw InputError("--resume needs --out FILE");
  if (static_cast<std::size_t>(sh.count) > std::max<std::size_t>(job.chains.size(), 1))
    throw InputError("--shard: " + std::to_string(sh.count) + " shards for " +
                     std::to_string(job.chains.size()) + " chains (at most one shard per chain)");
  std::size_t total_rows = 0;
  for (const Chain& c : job.chains) total_rows += c.size;
  check_grid_points(static_cast<double>(total_rows));
  // Outputs (tools/runner/file_io.hpp): absent or regular files, --plot not the --out file; the figure's
  // columns, gnuplot and a temporary directory before anything is computed.
  check_writable(r.out, "--out");
  if (!r.plot.empty()) {
    file_io::check_output(r.plot, "--plot", false);
    file_io::check_distinct(r.plot, "--plot", r.out, "--out");
  }
  check_plot_request(r.plot, job.columns, job.sweep, job.plot, r.plot_options);
  const ChainCache cache(r.cache_dir, job);  // creates the directory, or refuses
  int rank = 0, nranks = 1;
#ifdef SADDLE_HAVE_MPI
  int mpi_on = 0;
  MPI_Initialized(&mpi_on);
  if (mpi_on) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  }
#endif
  // Chains of this shard: a contiguous block, so shards concatenate to the single-run order.
  const std::size_t C = job.chains.size();
  const std::size_t lo = C * sh.index / sh.count, hi = C * (sh.index + 1) / sh.count;
  const std::vector<std::string> header = header_lines(job, sh, lo, hi);
  std::size_t shard_rows = 0;
  for (std::size_t c = lo; c < hi; ++c) shard_rows += job.chains[c].size;

  // ---- rank 0: the resumed file and the output stream (header + kept rows), then appended
  // chain by chain. A failure here is told to the other ranks before they compute anything. ----
  ResumeState kept;
  kept.first = lo;
  std::unique_ptr<std::ofstream> file;
  std::ostream* os = &std::cout;
  const std::string where = !r.out.empty() && r.out != "-" ? "'" + r.out + "'" : std::string("stdout");
  std::string setup_error;
  if (rank == 0) {
    try {
      if (r.resume) {
        std::ifstream probe(r.out);
        if (probe) kept = read_resume(r.out, header, job, lo, hi);
      }
      if (!r.out.empty() && r.out != "-") {
        file = std::make_unique<std::ofstream>(r.out, std::ios::trunc);
        if (!*file) throw InputError("--out: cannot open '" + r.out + "' for writing");
        os = file.get();
      }
      for (const auto& h : header) *os << h << "\n";
      for (const auto& l : kept.rows) *os << l << "\n";
      os->flush();
      if (!*os) throw InputError("cannot write the output to " + where + " (disk full or closed?)");
    } catch (const InputError& e) {
      setup_error = e.what();
    }
  }
  std::size_t first = kept.first;  // first chain still to compute
#ifdef SADDLE_HAVE_MPI
  if (nranks > 1) {
    unsigned long long f[2] = {first, setup_error.empty() ? 0ULL : 1ULL};
    MPI_Bcast(f, 2, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    first = static_cast<std::size_t>(f[0]);
    if (f[1] != 0 && rank != 0) throw_outcome(kInputError);
  }
#endif
  if (!setup_error.empty()) throw InputError(setup_error);

  // Rows are kept in memory only for the plot; otherwise counted.
  const bool keep_rows = !r.plot.empty();
  std::vector<std::string> all_lines;
  std::size_t written = kept.rows.size();
  bool write_failed = false;
  int conv_col = -1;
  for (std::size_t j = 0; j < job.columns.size(); ++j)
    if (job.columns[j] == "converged") conv_col = static_cast<int>(j);
  auto unconverged = [&](const std::string& line) {
    std::vector<std::string> fields;
    return conv_col >= 0 && parse_csv_record(line, fields) && static_cast<std::size_t>(conv_col) < fields.size() &&
           fields[conv_col] == "0";
  };
  std::size_t n_unconverged = 0;
  for (const auto& l : kept.rows) n_unconverged += unconverged(l);
  if (keep_rows) all_lines = std::move(kept.rows);
  kept.rows.clear();
  kept.rows.shrink_to_fit();
  std::string strict_row;  // under --strict: the first unconverged row written
  std::atomic<bool> stop{false};
  StopSignals signals;
  std::vector<std::size_t> sizes;
  std::size_t todo_points = 0;
  for (std::size_t c = first; c < hi; ++c) {
    sizes.push_back(job.chains[c].size);
    todo_points += job.chains[c].size;
  }
  Progress progress(sizes, todo_points, r.progress && rank == 0);

  // Chains this rank computes: round-robin over ranks.
  std::vector<std::size_t> mine;
  for (std::size_t c = first; c < hi; ++c)
    if (static_cast<int>((c - first) % nranks) == rank) mine.push_back(c);
  std::vector<std::vector<std::string>> done(hi - first);
  std::vector<char> ready(hi - first, 0);
  std::size_t next_to_write = first;
  std::mutex mu;
  auto flush_prefix = [&] {  // under mu, rank 0: write the finished prefix in chain order
    while (next_to_write < hi && ready[next_to_write - first] && strict_row.empty() && !write_failed) {
      for (const auto& l : done[next_to_write - first]) {
        *os << l << "\n";
        ++written;
        if (keep_rows) all_lines.push_back(l);
        if (unconverged(l)) {
          ++n_unconverged;
          if (r.strict) {
            strict_row = l;
            stop = true;
            break;
          }
        }
      }
      done[next_to_write - first].clear();
      done[next_to_write - first].shrink_to_fit();
      ++next_to_write;
    }
    os->flush();
    if (!*os && !write_failed) {  // disk full, closed pipe: stop computing what cannot be written
      write_failed = true;
      stop = true;
    }
  };
  auto stopped_message = [&] {
    return "interrupted: " + std::to_string(written) + " of " + std::to_string(shard_rows) + " rows written to " +
           where + " (complete chains only); " + std::to_string(shard_rows - written) +
           (file ? " rows left: run the same command with --resume to compute them" : " rows were not computed");
  };
  // A chain that does not poll the interrupt flag for a long time must not hold up a stop: in a
  // single process, kStopGrace after a signal the watchdog writes the complete chains, says what
  // is left and ends the process (exit 130), as the normal path would have. (Under MPI the ranks
  // stop as they poll.)
  StopWatchdog watchdog(nranks == 1, [&] {
    std::lock_guard<std::mutex> lock(mu);
    // Every chain already written, or a write error: the normal path reports it.
    if (next_to_write >= hi || write_failed) return false;
    flush_prefix();
    progress.end_line();
    write_stop_message(stopped_message());
    return true;
  });
  // Chains are tasks of the one thread team (solver/parallel.hpp); the solves inside a chain
  // (the curve driver's replicates, a trainer's seeds) become tasks of the same team. A chain
  // that throws stops the run like an interrupt: no new chain starts, the complete prefix is
  // written, and the error of the lowest failing chain is reported. A signal sets the interrupt
  // flag: the chains in progress stop at their next poll and are dropped.
  FirstError error;
  parallel_for(mine.size(), [&](std::size_t k) {
    const std::size_t c = mine[k];
    if (stop || stopping() || error.after_error(c)) return;  // --strict, a signal, an error, a full disk
    std::vector<std::string> lines;
    WorkMeter* meter = progress.begin(c - first);
    WorkScope scope(WorkShare{meter, 1.0});
    try {
      check_interrupt();
      if (!cache.load(job.chains[c].key, job.chains[c].size, lines)) {
        auto rows = job.run_chain(c);
        check_interrupt();  // a chain cut short by an interrupt is not written
        lines.clear();
        for (const auto& row : rows) {
          if (row.size() != job.columns.size())
            throw std::logic_error("chain row has the wrong number of fields");
          lines.push_back(join_row(row));
        }
        if (lines.size() != job.chains[c].size) throw std::logic_error("chain produced the wrong number of rows");
        cache.store(job.chains[c].key, lines);
      }
    } catch (...) {
      progress.end(c - first, 0);
      error.record(c);
      return;
    }
    std::lock_guard<std::mutex> lock(mu);
    done[c - first] = std::move(lines);
    ready[c - first] = 1;
    progress.end(c - first, job.chains[c].size);
    if (rank == 0) flush_prefix();
  });
  watchdog.finish();

  // ---- the chains of the other ranks reach rank 0, each with its status ----
  std::string error_text;  // rank 0: the message of the lowest failing chain
  int error_kind = kDone;
  std::size_t error_chain = hi;
  bool remote_skipped = false;
  auto local_error = [&] {
    if (!error.failed()) return;
    try {
      std::rethrow_exception(error.error());
    } catch (const InputError& e) {
      error_kind = kInputError;
      error_text = e.what();
    } catch (const Interrupted&) {
      error_kind = kStopped;
    } catch (const std::bad_alloc&) {
      error_kind = kRuntimeError;
      error_text = "out of memory (reduce the grid or the sizes)";
    } catch (const std::exception& e) {
      error_kind = kRuntimeError;
      error_text = e.what();
    } catch (...) {
      error_kind = kRuntimeError;
      error_text = "internal error (an exception of unknown type)";
    }
    error_chain = error.index();
  };
  local_error();
#ifdef SADDLE_HAVE_MPI
  if (nranks > 1) {
    if (rank != 0) {
      for (std::size_t c : mine) {
        unsigned long long head[3] = {c, kChainDone, 0};
        std::string blob;
        if (ready[c - first]) {
          for (const auto& l : done[c - first]) blob += l + "\n";
        } else if (c == error_chain && error_kind != kStopped) {
          head[1] = error_kind == kInputError ? kChainInputError : kChainError;
          blob = error_text;
        } else {
          head[1] = kChainSkipped;
        }
        head[2] = blob.size();
        MPI_Send(head, 3, MPI_UNSIGNED_LONG_LONG, 0, 1, MPI_COMM_WORLD);
        if (!blob.empty()) MPI_Send(&blob[0], static_cast<int>(blob.size()), MPI_CHAR, 0, 2, MPI_COMM_WORLD);
      }
    } else {
      for (std::size_t remaining = (hi - first) - mine.size(); remaining > 0; --remaining) {
        MPI_Status st;
        unsigned long long head[3];
        MPI_Recv(head, 3, MPI_UNSIGNED_LONG_LONG, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
        std::string blob(static_cast<std::size_t>(head[2]), '\0');
        if (head[2] > 0)
          MPI_Recv(&blob[0], static_cast<int>(head[2]), MPI_CHAR, st.MPI_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const std::size_t idx = static_cast<std::size_t>(head[0]);
        if (head[1] == kChainDone) {
          std::istringstream in(blob);
          std::string l;
          std::vector<std::string> lines;
          while (std::getline(in, l)) lines.push_back(l);
          std::lock_guard<std::mutex> lock(mu);
          done[idx - first] = std::move(lines);
          ready[idx - first] = 1;
          progress.end(idx - first, job.chains[idx].size);
          flush_prefix();
        } else if (head[1] == kChainSkipped) {
          remote_skipped = true;
        } else if (idx < error_chain) {
          error_chain = idx;
          error_kind = head[1] == kChainInputError ? kInputError : kRuntimeError;
          error_text = blob;
        }
      }
    }
  }
#endif

  // ---- rank 0 decides how the run ended and tells the other ranks ----
  int outcome = kDone;
  std::string message;
  if (rank == 0) {
    {
      std::lock_guard<std::mutex> lock(mu);
      flush_prefix();  // every complete chain (up to the failing row under --strict)
    }
    const bool complete = next_to_write >= hi && strict_row.empty();
    const std::string file_hint = file && written > 0 ? " (--resume continues after a fix)" : "";
    if (write_failed) {
      outcome = kInputError;
      message = "cannot write the output to " + where + " (disk full or closed?); " + std::to_string(written) +
                " rows were written before";
    } else if (!complete && (stopping() || remote_skipped || error_kind == kStopped)) {
      outcome = kStopped;
      message = stopped_message();
    } else if (error_kind == kInputError || error_kind == kRuntimeError) {
      outcome = error_kind;
      message = error_text + "; " + std::to_string(written) + " complete rows written to " + where + file_hint;
    } else if (!strict_row.empty()) {
      outcome = kStrict;
      message = "--strict: a point did not converge (row: " + strict_row + "); " + std::to_string(written) +
                " rows written to " + where;
    } else {
      // Every chain is written (a signal that came after the last chain changes nothing).
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      *os << kTimingPrefix << " " << written << " rows, " << format_fixed(secs, 3) << " s, threads="
          << omp_get_max_threads() << ", ranks=" << nranks << "\n";
      os->flush();
      if (!*os) {
        outcome = kInputError;
        message = "cannot write the output to " + where + " (disk full or closed?)";
      }
    }
    if (file) file->close();
  }
#ifdef SADDLE_HAVE_MPI
  if (nranks > 1) {
    MPI_Bcast(&outcome, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank != 0) {
      if (outcome != kDone) throw_outcome(outcome);
      return;
    }
  }
#endif
  progress.end_line();
  if (outcome == kInputError) throw InputError(message);
  if (outcome == kRuntimeError) throw std::runtime_error(message);
  if (outcome == kStrict) throw StrictFailure(message);
  if (outcome == kStopped) throw Interrupted(message);
  if (n_unconverged > 0)
    std::cerr << "saddle: warning: " << n_unconverged << " of " << written
              << " points did not converge (converged = 0 in their rows; --strict stops at the first)\n";
  if (!r.plot.empty()) {
    CsvData data;
    data.comments.assign(header.begin(), header.end() - 1);
    data.columns = job.columns;
    for (const auto& l : all_lines) {
      std::vector<std::string> fields;
      parse_csv_record(l, fields);  // written by join_row above: always a record
      data.rows.push_back(std::move(fields));
    }
    plot_after_output(data, job.plot, r.plot_options, r.plot,
                      std::to_string(written) + " rows " + (file ? "in " + where : std::string("on stdout")));
  }
}

}  // namespace saddle
