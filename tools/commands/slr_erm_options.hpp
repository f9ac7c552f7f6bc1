// `saddle slr erm`'s options beside their struct: ErmCli holds them, add_slr_erm_options
// describes them, plan_slr_erm checks every one before any output (InputError, exit 2) and builds
// the validated settings. tools/commands/cmd_slr_erm.cpp writes the RS table,
// tools/commands/cmd_slr_rsb.cpp the 1RSB one.
#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "equations/slr_replica.hpp"
#include "equations/slr_replica_curve.hpp"
#include "equations/slr_rsb.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/runner/runner.hpp"

namespace saddle {

// --symmetry and --inner-points.
struct ErmRsbOptions {
  std::string symmetry = "rs";  // rs | 1rsb
  int inner = 32;               // inner QMC points per outer point (even)
  // Options of `slr erm` whose default differs for 1rsb, looked up at registration: without them
  // on the command line 1rsb uses --points 1024, --target-se 0 and the solver of
  // slr::RsbCurveOptions (anderson, mix 0.3, depth 3).
  const CLI::Option* points = nullptr;
  const CLI::Option* target_se = nullptr;
  const CLI::Option* method = nullptr;
  const CLI::Option* mix = nullptr;
  const CLI::Option* depth = nullptr;
};

struct ErmCli {
  std::string task = "spiked", L = "2", L_dist, nu = "2", lambda = "0.1", delta = "0",
              alpha = "0.5:8:16", activation = "softmax,linear", init = "informed", vhat = "stein",
              channel = "sampled";
  int points = 4096, replicates = 8, grid1 = 25, grid2 = 15, starts = 3, line_nodes = 6;
  unsigned long long seed = 1;
  CurveCli curve{slr::ReplicaCurveOptions()};
  double target_se = 0.002;
  int max_refine = 2;
  bool refine_unstable = false;
  SolverOptions solver;
  std::string method;
  RunOptions run;
  CLI::Option* points_opt = nullptr;  // --points given? (else the channel's default)
  ErmRsbOptions rsb;  // --symmetry, --inner-points
  ErmCli() { solver = slr::ReplicaCurveOptions().solver; }
};

// The checked run: one setting per (L, nu, lambda, delta, activation), the alphas and the inits.
struct ErmPlan {
  SolverOptions opt;               // the solver options, finished
  slr::ReplicaCurveOptions copt;   // the curve options (copt.solver == opt)
  slr::VhatForm vhat = slr::VhatForm::Stein;
  slr::ChannelKind channel = slr::ChannelKind::Sampled;
  int points = 0;                  // QMC points per replicate (the channel's default when not given)
  std::vector<slr::ReplicaSetting> settings;
  std::vector<double> alphas;      // as given (the curve sorts them)
  std::vector<slr::ReplicaInit> inits;
  std::vector<std::pair<std::string, std::size_t>> counts;  // values per swept column
  // --symmetry 1rsb: the settings (their RS part as above, --points 1024 unless given) and the
  // curve options with the 1RSB defaults for what was not given.
  bool rsb = false;
  std::vector<slr::RsbSetting> rsb_settings;
  slr::RsbCurveOptions rsb_copt;
};

// The options of `slr erm` on its subcommand, with their domains in words.
void add_slr_erm_options(CLI::App* sub, ErmCli& o);
// True for --symmetry 1rsb, false for rs; InputError on anything else.
bool rsb_selected(const ErmRsbOptions& o);
// Checks every option and setting (InputError), then returns the plan.
ErmPlan plan_slr_erm(const ErmCli& o);

}  // namespace saddle
