// The files of the grid runner (tools/runner/runner.hpp): the text of a data row, the CSV header with its
// shard line, the shard spec (--shard i/N, SLURM arrays), reading a partial file for --resume, and
// the chain cache (--cache DIR: one file per chain, with a checksum of its rows). Shared by the
// runner and by `saddle merge`; nothing here computes anything.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace saddle {

struct GridJob;

namespace grid_files {

extern const char* const kTimingPrefix;  // "# timing:"
extern const char* const kShardPrefix;   // "# shard:"

std::string join_row(const std::vector<std::string>& row);
std::size_t count_fields(const std::string& line);
// A data line as the runner writes it: as many fields as columns, no '#' or control characters
// (a line from a corrupt, truncated or edited file is refused rather than copied).
bool well_formed_row(const std::string& line, std::size_t ncols);
// A non-negative decimal integer (digits only) <= max into `out`; false when malformed.
bool parse_count(const std::string& t, long long max, long long& out);
std::uint64_t fnv1a(const std::string& s);

// --shard i/N: shard i (0-based) of N; chains [lo, hi) of C.
struct Shard {
  int index = 0, count = 1;
};
constexpr long long kMaxShards = 1000000;
// "i/N" with 0 <= i < N <= kMaxShards (digits only); false otherwise.
bool parse_shard_text(const std::string& t, Shard& s);
// --shard text, or SLURM_ARRAY_TASK_ID/MIN/COUNT when empty; throws InputError.
Shard parse_shard(const std::string& text);

// What a shard holds, as its header line says: "# shard: i/N (chains lo..hi-1 of C, R rows)".
struct ShardLine {
  Shard shard;
  long long lo = -1, hi = -1, chains = -1, rows = -1;  // -1: not given (an older file)
};
std::string shard_line(const Shard& sh, std::size_t lo, std::size_t hi, std::size_t chains,
                       std::size_t rows);
// Parses the text after "# shard:"; false when malformed.
bool parse_shard_line(const std::string& text, ShardLine& out);

// The '#' lines and the column header of a run (shard line only when sharded).
std::vector<std::string> header_lines(const GridJob& job, const Shard& sh, std::size_t lo,
                                      std::size_t hi);

// What --resume keeps of an existing output: the rows of the complete chains lo..first-1 (in
// order), and whether the file had the timing line (a finished run).
struct ResumeState {
  std::vector<std::string> rows;
  std::size_t first = 0;  // first chain still to compute
  bool complete = false;
};
// Longest line --resume reads (a data row is far shorter; a longer line is damage).
constexpr std::size_t kMaxRowChars = 1 << 20;
// Reads an existing output for --resume, line by line (never more than the shard's rows and one
// line of kMaxRowChars): checks its header against `header` and every kept row: its shape
// (well_formed_row), its values (converged is 0, 1 or a count of seeds; no field is nan in any spelling, which no
// writer emits: tools/cli/cli_common.hpp finish_row), and, where the job describes them
// (GridJob::row_key), its parameter values at its position in chains lo..hi-1; after the timing
// line nothing may follow, and a file never holds more rows than the shard has. A torn last line
// and the rows of a partly written chain are dropped. Throws InputError naming the first bad line
// (the file is left alone) when the file is not this run's or is damaged.
ResumeState read_resume(const std::string& path, const std::vector<std::string>& header,
                        const GridJob& job, std::size_t lo, std::size_t hi);

// Cache of finished chains: one file per (settings, columns, version, chain key), holding the key,
// the rows and a checksum of the rows. An entry whose key, rows or checksum do not match (edited,
// damaged, another version) is not used: the chain is computed again and the entry rewritten.
class ChainCache {
 public:
  // Creates `dir` when missing (one level); throws InputError when it cannot be created or
  // written. Empty dir: no cache.
  ChainCache(const std::string& dir, const GridJob& job);
  bool enabled() const { return !dir_.empty(); }
  bool load(const std::string& chain_key, std::size_t rows, std::vector<std::string>& lines) const;
  void store(const std::string& chain_key, const std::vector<std::string>& lines) const;

 private:
  std::string path(const std::string& full_key) const;
  std::string dir_, prefix_;
  std::size_t ncols_ = 0;
};

// The command line without the run-only options (--out, --resume, --shard, --threads,
// --no-progress, --cache, --plot*), as recorded in headers so shards and resumes compare equal.
std::string canonical_command_line();

}  // namespace grid_files
}  // namespace saddle
