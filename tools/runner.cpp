// Grid runner: chains in parallel, ordered incremental output, resume, cache, shards, MPI,
// progress bar, plots; plus `saddle merge` and `saddle plot`.
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

namespace saddle {
namespace {

const char* kTimingPrefix = "# timing:";
const char* kShardPrefix = "# shard:";

std::string join_row(const std::vector<std::string>& row) {
  std::string s;
  for (std::size_t i = 0; i < row.size(); ++i) s += (i ? "," : "") + row[i];
  return s;
}

std::size_t count_fields(const std::string& line) {
  std::size_t n = 1;
  for (char ch : line) n += ch == ',';
  return n;
}

// A data line as the runner writes it: as many fields as columns, no '#' or control characters
// (a line from a corrupt, truncated or edited file is refused rather than copied).
bool well_formed_row(const std::string& line, std::size_t ncols) {
  if (line.empty() || line[0] == '#') return false;
  for (unsigned char ch : line)
    if (ch < 0x20 || ch == 0x7f) return false;
  return count_fields(line) == ncols;
}

// Parses a non-negative decimal integer (digits only, no sign, no spaces) into `out`; false when
// malformed or above `max`.
bool parse_count(const std::string& t, long long max, long long& out) {
  if (t.empty() || t.size() > 18) return false;
  long long v = 0;
  for (char ch : t) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + (ch - '0');
  }
  if (v > max) return false;
  out = v;
  return true;
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

struct Shard {
  int index = 0, count = 1;
};

// Largest shard count: far above any cluster array, small enough for every index computation.
constexpr long long kMaxShards = 1000000;

// "i/N" with 0 <= i < N <= kMaxShards (digits only); false otherwise.
bool parse_shard_text(const std::string& t, Shard& s) {
  const std::size_t slash = t.find('/');
  if (slash == std::string::npos) return false;
  long long i = 0, n = 0;
  if (!parse_count(t.substr(0, slash), kMaxShards, i) || !parse_count(t.substr(slash + 1), kMaxShards, n))
    return false;
  if (n < 1 || i >= n) return false;
  s.index = static_cast<int>(i);
  s.count = static_cast<int>(n);
  return true;
}

Shard parse_shard(const std::string& text) {
  Shard s;
  std::string t = text, what = "--shard";
  if (t.empty()) {
    const char* id = std::getenv("SLURM_ARRAY_TASK_ID");
    const char* cnt = std::getenv("SLURM_ARRAY_TASK_COUNT");
    if (!id || !cnt) return s;
    const char* mn = std::getenv("SLURM_ARRAY_TASK_MIN");
    long long i = 0, lo = 0;
    if (!parse_count(id, kMaxShards * 1000, i) || (mn && !parse_count(mn, kMaxShards * 1000, lo)) || i < lo)
      throw InputError("SLURM_ARRAY_TASK_ID/MIN: not a task index ('" + std::string(id) + "')");
    t = std::to_string(i - lo) + "/" + cnt;
    what = "SLURM_ARRAY_TASK_ID/COUNT";
  }
  if (!parse_shard_text(t, s))
    throw InputError(what + ": expected i/N with 0 <= i < N <= " + std::to_string(kMaxShards) + ", got '" +
                     t + "'");
  return s;
}

// SIGINT/SIGTERM during run_grid: the signal number, 0 when none arrived.
volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_stop_signal(int sig) {
  g_signal = sig;
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

std::vector<std::string> header_lines(const GridJob& job, const Shard& sh) {
  std::vector<std::string> h;
  h.push_back(std::string("# saddle ") + SADDLE_VERSION);
  h.push_back("# command: " + canonical_command_line());
  for (const auto& kv : job.settings) h.push_back("# " + kv.first + ": " + kv.second);
  if (!job.sweep.empty()) h.push_back(sweep_header(job.sweep));
  if (sh.count > 1)
    h.push_back(std::string(kShardPrefix) + " " + std::to_string(sh.index) + "/" +
                std::to_string(sh.count));
  h.push_back(join_row(job.columns));
  return h;
}

// Cache of finished chains: one file per (settings, columns, chain key).
class ChainCache {
 public:
  ChainCache(const std::string& dir, const GridJob& job) : dir_(dir), ncols_(job.columns.size()) {
    for (const auto& kv : job.settings) prefix_ += kv.first + "=" + kv.second + "\n";
    prefix_ += join_row(job.columns) + "\n" + SADDLE_VERSION + "\n";
  }
  bool enabled() const { return !dir_.empty(); }
  bool load(const Chain& c, std::vector<std::string>& lines) const {
    if (!enabled()) return false;
    std::ifstream f(path(c));
    if (!f) return false;
    std::string key((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const std::string want = full_key(c) + "\n--\n";
    if (key.compare(0, want.size(), want) != 0) return false;
    std::istringstream rest(key.substr(want.size()));
    std::string line;
    lines.clear();
    while (std::getline(rest, line)) {
      if (!well_formed_row(line, ncols_)) return false;  // a damaged cache entry is recomputed
      lines.push_back(line);
    }
    return lines.size() == c.size;
  }
  void store(const Chain& c, const std::vector<std::string>& lines) const {
    if (!enabled()) return;
    std::string tmp = path(c) + ".tmp" + std::to_string(::getpid());
    {
      std::ofstream f(tmp);
      if (!f) return;  // a cache that can't be written is just not used
      f << full_key(c) << "\n--\n";
      for (const auto& l : lines) f << l << "\n";
    }
    std::rename(tmp.c_str(), path(c).c_str());
  }

 private:
  std::string full_key(const Chain& c) const { return prefix_ + c.key; }
  std::string path(const Chain& c) const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a(full_key(c))));
    return dir_ + "/" + buf + ".chain";
  }
  std::string dir_, prefix_;
  std::size_t ncols_;
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

// Reads an existing output for --resume: checks its header, returns the complete data lines.
std::vector<std::string> read_resume(const std::string& path, const std::vector<std::string>& header,
                                     bool& complete) {
  std::ifstream f(path);
  if (!f) throw InputError("--resume: cannot read '" + path + "'");
  std::vector<std::string> lines;
  std::string line;
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::istringstream in(all);
  while (std::getline(in, line)) lines.push_back(line);
  if (!all.empty() && all.back() != '\n' && !lines.empty()) lines.pop_back();  // torn last line
  complete = false;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (i >= lines.size() || lines[i] != header[i])
      throw InputError("--resume: '" + path + "' was made with other settings or is not a saddle CSV (line " +
                       std::to_string(i + 1) + " differs)");
  }
  std::vector<std::string> data;
  const std::size_t ncols = count_fields(header.back());
  for (std::size_t i = header.size(); i < lines.size(); ++i) {
    if (lines[i].rfind(kTimingPrefix, 0) == 0) {
      complete = true;
      break;
    }
    if (!well_formed_row(lines[i], ncols))
      throw InputError("--resume: line " + std::to_string(i + 1) + " of '" + path +
                       "' is not a data row of this table (" + std::to_string(ncols) +
                       " fields expected); the file is damaged");
    data.push_back(lines[i]);
  }
  return data;
}

}  // namespace

std::string canonical_command_line() {
  static const std::vector<std::string> with_value{"--out", "--plot", "--shard", "--threads", "--cache",
                                                   "--plot-x", "--plot-y", "--plot-z", "--plot-by",
                                                   "--plot-diff", "--plot-title"};
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
  sub->add_option("--plot", png, "Also draw a PNG figure of the result (gnuplot)")->group("Output");
  sub->add_option("--plot-x", o.x, "Plot: x column (default: the longest sweep)")->group("Output");
  sub->add_option("--plot-y", o.y, "Plot: y column(s), comma-separated")->group("Output");
  sub->add_option("--plot-z", o.z, "Plot: heat-map column of a 2-D sweep (or colA-colB)")->group("Output");
  sub->add_option("--plot-by", o.by, "Plot: second axis of a 2-D heat map")->group("Output");
  sub->add_option("--plot-diff", o.diff, "Plot: 'COL:A-B' draws z of rows with COL=A minus rows with COL=B")
      ->group("Output");
  sub->add_option("--plot-title", o.title, "Plot: title")->group("Output");
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
  plot_csv(data, hints, p.options, p.png);
}

void add_run_options(CLI::App* sub, RunOptions& r) {
  sub->add_option("--out", r.out, "Write the CSV to FILE (rows appended as chains finish)")->group("Output");
  add_plot_flags(sub, r.plot, r.plot_options);
  sub->add_flag("--resume", r.resume, "Skip the points already in --out (same settings required)")->group("Run");
  sub->add_option("--shard", r.shard,
                  "Compute shard i/N of the grid (0-based; default from SLURM_ARRAY_TASK_ID/COUNT)")->group("Run");
  sub->add_option("--threads", r.threads, "OpenMP threads (0: default)")->group("Run");
  sub->add_flag("!--no-progress", r.progress, "No progress bar on stderr")->group("Run");
  sub->add_option("--cache", r.cache_dir, "Cache directory for computed chains")->group("Run");
  sub->add_flag("--strict", r.strict, "Stop at the first point that did not converge (exit code 3)")
      ->group("Run");
}

void run_grid(const GridJob& job, const RunOptions& r) {
  const auto t0 = std::chrono::steady_clock::now();
  if (r.threads < 0) throw InputError("--threads: must be >= 0");
  if (r.threads > 0) omp_set_num_threads(r.threads);
  const Shard sh = parse_shard(r.shard);
  if (r.resume && (r.out.empty() || r.out == "-")) throw InputError("--resume needs --out FILE");
  if (static_cast<std::size_t>(sh.count) > std::max<std::size_t>(job.chains.size(), 1))
    throw InputError("--shard: " + std::to_string(sh.count) + " shards for " +
                     std::to_string(job.chains.size()) + " chains (at most one shard per chain)");
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
  const std::vector<std::string> header = header_lines(job, sh);

  std::vector<std::string> previous;  // data lines kept from a resumed file
  bool already_complete = false;
  std::size_t first = lo;  // first chain still to compute
  if (r.resume && rank == 0) {
    std::ifstream probe(r.out);
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
  std::vector<std::string> all_lines = previous;
  if (rank == 0) {
    if (!r.out.empty() && r.out != "-") {
      file = std::make_unique<std::ofstream>(r.out, std::ios::trunc);
      if (!*file) throw InputError("--out: cannot open '" + r.out + "' for writing");
      os = file.get();
    }
    for (const auto& h : header) *os << h << "\n";
    for (const auto& l : previous) *os << l << "\n";
    os->flush();
  }
  const ChainCache cache(r.cache_dir, job);
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
    while (next_to_write < hi && ready[next_to_write - first] && strict_row.empty()) {
      for (const auto& l : done[next_to_write - first]) {
        *os << l << "\n";
        all_lines.push_back(l);
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
      ++next_to_write;
    }
    os->flush();
  };
  // Chains are tasks of the one thread team (solver/parallel.hpp); the solves inside a chain
  // (the curve driver's replicates, a trainer's seeds) become tasks of the same team. A chain
  // that throws stops the run like an interrupt: no new chain starts, the complete prefix is
  // written, and the error of the lowest failing chain is reported.
  FirstError error;
  parallel_for(mine.size(), [&](std::size_t k) {
    const std::size_t c = mine[k];
    if (stop || g_signal || error.failed()) return;  // --strict, SIGINT/SIGTERM or an error
    std::vector<std::string> lines;
    try {
      check_interrupt();
      if (!cache.load(job.chains[c], lines)) {
        auto rows = job.run_chain(c);
        check_interrupt();  // a chain cut short by an interrupt is not written
        lines.clear();
        for (const auto& row : rows) {
          if (row.size() != job.columns.size())
            throw std::logic_error("chain row has the wrong number of fields");
          lines.push_back(join_row(row));
        }
        if (lines.size() != job.chains[c].size) throw std::logic_error("chain produced the wrong number of rows");
        cache.store(job.chains[c], lines);
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
  if (error.failed()) {
    // Keep what is complete (as for an interrupt), then report the error once.
    std::size_t written = all_lines.size();
    if (rank == 0 && nranks == 1) {
      flush_prefix();
      written = all_lines.size();
      if (file) file->close();
    }
    const std::string where = file ? "'" + r.out + "'" : std::string("stdout");
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
    const std::string where = file ? "'" + r.out + "'" : std::string("stdout");
    if (!strict_row.empty())
      throw StrictFailure("--strict: a point did not converge (row: " + strict_row + "); " +
                          std::to_string(all_lines.size()) + " rows written to " + where);
    throw Interrupted("interrupted: " + std::to_string(all_lines.size()) + " complete rows written to " +
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
  std::snprintf(buf, sizeof buf, "%s %zu rows, %.3f s, threads=%d, ranks=%d", kTimingPrefix,
                all_lines.size(), secs, omp_get_max_threads(), nranks);
  *os << buf << "\n";
  os->flush();
  if (file) {
    file->close();
    if (!*file) throw InputError("--out: error while writing '" + r.out + "'");
  }
  if (n_unconverged > 0)
    std::cerr << "saddle: warning: " << n_unconverged << " of " << all_lines.size()
              << " points did not converge (converged = 0 in their rows; --strict stops at the first)\n";
  if (!r.plot.empty()) {
    CsvData data;
    data.comments.assign(header.begin(), header.end() - 1);
    data.columns = job.columns;
    for (const auto& l : all_lines) {
      std::vector<std::string> row;
      std::string cur;
      for (char ch : l) {
        if (ch == ',') {
          row.push_back(cur);
          cur.clear();
        } else {
          cur += ch;
        }
      }
      row.push_back(cur);
      data.rows.push_back(row);
    }
    plot_csv(data, job.plot, r.plot_options, r.plot);
  }
}

namespace {
struct MergeCli {
  std::vector<std::string> parts;
  std::string out;
};

void run_merge(const MergeCli& m) {
  struct Part {
    int index = -1, count = -1;
    std::vector<std::string> header, data;
  };
  std::vector<Part> parts;
  for (const auto& p : m.parts) {
    std::ifstream f(p);
    if (!f) throw InputError("merge: cannot read '" + p + "'");
    Part part;
    std::string line;
    bool in_header = true, complete = false;
    while (std::getline(f, line)) {
      if (line.rfind(kTimingPrefix, 0) == 0) {
        complete = true;
        break;
      }
      if (in_header && line.rfind(kShardPrefix, 0) == 0) {
        Shard sh;
        std::string t = line.substr(std::strlen(kShardPrefix));
        if (!t.empty() && t[0] == ' ') t.erase(0, 1);
        if (part.index >= 0 || !parse_shard_text(t, sh))
          throw InputError("merge: '" + p + "' has a malformed shard line (expected '# shard: i/N', 0 <= i < N)");
        part.index = sh.index;
        part.count = sh.count;
        continue;
      }
      if (in_header) {
        part.header.push_back(line);
        if (line.empty() || line[0] != '#') in_header = false;
      } else {
        part.data.push_back(line);
      }
    }
    if (part.header.empty() || part.header[0].rfind("# saddle ", 0) != 0)
      throw InputError("merge: '" + p + "' is not a saddle CSV");
    if (in_header) throw InputError("merge: '" + p + "' has no column header line");
    if (part.index < 0) throw InputError("merge: '" + p + "' is not a shard output (no '# shard:' line)");
    if (!complete) throw InputError("merge: '" + p + "' is incomplete (no '# timing:' line); finish it with --resume");
    const std::size_t ncols = count_fields(part.header.back());
    for (std::size_t i = 0; i < part.data.size(); ++i)
      if (!well_formed_row(part.data[i], ncols))
        throw InputError("merge: '" + p + "': data row " + std::to_string(i + 1) + " is malformed (" +
                         std::to_string(ncols) + " fields expected)");
    parts.push_back(std::move(part));
  }
  if (parts.empty()) throw InputError("merge: no input files");
  const int N = parts[0].count;
  if (static_cast<std::size_t>(N) > parts.size())
    throw InputError("merge: the parts are shards of " + std::to_string(N) + " but only " +
                     std::to_string(parts.size()) + " files were given");
  std::vector<const Part*> by_index(N, nullptr);
  for (const auto& p : parts) {
    if (p.count != N) throw InputError("merge: parts come from different shard counts");
    if (p.header != parts[0].header) throw InputError("merge: parts were made with different settings");
    if (by_index[p.index]) throw InputError("merge: shard " + std::to_string(p.index) + " given twice");
    by_index[p.index] = &p;
  }
  for (int i = 0; i < N; ++i)
    if (!by_index[i]) throw InputError("merge: shard " + std::to_string(i) + "/" + std::to_string(N) + " is missing");
  std::ostringstream os;
  std::size_t rows = 0;
  for (const auto& h : parts[0].header) os << h << "\n";
  for (int i = 0; i < N; ++i)
    for (const auto& l : by_index[i]->data) {
      os << l << "\n";
      ++rows;
    }
  os << kTimingPrefix << " " << rows << " rows, merged from " << N << " shards\n";
  if (m.out.empty() || m.out == "-") {
    std::cout << os.str();
  } else {
    std::ofstream f(m.out);
    if (!f) throw InputError("--out: cannot open '" + m.out + "' for writing");
    f << os.str();
    f.close();
    if (!f) throw InputError("--out: error while writing '" + m.out + "'");
  }
}

struct PlotCli {
  std::string csv, out;
  PlotOptions opt;
};
}  // namespace

void register_merge(CLI::App& app) {
  auto m = std::make_shared<MergeCli>();
  CLI::App* sub = app.add_subcommand("merge", "Join --shard outputs into the file a single run writes");
  sub->add_option("parts", m->parts, "Shard CSV files (any order)")->required();
  sub->add_option("--out", m->out, "Output file (default: stdout)");
  sub->callback([m] { run_merge(*m); });
}

void register_plot(CLI::App& app) {
  auto p = std::make_shared<PlotCli>();
  CLI::App* sub = app.add_subcommand("plot", "Draw a PNG figure from a saddle CSV (gnuplot)");
  sub->add_option("csv", p->csv, "Input CSV written by saddle")->required();
  sub->add_option("--out", p->out, "Output PNG")->required();
  sub->add_option("--x", p->opt.x, "x column (default: the parameter with most values)");
  sub->add_option("--y", p->opt.y, "y column(s), comma-separated");
  sub->add_option("--z", p->opt.z, "Heat-map column (2-D sweep)");
  sub->add_option("--by", p->opt.by, "Second axis of the heat map");
  sub->add_option("--diff", p->opt.diff, "'COL:A-B': z of rows with COL=A minus rows with COL=B");
  sub->add_option("--title", p->opt.title, "Title");
  sub->callback([p] { plot_csv(read_csv(p->csv), PlotHints{}, p->opt, p->out); });
}

}  // namespace saddle
