// The `saddle mc` and `saddle validate` command groups. Each model's simulation module adds its
// own child (tools/cmd_mc_*.cpp); weak defaults keep the program linkable while one is missing.
#include "tools/cmd_groups.hpp"

#include "tools/cli_common.hpp"

namespace saddle {

__attribute__((weak)) void register_mc_rmt(CLI::App&) {}
__attribute__((weak)) void register_validate_rmt(CLI::App&) {}
__attribute__((weak)) void register_mc_slr(CLI::App&) {}
__attribute__((weak)) void register_validate_slr(CLI::App&) {}

void register_groups(CLI::App& app) {
  CLI::App* mc = app.add_subcommand("mc", "Monte Carlo simulation of the finite-size models");
  mc->require_subcommand(1);
  register_mc_slr(*mc);
  register_mc_rmt(*mc);
  CLI::App* validate =
      app.add_subcommand("validate", "Theory against Monte Carlo on built-in or given cases");
  validate->require_subcommand(1);
  register_validate_slr(*validate);
  register_validate_rmt(*validate);
}

std::string build_features() {
  std::string s = " (OpenMP: yes";
#ifdef SADDLE_HAVE_MPI
  s += ", MPI: yes";
#else
  s += ", MPI: no";
#endif
  s += ")";
  return s;
}

}  // namespace saddle
