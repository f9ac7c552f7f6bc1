// `saddle slr`: the command group of single-location regression (spec slr.md).
#include "tools/cmd_slr.hpp"

#include "tools/cli_common.hpp"

namespace saddle {
void register_slr(CLI::App& app) {
  CLI::App* slr = app.add_subcommand("slr", "Single-location regression (spec slr.md)");
  slr->require_subcommand(1);
  register_slr_population(*slr);
  register_slr_erm(*slr);
  register_slr_bayes(*slr);
}
}  // namespace saddle
