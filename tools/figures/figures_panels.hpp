// The panel table of `saddle figures` (tools/figures/figures_panels.cpp): what each panel runs and draws.
// The command itself is tools/figures/cmd_figures.cpp.
#pragma once
#include <string>
#include <vector>

namespace saddle {

// One subcommand run of a panel and the columns it contributes.
struct FigureRun {
  std::string source;  // theory | bayes | replica | mc
  std::string series;  // legend label; {col} = the row's value of column col (or a parameter)
  std::string x;       // x column, "col*FACTOR" (FACTOR may be {param}), or "@each" (the {each:..} value)
  std::string y;       // y column
  std::string se;      // standard-error column ("" none)
  std::string args;    // subcommand and flags; {key} = panel parameter; {each:key} repeats the run per
                       // element of the list parameter key (a comma list or start:stop:count[:log])
  std::string ref = {};     // mc only: the source its markers are compared with (z column), "" none
  std::string pick = {};    // "min": per (series, x) keep the lowest y (e.g. the best lambda of a grid)
  std::string filter = {};  // "col=value;col=value": rows kept
};

struct Panel {
  std::string name, title, xlabel, ylabel;
  bool logx = false, logy = false;
  std::string params;  // "key=value ..." (full mode)
  std::string quick;   // overrides in --quick
  std::vector<FigureRun> runs = {};
};

const std::vector<Panel>& figure_panels();

}  // namespace saddle
