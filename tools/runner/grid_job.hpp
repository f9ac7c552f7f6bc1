// A job of the grid runner (tools/runner/runner.hpp): its columns, header settings, chains and how to
// compute a chain's rows. Read by the runner and by the grid files (tools/runner/grid_files.hpp).
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tools/plotting/plot.hpp"

namespace saddle {

struct Chain {
  std::string key;   // parameter values of the chain, for the cache (e.g. "lambda=0.1;alpha=1|2")
  std::size_t size;  // number of rows it produces
};

struct GridJob {
  std::vector<std::string> columns;
  std::vector<std::pair<std::string, std::string>> settings;  // '# key: value' header lines
  std::vector<std::string> sweep;  // swept parameter columns: '# sweep: a, b' (plots group by them)
  std::vector<Chain> chains;
  // Rows of chain c, in order; must be deterministic and thread-safe (called concurrently).
  std::function<std::vector<std::vector<std::string>>(std::size_t c)> run_chain;
  // Optional, for --resume: the leading fields (the parameters, as written) of row k of chain c,
  // without computing it. Where given, every kept row is checked to sit at its place in the grid.
  std::function<std::vector<std::string>(std::size_t c, std::size_t k)> row_key;
  // For --resume: the columns past the row key that hold text (a label, a verdict, a path). Every
  // other cell past the row key must be a number (inf allowed) or empty, or the row is refused.
  std::vector<std::string> text_columns;
  PlotHints plot;  // what a default plot shows
};

}  // namespace saddle
