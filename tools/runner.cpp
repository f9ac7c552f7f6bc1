// Grid runner: chains in parallel, ordered incremental output, resume, cache, shards, MPI,
// progress bar, plots (the files it reads and writes: tools/grid_files.hpp; `saddle merge` and
// `saddle plot`: tools/cmd_merge.cpp).
#include "tools/runner.hpp"

#include <omp.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
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

#ifdef SADDLE_HAVE_MPI
#include <mpi.h>
#endif

#include "saddle_version.hpp"
#include "solver/interrupt.hpp"
#include "solver/parallel.hpp"
#include "tools/cli_common.hpp"
#include "tools/file_io.hpp"
#include "tools/grid_files.hpp"

namespace saddle {
namespace {

using namespace grid_files;

// SIGINT/SIGTERM during run_grid: the signal number, 0 when none arrived.
volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_stop_signal(int sig) {
  g_signal = sig;
  request_interrupt();        // the chains in progress stop at their next poll (lock-free atomic)
  std::signal(sig, SIG_DFL);  // a second signal ends the process at once
}

// Installs the handler for the lifetime of a run and restores the previous one. Only where the
// signal has no handler of its own (the `saddle` program): a host process with its own handler
// (the Python module: Python's SIGINT handler raises KeyboardInterrupt through the interrupt flag,
// solver/interrupt.hpp) keeps it.
class StopSignals {
 public:
  StopSignals() {
    g_signal = 0;
    old_int_ = install(SIGINT);
    old_term_ = install(SIGTERM);
  }
  ~StopSignals() {
    if (old_int_ != SIG_ERR) std::signal(SIGINT, old_int_);
    if (old_term_ != SIG_ERR) std::signal(SIGTERM, old_term_);
  }

 private:
  // Returns the previous handler, or SIG_ERR when the signal was left alone.
  static void (*install(int sig))(int) {
    void (*prev)(int) = std::signal(sig, SIG_DFL);
    if (prev == SIG_DFL || prev == SIG_IGN) {  // SIG_IGN: a background job of a script
      std::signal(sig, on_stop_signal);
      return prev;
    }
    std::signal(sig, prev);  // not ours to replace
    return SIG_ERR;
  }
  void (*old_int_)(int);
  void (*old_term_)(int);
};

class Progress {
 public:
  Progress(std::size_t total, bool on) : total_(total), on_(on && ::isatty(2)) {
    t0_ = std::chrono::steady_clock::now();
    progress_counters().done = 0;
    progress_counters().total = total;
  }
  void advance(std::size_t n) {
    done_ += n;
    progress_counters().done = done_;
    if (!on_) return;
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    double rate = el > 0 ? done_ / el : 0.0;
    double left = rate > 0 ? (total_ - done_) / rate : 0.0;
    int w = 30, fill = total_ ? static_cast<int>(w * double(done_) / total_) : w;
    std::fprintf(stderr, "\r[%s%s] %zu/%zu points  %.3g pts/s  %.0f s left ", std::string(fill, '#').c_str(),
                 std::string(w - fill, '.').c_str(), done_, total_, rate, left);
    if (done_ >= total_) std::fprintf(stderr, "\n");
  }

 private:
  std::size_t total_, done_ = 0;
  bool on_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace

std::string canonical_command_line() {
  static const std::vector<std::string> with_value{"--out", "--plot", "--shard", "--threads", "--cache",
                                                   "--plot-x", "--plot-y", "--plot-z", "--plot-by",
                                                   "--plot-diff", "--plot-title", "--plot-timeout"};
  static const std::vector<std::string> flags{"--resume", "--no-progress"};
  const auto& a = command_args();
  std::string s;
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::string name = a[i].substr(0, a[i].find('='));
    bool skip = false;
    for (const auto& f : flags) skip = skip || a[i] == f;
    for (const auto& w : with_value)
      if (name == w) {
        skip = true;
        if (a[i].find('=') == std::string::npos) ++i;  // value in the next token
      }
    if (skip) continue;
    bool quote = a[i].empty() || a[i].find_first_of(" \t\"'$") != std::string::npos;
    s += (s.empty() ? "" : " ") + (quote ? "'" + a[i] + "'" : a[i]);
  }
  return s;
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
  // Outputs (tools/file_io.hpp): absent or regular files, --plot not the --out file; the figure's
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

  std::vector<std::string> previous;  // data lines kept from a resumed file
  bool already_complete = false;
  std::size_t first = lo;  // first chain still to compute
  if (r.resume && rank == 0) {
    std::ifstream probe(r.out);  // a regular file or absent: check_writable refused anything else
    if (probe) {
      previous = read_resume(r.out, header, already_complete);
      std::size_t rows = 0, k = lo;
      while (k < hi && rows + job.chains[k].size <= previous.size()) rows += job.chains[k++].size;
      previous.resize(rows);  // drop a partly written chain
      first = k;
    }
  }
#ifdef SADDLE_HAVE_MPI
  if (nranks > 1) {
    unsigned long long f = first;
    MPI_Bcast(&f, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    first = static_cast<std::size_t>(f);
  }
#endif
  // Output stream (rank 0 only): header + kept rows, then appended chain by chain.
  std::unique_ptr<std::ofstream> file;
  std::ostream* os = &std::cout;
  const std::string where = !r.out.empty() && r.out != "-" ? "'" + r.out + "'" : std::string("stdout");
  // Rows are kept in memory only for the plot; otherwise counted.
  const bool keep_rows = !r.plot.empty();
  std::vector<std::string> all_lines;
  std::size_t written = previous.size();
  if (keep_rows) all_lines = previous;
  bool write_failed = false;
  if (rank == 0) {
    if (!r.out.empty() && r.out != "-") {
      file = std::make_unique<std::ofstream>(r.out, std::ios::trunc);
      if (!*file) throw InputError("--out: cannot open '" + r.out + "' for writing");
      os = file.get();
    }
    for (const auto& h : header) *os << h << "\n";
    for (const auto& l : previous) *os << l << "\n";
    os->flush();
    if (!*os) throw InputError("cannot write the output to " + where + " (disk full or closed?)");
  }
  int conv_col = -1;
  for (std::size_t j = 0; j < job.columns.size(); ++j)
    if (job.columns[j] == "converged") conv_col = static_cast<int>(j);
  auto unconverged = [&](const std::string& line) {
    if (conv_col < 0) return false;
    std::size_t pos = 0;
    for (int f = 0; f < conv_col && pos != std::string::npos; ++f) {
      pos = line.find(',', pos);
      if (pos != std::string::npos) ++pos;
    }
    if (pos == std::string::npos) return false;
    const std::size_t end = line.find(',', pos);
    return line.compare(pos, end == std::string::npos ? std::string::npos : end - pos, "0") == 0;
  };
  std::size_t n_unconverged = 0;
  for (const auto& l : previous) n_unconverged += unconverged(l);
  std::string strict_row;  // under --strict: the first unconverged row written
  std::atomic<bool> stop{false};
  StopSignals signals;
  std::size_t todo_points = 0;
  for (std::size_t c = first; c < hi; ++c) todo_points += job.chains[c].size;
  Progress progress(todo_points, r.progress && rank == 0);

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
  // Chains are tasks of the one thread team (solver/parallel.hpp); the solves inside a chain
  // (the curve driver's replicates, a trainer's seeds) become tasks of the same team. A chain
  // that throws stops the run like an interrupt: no new chain starts, the complete prefix is
  // written, and the error of the lowest failing chain is reported.
  FirstError error;
  parallel_for(mine.size(), [&](std::size_t k) {
    const std::size_t c = mine[k];
    if (stop || g_signal || error.after_error(c)) return;  // --strict, a signal, an error, a full disk
    std::vector<std::string> lines;
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
      error.record(c);
      return;
    }
    std::lock_guard<std::mutex> lock(mu);
    done[c - first] = std::move(lines);
    ready[c - first] = 1;
    progress.advance(job.chains[c].size);
    if (rank == 0 && nranks == 1) flush_prefix();
  });
  if (write_failed) {
    if (file) file->close();
    throw InputError("cannot write the output to " + where + " (disk full or closed?); " +
                     std::to_string(written) + " rows were written before");
  }
  if (error.failed()) {
    // Keep what is complete (as for an interrupt), then report the error once.
    if (rank == 0 && nranks == 1) {
      flush_prefix();
      if (file) file->close();
    }
    const std::string kept = "; " + std::to_string(written) + " complete rows written to " + where +
                             (file && written > 0 ? " (--resume continues after a fix)" : "");
    try {
      std::rethrow_exception(error.error());
    } catch (const InputError& e) {
      throw InputError(e.what() + kept);
    } catch (const Interrupted&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      throw std::runtime_error(e.what() + kept);
    }
  }
  if (rank == 0 && nranks == 1 && (g_signal || !strict_row.empty())) {
    flush_prefix();  // every complete chain (up to the failing row under --strict), no timing line
    os->flush();
    if (file) file->close();
    if (!strict_row.empty())
      throw StrictFailure("--strict: a point did not converge (row: " + strict_row + "); " +
                          std::to_string(written) + " rows written to " + where);
    throw Interrupted("interrupted: " + std::to_string(written) + " complete rows written to " +
                      where + (file ? "; run the same command with --resume to finish" : ""));
  }
#ifdef SADDLE_HAVE_MPI
  if (nranks > 1) {
    if (rank != 0) {
      for (std::size_t c : mine) {
        std::string blob;
        for (const auto& l : done[c - first]) blob += l + "\n";
        unsigned long long idx = c;
        MPI_Send(&idx, 1, MPI_UNSIGNED_LONG_LONG, 0, 1, MPI_COMM_WORLD);
        MPI_Send(blob.data(), static_cast<int>(blob.size()), MPI_CHAR, 0, 2, MPI_COMM_WORLD);
      }
    } else {
      flush_prefix();
      std::size_t remaining = (hi - first) - mine.size();
      for (; remaining > 0; --remaining) {
        MPI_Status st;
        unsigned long long idx;
        MPI_Recv(&idx, 1, MPI_UNSIGNED_LONG_LONG, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
        int len = 0;
        MPI_Status st2;
        MPI_Probe(st.MPI_SOURCE, 2, MPI_COMM_WORLD, &st2);
        MPI_Get_count(&st2, MPI_CHAR, &len);
        std::string blob(static_cast<std::size_t>(len), '\0');
        MPI_Recv(&blob[0], len, MPI_CHAR, st.MPI_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        std::istringstream in(blob);
        std::string l;
        std::vector<std::string> lines;
        while (std::getline(in, l)) lines.push_back(l);
        done[idx - first] = std::move(lines);
        ready[idx - first] = 1;
        progress.advance(job.chains[idx].size);
        flush_prefix();
      }
    }
    if (rank != 0) return;
  }
#endif
  flush_prefix();
  if (!strict_row.empty()) {
    if (file) file->close();
    throw StrictFailure("--strict: a point did not converge (row: " + strict_row + ")");
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s %zu rows, %.3f s, threads=%d, ranks=%d", kTimingPrefix, written, secs,
                omp_get_max_threads(), nranks);
  *os << buf << "\n";
  os->flush();
  if (file) file->close();
  if (!*os || write_failed)
    throw InputError("cannot write the output to " + where + " (disk full or closed?)");
  if (n_unconverged > 0)
    std::cerr << "saddle: warning: " << n_unconverged << " of " << written
              << " points did not converge (converged = 0 in their rows; --strict stops at the first)\n";
  if (!r.plot.empty()) {
    CsvData data;
    data.comments.assign(header.begin(), header.end() - 1);
    data.columns = job.columns;
    for (const auto& l : all_lines) data.rows.push_back(split(l, ','));
    plot_after_output(data, job.plot, r.plot_options, r.plot,
                      std::to_string(written) + " rows " + (file ? "in " + where : std::string("on stdout")));
  }
}

}  // namespace saddle
