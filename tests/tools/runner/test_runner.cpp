// Unit tests of the grid runner (tools/runner/runner.hpp): output layout, shard slicing, resume of an
// interrupted file, the chain cache, --strict, and `saddle merge` run in-process. The job is
// synthetic: chain c has 1 + c % 3 points and point i of chain c is the row
//   chain = c, point = i, y = 10 c + i, converged = 1,
// so every expected file is written out here without the code under test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <unistd.h>

#include "saddle_version.hpp"
#include "tools/cli/app.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/runner/grid_files.hpp"
#include "tools/runner/runner.hpp"

using namespace saddle;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

constexpr std::size_t kChains = 7;
std::size_t chain_size(std::size_t c) { return 1 + c % 3; }  // 1,2,3,1,2,3,1: 13 rows

std::vector<std::string> expected_rows(std::size_t c) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < chain_size(c); ++i)
    out.push_back(std::to_string(c) + "," + std::to_string(i) + "," + std::to_string(10 * c + i) + ",1");
  return out;
}
std::vector<std::string> expected_rows(std::size_t lo, std::size_t hi) {
  std::vector<std::string> out;
  for (std::size_t c = lo; c < hi; ++c)
    for (const auto& r : expected_rows(c)) out.push_back(r);
  return out;
}

// The synthetic job; calls[c] counts the evaluations of chain c.
struct Synthetic {
  std::atomic<int> calls[kChains] = {};
  std::string setting = "synthetic";
  GridJob job() {
    GridJob j;
    j.columns = {"chain", "point", "y", "converged"};
    j.settings = {{"model", setting}, {"solver", "none"}};
    for (std::size_t c = 0; c < kChains; ++c) j.chains.push_back({"c=" + std::to_string(c), chain_size(c)});
    j.run_chain = [this](std::size_t c) {
      ++calls[c];
      std::vector<std::vector<std::string>> rows;
      for (std::size_t i = 0; i < chain_size(c); ++i)
        rows.push_back({std::to_string(c), std::to_string(i), std::to_string(10 * c + i), "1"});
      return rows;
    };
    return j;
  }
  int total_calls() const {
    int n = 0;
    for (const auto& k : calls) n += k.load();
    return n;
  }
  void reset() {
    for (auto& k : calls) k = 0;
  }
};

// A scratch directory under the temp directory, removed with its files at the end of a test.
struct Scratch {
  std::filesystem::path dir;
  Scratch() {
    static int n = 0;
    dir = std::filesystem::temp_directory_path() /
          ("saddle_test_runner_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    std::filesystem::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string file(const std::string& name) const { return (dir / name).string(); }
};

void set_args(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(&a[0]);
  set_command_line(static_cast<int>(argv.size()), argv.data());
}

// Every test starts from the same command line and no cluster array variables.
void fresh_process_state() {
  set_args({"saddle", "synthetic", "--alpha", "1:2:7"});
  for (const char* v : {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN"})
    ::unsetenv(v);
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> out;
  std::string l;
  while (std::getline(f, l)) out.push_back(l);
  return out;
}
std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}
// The lines of a file without its timing line (the only line that may differ between runs).
std::vector<std::string> without_timing(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines)
    if (l.rfind("# timing:", 0) != 0) out.push_back(l);
  return out;
}
// The data rows (after the column header line).
std::vector<std::string> data_rows(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  bool header_seen = false;
  for (const auto& l : lines) {
    if (!l.empty() && l[0] == '#') continue;
    if (!header_seen) {
      header_seen = true;
      continue;
    }
    out.push_back(l);
  }
  return out;
}

const std::vector<std::string> kHeader = {
    std::string("# saddle ") + SADDLE_VERSION, "# command: saddle synthetic --alpha 1:2:7",
    "# model: synthetic", "# solver: none", "chain,point,y,converged"};

RunOptions to_file(const std::string& path) {
  RunOptions r;
  r.out = path;
  r.progress = false;
  return r;
}

}  // namespace

TEST_CASE("run_grid: header, rows in chain order, timing line", "[tools][runner]") {
  fresh_process_state();
  Scratch s;
  for (int threads : {1, 3}) {
    Synthetic syn;
    RunOptions r = to_file(s.file("full.csv"));
    r.threads = threads;
    run_grid(syn.job(), r);
    const auto lines = read_lines(r.out);
    std::vector<std::string> want = kHeader;
    for (const auto& row : expected_rows(0, kChains)) want.push_back(row);
    CHECK(without_timing(lines) == want);
    REQUIRE(lines.size() == want.size() + 1);
    CHECK_THAT(lines.back(), StartsWith("# timing: 13 rows,"));
    for (std::size_t c = 0; c < kChains; ++c) CHECK(syn.calls[c] == 1);  // each chain once
  }
}

TEST_CASE("canonical_command_line drops the run-only options", "[tools][runner]") {
  set_args({"/opt/bin/saddle", "slr", "--alpha", "1,2", "--out", "f.csv", "--shard=0/2", "--resume",
            "--threads", "4", "--no-progress", "--cache", "dir", "--plot", "a.png", "--plot-title=T x",
            "--strict", "--tol", "1e-9"});
  CHECK(grid_files::canonical_command_line() == "saddle slr --alpha 1,2 --strict --tol 1e-9");
  fresh_process_state();
}

TEST_CASE("shards: contiguous chain blocks whose union is the single run", "[tools][runner][shard]") {
  fresh_process_state();
  Scratch s;
  Synthetic whole;
  run_grid(whole.job(), to_file(s.file("full.csv")));
  const auto full = read_lines(s.file("full.csv"));

  // Shard i of N holds chains [floor(7 i / N), floor(7 (i+1) / N)).
  const std::vector<std::vector<std::size_t>> bounds_for_3{{0, 2}, {2, 4}, {4, 7}};
  for (int N : {1, 2, 3, 7}) {
    std::vector<std::string> joined;
    for (int i = 0; i < N; ++i) {
      INFO("shard " << i << "/" << N);
      Synthetic syn;
      RunOptions r = to_file(s.file("part" + std::to_string(i) + ".csv"));
      r.shard = std::to_string(i) + "/" + std::to_string(N);
      run_grid(syn.job(), r);
      const std::size_t lo = kChains * i / N, hi = kChains * (i + 1) / N;
      if (N == 3) {
        CHECK(lo == bounds_for_3[i][0]);
        CHECK(hi == bounds_for_3[i][1]);
      }
      for (std::size_t c = 0; c < kChains; ++c) CHECK(syn.calls[c] == (c >= lo && c < hi ? 1 : 0));
      const auto lines = read_lines(r.out);
      // Header: the single run's, with "# shard: i/N (chains lo..hi-1 of 7, R rows)" before the
      // column line when N > 1 (R = the rows of those chains, counted independently here).
      std::vector<std::string> header = kHeader;
      const std::size_t n_rows = expected_rows(lo, hi).size();
      if (N > 1)
        header.insert(header.end() - 1, "# shard: " + r.shard + " (chains " + std::to_string(lo) + ".." +
                                            std::to_string(hi - 1) + " of 7, " + std::to_string(n_rows) + " rows)");
      REQUIRE(lines.size() >= header.size());
      CHECK(std::vector<std::string>(lines.begin(), lines.begin() + header.size()) == header);
      const auto rows = data_rows(lines);
      CHECK(rows == expected_rows(lo, hi));
      CHECK_THAT(lines.back(), StartsWith("# timing: " + std::to_string(rows.size()) + " rows,"));
      joined.insert(joined.end(), rows.begin(), rows.end());
    }
    CHECK(joined == data_rows(full));
  }
}

TEST_CASE("shards: bad shard texts are InputError", "[tools][runner][shard]") {
  fresh_process_state();
  Scratch s;
  for (const char* bad : {"3/3", "7/3", "-1/3", "1/0", "0/0", "a/b", "1", "1/", "/2", "1/2/3", " 1/2",
                          "1/2 ", "+1/2", "1.0/2", "0x1/2", "0/1000001", "99999999999999999999/2"}) {
    INFO("--shard '" << bad << "'");
    Synthetic syn;
    RunOptions r = to_file(s.file("bad.csv"));
    r.shard = bad;
    CHECK_THROWS_AS(run_grid(syn.job(), r), InputError);
    CHECK(syn.total_calls() == 0);
  }
  // More shards than chains.
  Synthetic syn;
  RunOptions r = to_file(s.file("bad.csv"));
  r.shard = "0/8";
  CHECK_THROWS_AS(run_grid(syn.job(), r), InputError);
  r.shard = "6/7";  // the last shard of as many shards as chains is fine: chain 6 alone
  run_grid(syn.job(), r);
  CHECK(data_rows(read_lines(r.out)) == expected_rows(6, 7));
}

TEST_CASE("shards: the default comes from SLURM_ARRAY_TASK_ID/MIN/COUNT", "[tools][runner][shard]") {
  fresh_process_state();
  Scratch s;
  ::setenv("SLURM_ARRAY_TASK_ID", "5", 1);
  ::setenv("SLURM_ARRAY_TASK_MIN", "4", 1);
  ::setenv("SLURM_ARRAY_TASK_COUNT", "3", 1);  // task 5 of 4..6: shard 1/3, chains 2 and 3
  Synthetic syn;
  RunOptions r = to_file(s.file("slurm.csv"));
  run_grid(syn.job(), r);
  const auto lines = read_lines(r.out);
  CHECK(data_rows(lines) == expected_rows(2, 4));
  CHECK(std::find(lines.begin(), lines.end(),
                  "# shard: 1/3 (chains 2..3 of 7, " + std::to_string(expected_rows(2, 4).size()) + " rows)") !=
        lines.end());
  ::setenv("SLURM_ARRAY_TASK_ID", "3", 1);  // below MIN
  CHECK_THROWS_AS(run_grid(syn.job(), r), InputError);
  ::setenv("SLURM_ARRAY_TASK_ID", "x", 1);
  CHECK_THROWS_AS(run_grid(syn.job(), r), InputError);
  fresh_process_state();
}

TEST_CASE("resume: a truncated file is finished into the uninterrupted one", "[tools][resume]") {
  fresh_process_state();
  Scratch s;
  Synthetic whole;
  run_grid(whole.job(), to_file(s.file("full.csv")));
  const auto full = without_timing(read_lines(s.file("full.csv")));
  const auto rows = expected_rows(0, kChains);
  // Rows at the end of each chain: 1, 3, 6, 7, 9, 12, 13.
  const std::vector<std::size_t> chain_ends{1, 3, 6, 7, 9, 12, 13};
  for (std::size_t k = 0; k <= rows.size(); ++k) {
    for (bool torn : {false, true}) {
      INFO(k << " complete rows kept" << (torn ? ", then a torn line" : ""));
      std::string text;
      for (const auto& h : kHeader) text += h + "\n";
      for (std::size_t i = 0; i < k; ++i) text += rows[i] + "\n";
      if (torn) text += k < rows.size() ? rows[k].substr(0, 3) : std::string("# tim");  // no newline
      write_text(s.file("part.csv"), text);
      Synthetic syn;
      RunOptions r = to_file(s.file("part.csv"));
      r.resume = true;
      run_grid(syn.job(), r);
      const auto lines = read_lines(r.out);
      CHECK(without_timing(lines) == full);
      CHECK_THAT(lines.back(), StartsWith("# timing: 13 rows,"));
      // Chains complete in the kept rows are not computed again; a chain cut inside is.
      std::size_t kept_chains = 0;
      while (kept_chains < kChains && chain_ends[kept_chains] <= k) ++kept_chains;
      for (std::size_t c = 0; c < kChains; ++c) CHECK(syn.calls[c] == (c < kept_chains ? 0 : 1));
    }
  }
}

TEST_CASE("resume: missing, complete and sharded files", "[tools][resume]") {
  fresh_process_state();
  Scratch s;
  Synthetic whole;
  run_grid(whole.job(), to_file(s.file("full.csv")));
  const auto full = without_timing(read_lines(s.file("full.csv")));
  {  // no file yet: a fresh run
    Synthetic syn;
    RunOptions r = to_file(s.file("new.csv"));
    r.resume = true;
    run_grid(syn.job(), r);
    CHECK(without_timing(read_lines(r.out)) == full);
    CHECK(syn.total_calls() == static_cast<int>(kChains));
    // Run again on the complete file: nothing is computed, the content is the same.
    Synthetic again;
    run_grid(again.job(), r);
    CHECK(again.total_calls() == 0);
    CHECK(without_timing(read_lines(r.out)) == full);
  }
  {  // shard 1/2 (chains 3..6) interrupted after chain 3 and its first row of chain 4
    Synthetic syn;
    RunOptions r = to_file(s.file("shard.csv"));
    r.shard = "1/2";
    run_grid(syn.job(), r);
    const auto shard_full = without_timing(read_lines(r.out));
    std::string text;
    for (std::size_t i = 0; i < kHeader.size() + 1 + 2; ++i) text += shard_full[i] + "\n";
    write_text(r.out, text);
    Synthetic resumed;
    r.resume = true;
    run_grid(resumed.job(), r);
    CHECK(without_timing(read_lines(r.out)) == shard_full);
    CHECK(resumed.calls[3] == 0);
    CHECK(resumed.calls[4] == 1);
  }
}

TEST_CASE("resume: damaged or foreign files are refused and left as they are", "[tools][resume]") {
  fresh_process_state();
  Scratch s;
  const auto rows = expected_rows(0, kChains);
  std::string header;
  for (const auto& h : kHeader) header += h + "\n";
  const std::vector<std::string> bad_files{
      header + rows[0] + "\n1,0\n",                         // a short row
      header + rows[0] + "\n1,0,10,1,9\n",                  // a long row
      header + rows[0] + "\n# note\n" + rows[1] + "\n",     // a comment among the rows
      header + rows[0] + "\n1,0,\t10,1\n",                  // a control character
      header + "\n" + rows[0] + "\n",                       // an empty line
      "# saddle 0.0.0\n" + header.substr(header.find('\n') + 1),  // another version
      "chain,point,y,converged\n" + rows[0] + "\n",         // no '#' header
      header.substr(0, header.find("# model")) + "# model: other\n# solver: none\n" +
          "chain,point,y,converged\n",                      // other settings
      "",                                                   // empty file
  };
  for (const auto& text : bad_files) {
    INFO("file:\n" << text);
    write_text(s.file("bad.csv"), text);
    Synthetic syn;
    RunOptions r = to_file(s.file("bad.csv"));
    r.resume = true;
    CHECK_THROWS_AS(run_grid(syn.job(), r), InputError);
    CHECK(syn.total_calls() == 0);
    CHECK(read_text(r.out) == text);
  }
  Synthetic syn;
  RunOptions r;
  r.resume = true;  // to stdout: nothing to resume
  r.progress = false;
  CHECK_THROWS_AS(run_grid(syn.job(), r), InputError);
  r.out = "-";
  CHECK_THROWS_AS(run_grid(syn.job(), r), InputError);
}

TEST_CASE("cache: a second run with the same settings computes nothing", "[tools][runner]") {
  fresh_process_state();
  Scratch s;
  std::filesystem::create_directories(s.dir / "cache");
  Synthetic first;
  RunOptions r = to_file(s.file("a.csv"));
  r.cache_dir = s.file("cache");
  run_grid(first.job(), r);
  Synthetic second;
  r.out = s.file("b.csv");
  run_grid(second.job(), r);
  CHECK(second.total_calls() == 0);
  CHECK(without_timing(read_lines(s.file("b.csv"))) == without_timing(read_lines(s.file("a.csv"))));
  Synthetic other;  // other settings: other cache entries
  other.setting = "synthetic-2";
  r.out = s.file("c.csv");
  run_grid(other.job(), r);
  CHECK(other.total_calls() == static_cast<int>(kChains));
}

TEST_CASE("strict: stops after the first unconverged row", "[tools][runner]") {
  fresh_process_state();
  Scratch s;
  // converged = 0 at chain 2 point 1 (row 5 of 13), in the middle and in the last column.
  for (bool last : {false, true}) {
    INFO((last ? "converged is the last column" : "converged is an inner column"));
    GridJob j;
    j.columns = last ? std::vector<std::string>{"chain", "point", "converged"}
                     : std::vector<std::string>{"chain", "converged", "point"};
    for (std::size_t c = 0; c < kChains; ++c) j.chains.push_back({std::to_string(c), chain_size(c)});
    j.run_chain = [last](std::size_t c) {
      std::vector<std::vector<std::string>> rows;
      for (std::size_t i = 0; i < chain_size(c); ++i) {
        const std::string conv = (c == 2 && i == 1) ? "0" : "1";
        if (last)
          rows.push_back({std::to_string(c), std::to_string(i), conv});
        else
          rows.push_back({std::to_string(c), conv, std::to_string(i)});
      }
      return rows;
    };
    RunOptions r = to_file(s.file("strict.csv"));
    r.strict = true;
    CHECK_THROWS_AS(run_grid(j, r), StrictFailure);
    const auto lines = read_lines(r.out);
    const auto rows = data_rows(lines);
    REQUIRE(rows.size() == 5);  // chains 0 and 1 (3 rows), chain 2 up to its point 1
    CHECK(rows.back() == (last ? "2,1,0" : "2,0,1"));
    CHECK(lines.back().rfind("# timing:", 0) != 0);  // no timing line: --resume can continue
    r.strict = false;
    r.out = s.file("lenient.csv");
    run_grid(j, r);
    CHECK(data_rows(read_lines(r.out)).size() == 13);
  }
}

TEST_CASE("merge: shard files joined in-process equal the single run", "[tools][merge]") {
  fresh_process_state();
  Scratch s;
  Synthetic whole;
  run_grid(whole.job(), to_file(s.file("full.csv")));
  const auto full = without_timing(read_lines(s.file("full.csv")));
  for (int N : {2, 3}) {
    std::vector<std::string> parts;
    for (int i = 0; i < N; ++i) {
      Synthetic syn;
      RunOptions r = to_file(s.file("p" + std::to_string(i) + "of" + std::to_string(N) + ".csv"));
      r.shard = std::to_string(i) + "/" + std::to_string(N);
      run_grid(syn.job(), r);
      parts.push_back(r.out);
    }
    std::vector<std::string> args{"saddle", "merge"};
    args.insert(args.end(), parts.rbegin(), parts.rend());  // any order
    args.insert(args.end(), {"--out", s.file("merged.csv")});
    std::string err;
    REQUIRE(run_cli(args, &err) == kExitOk);
    fresh_process_state();  // run_cli recorded the merge command line; the next shards need ours
    CHECK(err.empty());
    const auto merged = read_lines(s.file("merged.csv"));
    CHECK(without_timing(merged) == full);
    CHECK(merged.back() == "# timing: 13 rows, merged from " + std::to_string(N) + " shards");
  }
  // Refusals (exit 2, one message): a missing shard, a shard twice, an unfinished shard, shards of
  // other settings, a file that is not a shard.
  const std::string p0 = s.file("p0of3.csv"), p1 = s.file("p1of3.csv"), p2 = s.file("p2of3.csv");
  auto merge_error = [&](std::vector<std::string> files) {
    std::vector<std::string> args{"saddle", "merge"};
    args.insert(args.end(), files.begin(), files.end());
    args.insert(args.end(), {"--out", s.file("refused.csv")});
    std::string err;
    const int rc = run_cli(args, &err);
    CHECK(rc == kExitBadInput);
    CHECK_FALSE(std::filesystem::exists(s.file("refused.csv")));
    return err;
  };
  CHECK_THAT(merge_error({p0, p2}), Contains("only 2 files"));
  CHECK_THAT(merge_error({p0, p1, p1}), Contains("shard 1 given twice"));
  CHECK_THAT(merge_error({p0, p1, p2, s.file("full.csv")}), Contains("not a shard output"));
  CHECK_THAT(merge_error({p0, p1, s.file("p1of2.csv")}), Contains("different shard counts"));
  {
    auto lines = read_lines(p2);
    lines.pop_back();  // drop the timing line
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    write_text(s.file("unfinished.csv"), text);
    CHECK_THAT(merge_error({p0, p1, s.file("unfinished.csv")}), Contains("incomplete"));
  }
  {
    fresh_process_state();
    Synthetic other;
    other.setting = "synthetic-2";
    RunOptions r = to_file(s.file("other2.csv"));
    r.shard = "2/3";
    run_grid(other.job(), r);
    CHECK_THAT(merge_error({p0, p1, r.out}), Contains("different settings"));
  }
  {
    std::string text = read_text(p0);  // chains 0 and 1
    text.replace(text.find("\n1,0,10,1\n"), 10, "\n1,0,10\n");  // a short row
    write_text(s.file("short.csv"), text);
    CHECK_THAT(merge_error({s.file("short.csv"), p1, p2}), Contains("malformed"));
  }
  {
    // A deleted row: every line well formed, the union no longer covers the grid.
    std::string text = read_text(p1);  // chains 2 and 3: rows 2,0 2,1 2,2 3,0
    text.erase(text.find("2,1,21,1\n"), 9);
    write_text(s.file("deleted.csv"), text);
    const std::string err = merge_error({p0, s.file("deleted.csv"), p2});
    CHECK_THAT(err, Contains("points are missing"));
    CHECK_THAT(err, Contains("chains 2..3 of 7"));
    // A repeated row (the count still matches when another was deleted).
    std::string dup = read_text(p1);
    dup.replace(dup.find("2,1,21,1\n"), 9, "2,0,20,1\n");
    write_text(s.file("dup.csv"), dup);
    CHECK_THAT(merge_error({p0, s.file("dup.csv"), p2}), Contains("repeats the row"));
    // Junk after the timing line is not dropped silently.
    write_text(s.file("junk.csv"), read_text(p2) + "9,9,99,1\n");
    CHECK_THAT(merge_error({p0, p1, s.file("junk.csv")}), Contains("after its '# timing:' line"));
  }
  fresh_process_state();
}

TEST_CASE("cache: an edited entry is recomputed; the directory is created", "[tools][runner]") {
  fresh_process_state();
  Scratch s;
  Synthetic first;
  RunOptions r = to_file(s.file("a.csv"));
  r.cache_dir = s.file("new_cache");  // does not exist yet
  run_grid(first.job(), r);
  REQUIRE(std::filesystem::is_directory(s.file("new_cache")));
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(s.file("new_cache"))) {
    ++entries;
    // Replace one value of each entry by nan, as a hand edit would.
    std::string text = read_text(e.path().string());
    const auto at = text.find(",1\n", text.find("--\n"));
    REQUIRE(at != std::string::npos);
    text.replace(at, 3, ",nan\n");
    write_text(e.path().string(), text);
  }
  CHECK(entries == kChains);
  Synthetic second;
  r.out = s.file("b.csv");
  run_grid(second.job(), r);
  CHECK(second.total_calls() == static_cast<int>(kChains));  // every edited entry recomputed
  CHECK(without_timing(read_lines(s.file("b.csv"))) == without_timing(read_lines(s.file("a.csv"))));
  Synthetic third;  // the rewritten entries are served again
  r.out = s.file("c.csv");
  run_grid(third.job(), r);
  CHECK(third.total_calls() == 0);
  // A cache path that is a file, or whose parent is missing, is refused before any output.
  write_text(s.file("plain"), "x");
  r.cache_dir = s.file("plain");
  r.out = s.file("d.csv");
  CHECK_THROWS_AS(run_grid(third.job(), r), InputError);
  CHECK_FALSE(std::filesystem::exists(s.file("d.csv")));
  r.cache_dir = s.file("missing/deeper");
  CHECK_THROWS_AS(run_grid(third.job(), r), InputError);
}

TEST_CASE("run options are checked before anything is computed", "[tools][runner]") {
  fresh_process_state();
  Scratch s;
  Synthetic syn;
  RunOptions r = to_file(s.file("x.csv"));
  r.threads = kMaxThreads + 1;
  CHECK_THROWS_AS(run_grid(syn.job(), r), InputError);
  r.threads = -1;
  CHECK_THROWS_AS(run_grid(syn.job(), r), InputError);
  r.threads = 0;
  r.plot = s.file("no_such_dir/x.png");
  CHECK_THROWS_AS(run_grid(syn.job(), r), InputError);
  CHECK(syn.total_calls() == 0);
  CHECK_FALSE(std::filesystem::exists(r.out));
  // A grid above kMaxGridPoints rows is refused from the chain sizes alone.
  GridJob big;
  big.columns = {"a"};
  big.chains.push_back({"k", static_cast<std::size_t>(kMaxGridPoints) + 1});
  big.run_chain = [](std::size_t) -> std::vector<std::vector<std::string>> { throw std::logic_error("computed"); };
  RunOptions rb = to_file(s.file("big.csv"));
  CHECK_THROWS_AS(run_grid(big, rb), InputError);
}

TEST_CASE("a chain that throws keeps the complete chains before it", "[tools][runner]") {
  fresh_process_state();
  Scratch s;
  for (int threads : {1, 2}) {
    INFO("threads " << threads);
    Synthetic syn;
    GridJob j = syn.job();
    auto inner = j.run_chain;
    j.run_chain = [inner](std::size_t c) {
      if (c == 3) throw InputError("chain 3 is outside the domain");
      return inner(c);
    };
    RunOptions r = to_file(s.file("partial.csv"));
    r.threads = threads;
    try {
      run_grid(j, r);
      FAIL("no exception");
    } catch (const InputError& e) {  // the type survives the thread team
      CHECK_THAT(std::string(e.what()), Contains("chain 3 is outside the domain"));
      CHECK_THAT(std::string(e.what()), Contains("6 complete rows"));
    }
    const auto lines = read_lines(r.out);
    CHECK(data_rows(lines) == expected_rows(0, 3));  // chains 0..2, in order, nothing torn
    CHECK(lines.back().rfind("# timing:", 0) != 0);
  }
  // Any other exception type is reported too (exit 1), never terminating the process.
  Synthetic syn;
  GridJob j = syn.job();
  j.run_chain = [](std::size_t) -> std::vector<std::vector<std::string>> { throw std::out_of_range("boom"); };
  CHECK_THROWS_WITH(run_grid(j, to_file(s.file("boom.csv"))), Contains("boom"));
}

namespace {
std::atomic<int> g_host_term{0};
extern "C" void host_term_handler(int) { g_host_term.fetch_add(1); }
}  // namespace

// A host process (the Python module) owns SIGTERM with a handler of its own: StopSignals leaves it
// alone and never lets a signal find SIGTERM at its default in between. It read the previous
// handler by setting SIG_DFL, and a SIGTERM in that window ended the host before its cleanup
// (tests/python/test_batch.py left its temporary CSV behind under load). Here one thread takes
// StopSignals on and off while this one sends itself SIGTERMs: every one must reach the host's
// handler (in the window, the default action would end this test program).
TEST_CASE("StopSignals: a host's SIGTERM handler is never replaced, not even for a moment", "[tools][runner]") {
  struct sigaction act {}, old {};
  act.sa_handler = host_term_handler;
  sigemptyset(&act.sa_mask);
  REQUIRE(::sigaction(SIGTERM, &act, &old) == 0);
  g_host_term = 0;
  clear_interrupt();
  std::atomic<bool> stop{false};
  std::thread t([&] {
    while (!stop.load()) StopSignals s;
  });
  const int n = 2000;
  for (int i = 0; i < n; ++i) {
    ::kill(::getpid(), SIGTERM);
    if (i % 64 == 0) std::this_thread::yield();
  }
  stop = true;
  t.join();
  for (int w = 0; w < 200 && g_host_term.load() == 0; ++w) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  struct sigaction now {};
  REQUIRE(::sigaction(SIGTERM, &old, &now) == 0);
  CHECK(now.sa_handler == host_term_handler);  // still the host's
  CHECK(g_host_term.load() >= 1);               // signals of one kind merge while pending
  CHECK_FALSE(interrupt_requested());           // the program's stop handler never ran
}
