// The files of the grid runner (see tools/grid_files.hpp).
#include "tools/grid_files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "saddle_version.hpp"
#include "tools/cli_common.hpp"
#include "tools/file_io.hpp"
#include "tools/runner.hpp"

namespace saddle {
namespace grid_files {

const char* const kTimingPrefix = "# timing:";
const char* const kShardPrefix = "# shard:";

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

std::vector<std::string> header_lines(const GridJob& job, const Shard& sh, std::size_t lo, std::size_t hi) {
  std::vector<std::string> h;
  h.push_back(std::string("# saddle ") + SADDLE_VERSION);
  h.push_back("# command: " + canonical_command_line());
  for (const auto& kv : job.settings) h.push_back("# " + kv.first + ": " + kv.second);
  if (!job.sweep.empty()) h.push_back(sweep_header(job.sweep));
  if (sh.count > 1) {
    std::size_t rows = 0;
    for (std::size_t c = lo; c < hi; ++c) rows += job.chains[c].size;
    h.push_back(shard_line(sh, lo, hi, job.chains.size(), rows));
  }
  h.push_back(join_row(job.columns));
  return h;
}

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
    if (::mkdir(dir_.c_str(), 0777) != 0)
      throw InputError("--cache: cannot create the directory '" + dir_ + "': " + std::strerror(errno));
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
