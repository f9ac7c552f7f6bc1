// `saddle merge PART... --out FILE` (joins the outputs of `--shard i/N` runs into the file a single
// run writes, refusing anything that would not give exactly that file) and `saddle plot CSV --out
// PNG` (draws an existing CSV).
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "tools/cli/cli_common.hpp"
#include "tools/runner/file_io.hpp"
#include "tools/plotting/gnuplot.hpp"
#include "tools/runner/grid_files.hpp"
#include "tools/runner/runner.hpp"

namespace saddle {
namespace {

using namespace grid_files;

struct MergeCli {
  std::vector<std::string> parts;
  std::string out;
};

struct Part {
  std::string path;
  ShardLine shard;
  bool has_shard = false;
  std::vector<std::string> header, data;
};

// `rows`: data rows read so far from every part (all parts together are one run's grid, at most
// kMaxGridPoints rows: the bound on what merge holds in memory).
Part read_part(const std::string& p, std::size_t& rows) {
  file_io::InputLines f(p, "merge");  // a regular file, bounded (tools/runner/file_io.hpp)
  Part part;
  part.path = p;
  std::string line;
  bool in_header = true, complete = false;
  while (f.next(line)) {
    if (line.rfind(kTimingPrefix, 0) == 0) {
      complete = true;
      break;
    }
    if (in_header && line.rfind(kShardPrefix, 0) == 0) {
      if (part.has_shard || !parse_shard_line(line.substr(std::strlen(kShardPrefix)), part.shard))
        throw InputError("merge: '" + p + "' has a malformed shard line (expected '# shard: i/N ...', 0 <= i < N)");
      part.has_shard = true;
      continue;
    }
    if (in_header) {
      part.header.push_back(line);
      if (line.empty() || line[0] != '#') in_header = false;
    } else {
      if (++rows > static_cast<std::size_t>(kMaxGridPoints))
        throw InputError("merge: the parts hold more data rows than one run writes (" + fmt(kMaxGridPoints) +
                         "), at '" + p + "'");
      part.data.push_back(line);
    }
  }
  if (part.header.empty() || part.header[0].rfind("# saddle ", 0) != 0)
    throw InputError("merge: '" + p + "' is not a saddle CSV");
  if (in_header) throw InputError("merge: '" + p + "' has no column header line");
  if (!part.has_shard) throw InputError("merge: '" + p + "' is not a shard output (no '# shard:' line)");
  if (!complete) throw InputError("merge: '" + p + "' is incomplete (no '# timing:' line); finish it with --resume");
  // Nothing may follow the timing line: a file with lines after it was edited or concatenated.
  while (f.next(line))
    if (!line.empty())
      throw InputError("merge: '" + p + "' has lines after its '# timing:' line (edited or concatenated)");
  const std::size_t ncols = count_fields(part.header.back());
  for (std::size_t i = 0; i < part.data.size(); ++i)
    if (!well_formed_row(part.data[i], ncols))
      throw InputError("merge: '" + p + "': data row " + std::to_string(i + 1) + " is malformed (" +
                       std::to_string(ncols) + " fields expected)");
  return part;
}

void run_merge(const MergeCli& m) {
  check_writable(m.out, "--out");
  for (const auto& p : m.parts) file_io::check_distinct(m.out, "--out", p, "the part");
  std::vector<Part> parts;
  std::size_t rows_read = 0;
  for (const auto& p : m.parts) parts.push_back(read_part(p, rows_read));
  if (parts.empty()) throw InputError("merge: no input files");
  const int N = parts[0].shard.shard.count;
  if (static_cast<std::size_t>(N) > parts.size())
    throw InputError("merge: the parts are shards of " + std::to_string(N) + " but only " +
                     std::to_string(parts.size()) + " files were given");
  std::vector<const Part*> by_index(N, nullptr);
  for (const auto& p : parts) {
    if (p.shard.shard.count != N) throw InputError("merge: parts come from different shard counts");
    if (p.header != parts[0].header) throw InputError("merge: parts were made with different settings");
    const int i = p.shard.shard.index;
    if (by_index[i]) throw InputError("merge: shard " + std::to_string(i) + " given twice");
    by_index[i] = &p;
  }
  for (int i = 0; i < N; ++i)
    if (!by_index[i]) throw InputError("merge: shard " + std::to_string(i) + "/" + std::to_string(N) + " is missing");
  // Coverage: every shard holds exactly the rows of its chains, and the shards' chain blocks tile
  // the grid (the shard lines say which; files written before they did are checked by count only).
  long long next_chain = 0;
  for (int i = 0; i < N; ++i) {
    const Part& p = *by_index[i];
    const ShardLine& s = p.shard;
    if (s.rows < 0) continue;
    const std::string which = "'" + p.path + "' (shard " + std::to_string(i) + "/" + std::to_string(N) +
                              ": chains " + std::to_string(s.lo) + ".." + std::to_string(s.hi - 1) + " of " +
                              std::to_string(s.chains) + ", " + std::to_string(s.rows) + " rows)";
    if (s.chains != by_index[0]->shard.chains || s.lo != next_chain)
      throw InputError("merge: " + which + " does not continue the chains of the shard before it");
    next_chain = s.hi;
    if (static_cast<long long>(p.data.size()) != s.rows)
      throw InputError("merge: " + which + " holds " + std::to_string(p.data.size()) + " data rows: " +
                       (static_cast<long long>(p.data.size()) < s.rows ? "points are missing" : "rows were added") +
                       " (an edited or damaged file); rerun that shard");
    std::set<std::string> seen;
    for (const auto& l : p.data)
      if (!seen.insert(l).second)
        throw InputError("merge: " + which + " repeats the row '" + l.substr(0, 80) + "'");
  }
  if (by_index[0]->shard.rows >= 0 && next_chain != by_index[0]->shard.chains)
    throw InputError("merge: the shards cover chains 0.." + std::to_string(next_chain - 1) + " of " +
                     std::to_string(by_index[0]->shard.chains));
  std::ostringstream os;
  std::size_t rows = 0;
  for (const auto& h : parts[0].header) os << h << "\n";
  for (int i = 0; i < N; ++i)
    for (const auto& l : by_index[i]->data) {
      os << l << "\n";
      ++rows;
    }
  os << kTimingPrefix << " " << rows << " rows, merged from " << N << " shards\n";
  write_output(m.out, os.str());
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
  p->opt.flag_prefix = "--";  // errors name this command's own flags (--y, --by, --diff)
  CLI::App* sub = app.add_subcommand("plot", "Draw a PNG figure from a saddle CSV (gnuplot)");
  sub->add_option("csv", p->csv, "Input CSV written by saddle")->required();
  sub->add_option("--out", p->out, "Output PNG (absent or a regular file, not the input)")->required();
  sub->add_option("--x", p->opt.x, "x column (default: the parameter with most values)");
  sub->add_option("--y", p->opt.y, "y column(s), comma-separated");
  sub->add_option("--z", p->opt.z, "Heat-map column (2-D sweep)");
  sub->add_option("--by", p->opt.by, "Second axis of the heat map");
  sub->add_option("--diff", p->opt.diff, "'COL:A-B': z of rows with COL=A minus rows with COL=B");
  sub->add_option("--title", p->opt.title, "Title");
  sub->add_option("--timeout", p->opt.timeout, "Seconds gnuplot may take, in (0, 86400]; then it is stopped")
      ->capture_default_str();
  sub->callback([p] {
    file_io::check_output(p->out, "--out", false);
    file_io::check_distinct(p->out, "--out", p->csv, "the input");
    gnuplot::check_timeout(p->opt.timeout, "--timeout");
    plot_csv(read_csv(p->csv), PlotHints{}, p->opt, p->out);
  });
}

}  // namespace saddle
