// `saddle slr erm --symmetry 1rsb`: the one-step replica-symmetry-broken fixed point at zero
// temperature (docs/equations/slr_rsb.md), run on the settings that `slr erm` has parsed and
// validated. Kept apart from tools/commands/cmd_slr_erm.cpp, which only registers the options and calls
// run_erm_rsb().
#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "equations/slr_replica.hpp"
#include "solver/fixed_point.hpp"
#include "tools/runner/runner.hpp"

namespace saddle {

struct ErmRsbOptions {
  std::string symmetry = "rs";  // rs | 1rsb
  int inner = 32;               // inner QMC points per outer point (even)
  // Options of `slr erm` whose default differs for 1rsb, looked up at registration: without them
  // on the command line 1rsb uses --points 1024, --target-se 0, --method anderson, --mix 0.3 and
  // --anderson-depth 3 (slr::RsbCurveOptions).
  const CLI::Option* points = nullptr;
  const CLI::Option* target_se = nullptr;
  const CLI::Option* method = nullptr;
  const CLI::Option* mix = nullptr;
  const CLI::Option* depth = nullptr;
};

// Adds --symmetry and --inner-points to `slr erm` (call after its other options are added).
void add_rsb_options(CLI::App* sub, ErmRsbOptions& o);

// True for --symmetry 1rsb, false for rs; InputError on anything else.
bool rsb_selected(const ErmRsbOptions& o);

// What `slr erm` hands over: its validated settings and options.
struct ErmRsbJob {
  std::vector<slr::ReplicaSetting> settings;
  std::vector<double> alphas;
  std::vector<slr::ReplicaInit> inits;
  std::string init_text, L_dist;
  SolverOptions solver;
  double noise_factor = 0.1;  // CurveOptions::noise_factor
  bool retry = true;
  double target_se = 0.0;
  int max_refine = 2;
  bool refine_unstable = false;
  RunOptions run;
};

// Runs the 1RSB curves (one chain per setting, as RS) and writes the CSV.
void run_erm_rsb(const ErmRsbOptions& o, ErmRsbJob job);

}  // namespace saddle
