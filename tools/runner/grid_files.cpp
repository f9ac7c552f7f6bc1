// The files of the grid runner (see tools/runner/grid_files.hpp).
#include "tools/runner/grid_files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "saddle_version.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/runner/csv.hpp"
#include "tools/runner/file_io.hpp"
#include "tools/runner/grid_job.hpp"
#include "tools/cli/number_text.hpp"

namespace saddle {
namespace grid_files {

const char* const kTimingPrefix = "# timing:";
const char* const kShardPrefix = "# shard:";

std::string join_row(const std::vector<std::string>& row) { return csv_record(row); }

std::size_t count_fields(const std::string& line) {
  std::vector<std::string> fields;
  return parse_csv_record(line, fields) ? fields.size() : 0;
}

bool well_formed_row(const std::string& line, std::size_t ncols) {
  if (line.empty() || line[0] == '#') return false;
  for (unsigned char ch : line)
    if (ch < 0x20 || ch == 0x7f) return false;
  return count_fields(line) == ncols;
}

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

std::string shard_line(const Shard& sh, std::size_t lo, std::size_t hi, std::size_t chains,
                       std::size_t rows) {
  return std::string(kShardPrefix) + " " + std::to_string(sh.index) + "/" + std::to_string(sh.count) +
         " (chains " + std::to_string(lo) + ".." + std::to_string(hi == 0 ? 0 : hi - 1) + " of " +
         std::to_string(chains) + ", " + std::to_string(rows) + " rows)";
}

bool parse_shard_line(const std::string& text_in, ShardLine& out) {
  std::string t = text_in;
  if (!t.empty() && t[0] == ' ') t.erase(0, 1);
  const std::size_t sp = t.find(' ');
  if (!parse_shard_text(t.substr(0, sp), out.shard)) return false;
  if (sp == std::string::npos) return true;  // "i/N" only (files of saddle 0.1 before this line)
  // " (chains LO..HI of C, R rows)"
  const std::string rest = t.substr(sp);
  char tail[8] = {0};
  long long lo = 0, hi = 0, c = 0, r = 0;
  if (std::sscanf(rest.c_str(), " (chains %lld..%lld of %lld, %lld rows%7s", &lo, &hi, &c, &r, tail) != 5 ||
      std::string(tail) != ")")
    return false;
  if (lo < 0 || hi < lo - 1 || c < 0 || hi >= c || r < 0) return false;
  out.lo = lo;
  out.hi = hi + 1;
  out.chains = c;
  out.rows = r;
  return true;
}

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

std::vector<std::string> header_lines(const GridJob& job, const Shard& sh, std::size_t lo, std::size_t hi) {
  std::vector<std::string> h;
  h.push_back(std::string("# saddle ") + SADDLE_VERSION);
  h.push_back(csv_comment("# command: " + canonical_command_line()));
  for (const auto& kv : job.settings) h.push_back(csv_comment("# " + kv.first + ": " + kv.second));
  if (!job.sweep.empty()) h.push_back(sweep_header(job.sweep));
  if (sh.count > 1) {
    std::size_t rows = 0;
    for (std::size_t c = lo; c < hi; ++c) rows += job.chains[c].size;
    h.push_back(shard_line(sh, lo, hi, job.chains.size(), rows));
  }
  h.push_back(join_row(job.columns));
  return h;
}

namespace {
// Reads one line of at most kMaxRowChars characters (without the newline) into `line`; `ended`
// says whether a newline closed it. False at the end of the file (nothing read).
bool read_line(std::istream& in, std::string& line, bool& ended, bool& too_long) {
  line.clear();
  ended = too_long = false;
  std::streambuf* sb = in.rdbuf();
  for (;;) {
    const int ch = sb->sbumpc();
    if (ch == std::char_traits<char>::eof()) return !line.empty();
    if (ch == '\n') {
      ended = true;
      return true;
    }
    if (line.size() >= kMaxRowChars) {
      too_long = true;
      return true;
    }
    line.push_back(static_cast<char>(ch));
  }
}

bool has_nan_text(const std::string& field) {
  std::string low;
  for (char ch : field) low += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return low.find("nan") != std::string::npos && is_nonfinite_text(field);
}
}  // namespace

ResumeState read_resume(const std::string& path, const std::vector<std::string>& header, const GridJob& job,
                        std::size_t lo, std::size_t hi) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError("--resume: cannot read '" + path + "'");
  ResumeState st;
  st.first = lo;
  std::size_t max_rows = 0;
  for (std::size_t c = lo; c < hi; ++c) max_rows += job.chains[c].size;
  const std::size_t ncols = count_fields(header.back());
  int conv_col = -1;
  for (std::size_t j = 0; j < job.columns.size(); ++j)
    if (job.columns[j] == "converged") conv_col = static_cast<int>(j);
  std::vector<bool> text_column(job.columns.size(), false);
  for (std::size_t j = 0; j < job.columns.size(); ++j)
    text_column[j] = std::find(job.text_columns.begin(), job.text_columns.end(), job.columns[j]) != job.text_columns.end();
  std::string line;
  bool ended = false, too_long = false;
  std::size_t lineno = 0;
  auto bad = [&](const std::string& why) {
    return InputError("--resume: line " + std::to_string(lineno) + " of '" + path + "' " + why +
                      "; the file is damaged or not this run's (remove it, or fix the line)");
  };
  for (std::size_t i = 0; i < header.size(); ++i) {
    ++lineno;
    if (!read_line(f, line, ended, too_long) || too_long || line != header[i])
      throw InputError("--resume: '" + path + "' was made with other settings or is not a saddle CSV (line " +
                       std::to_string(i + 1) + " differs)");
  }
  // Rows of chain c, row k within it (the chain being read).
  std::size_t c = lo, k = 0;
  while (c < hi && job.chains[c].size == 0) ++c;
  std::vector<std::string> chain_rows;
  while (read_line(f, line, ended, too_long)) {
    ++lineno;
    if (too_long) throw bad("is longer than " + std::to_string(kMaxRowChars) + " characters");
    if (!ended) break;  // torn last line: dropped
    if (line.rfind(kTimingPrefix, 0) == 0) {
      if (c != hi || k != 0)
        throw bad("is the timing line of a finished run, but the rows before it do not complete the grid (" +
                  std::to_string(st.rows.size() + chain_rows.size()) + " of " + std::to_string(max_rows) + " rows)");
      st.complete = true;
      ++lineno;
      bool e2 = false, t2 = false;
      if (read_line(f, line, e2, t2)) throw bad("follows the timing line (the end of a finished run)");
      break;
    }
    if (!well_formed_row(line, ncols))
      throw bad("is not a data row of this table (" + std::to_string(ncols) + " fields expected)");
    if (c >= hi) throw bad("is a row beyond the " + std::to_string(max_rows) + " rows of the grid");
    const std::vector<std::string> fields = split(line, ',');
    long long count = 0;  // 0 or 1 for a theory point, the seeds that converged for `mc slr`
    if (conv_col >= 0 && !parse_count(fields[conv_col], 1LL << 40, count))
      throw bad("has converged = '" + fields[conv_col] + "' (0, 1 or a count expected)");
    for (std::size_t j = 0; j < fields.size(); ++j)
      if (has_nan_text(fields[j])) throw bad("has " + job.columns[j] + " = " + fields[j] + " (never written)");
    if (job.row_key) {
      const std::vector<std::string> want = job.row_key(c, k);
      for (std::size_t j = 0; j < want.size() && j < fields.size(); ++j)
        if (fields[j] != want[j])
          throw bad("has " + job.columns[j] + " = " + fields[j] + " where row " + std::to_string(k + 1) +
                    " of chain " + std::to_string(c) + " has " + job.columns[j] + " = " + want[j] +
                    " (rows out of place, or from another grid)");
      // Past the key: numbers (or empty cells), but in the columns that hold text.
      for (std::size_t j = want.size(); j < fields.size(); ++j) {
        if (fields[j].empty() || text_column[j]) continue;
        double v = 0;
        const std::string why = parse_real(fields[j], &v);  // a written subnormal is out of range
        if (!why.empty() && why != "beyond the range of a double")
          throw bad("has " + job.columns[j] + " = '" + fields[j] + "' (a number expected)");
      }
    }
    chain_rows.push_back(line);
    if (++k == job.chains[c].size) {
      for (auto& l : chain_rows) st.rows.push_back(std::move(l));
      chain_rows.clear();
      ++c;
      k = 0;
      while (c < hi && job.chains[c].size == 0) ++c;
    }
  }
  st.first = c;  // the rows of a partly written chain are dropped
  return st;
}

namespace {
std::string checksum_line(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  char buf[48];
  std::snprintf(buf, sizeof buf, "# checksum: %016llx %zu", static_cast<unsigned long long>(fnv1a(all)),
                lines.size());
  return buf;
}
}  // namespace

ChainCache::ChainCache(const std::string& dir, const GridJob& job) : dir_(dir), ncols_(job.columns.size()) {
  for (const auto& kv : job.settings) prefix_ += kv.first + "=" + kv.second + "\n";
  prefix_ += join_row(job.columns) + "\n" + SADDLE_VERSION + "\n";
  if (dir_.empty()) return;
  struct stat st {};
  if (::stat(dir_.c_str(), &st) != 0) {
    // EEXIST: another process (an MPI rank, a shard) created it at the same moment.
    if (::mkdir(dir_.c_str(), 0777) != 0 && errno != EEXIST)
      throw InputError("--cache: cannot create the directory '" + dir_ + "': " + std::strerror(errno));
    if (::stat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw InputError("--cache: '" + dir_ + "' is not a directory");
  } else if (!S_ISDIR(st.st_mode)) {
    throw InputError("--cache: '" + dir_ + "' is not a directory");
  }
  if (::access(dir_.c_str(), W_OK | X_OK) != 0)
    throw InputError("--cache: the directory '" + dir_ + "' is not writable");
}

std::string ChainCache::path(const std::string& full_key) const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a(full_key)));
  return dir_ + "/" + buf + ".chain";
}

bool ChainCache::load(const std::string& chain_key, std::size_t rows, std::vector<std::string>& lines) const {
  if (!enabled()) return false;
  const std::string full = prefix_ + chain_key;
  std::string text;
  try {  // only a regular file of bounded size (a FIFO planted there never blocks)
    if (!file_io::is_regular(path(full))) return false;
    text = file_io::read_text(path(full), "--cache", std::size_t(1) << 28);
  } catch (const InputError&) {
    return false;
  }
  const std::string want = full + "\n--\n";
  if (text.compare(0, want.size(), want) != 0) return false;
  std::istringstream rest(text.substr(want.size()));
  std::string line;
  lines.clear();
  std::string sum;
  while (std::getline(rest, line)) {
    if (line.rfind("# checksum: ", 0) == 0) {
      sum = line;
      break;
    }
    if (!well_formed_row(line, ncols_)) return false;  // a damaged cache entry is recomputed
    lines.push_back(line);
  }
  // The checksum line must close the entry and match its rows (an edited value is recomputed).
  return lines.size() == rows && !sum.empty() && sum == checksum_line(lines) && !std::getline(rest, line);
}

void ChainCache::store(const std::string& chain_key, const std::vector<std::string>& lines) const {
  if (!enabled()) return;
  const std::string full = prefix_ + chain_key;
  const std::string target = path(full);
  const std::string tmp = target + ".tmp" + std::to_string(::getpid()) + "_" +
                          std::to_string(reinterpret_cast<std::uintptr_t>(&lines));
  {
    std::ofstream f(tmp);
    if (!f) return;  // a cache that can't be written is just not used
    f << full << "\n--\n";
    for (const auto& l : lines) f << l << "\n";
    f << checksum_line(lines) << "\n";
    f.close();
    if (!f) {
      std::remove(tmp.c_str());
      return;
    }
  }
  std::rename(tmp.c_str(), target.c_str());
}

}  // namespace grid_files
}  // namespace saddle
