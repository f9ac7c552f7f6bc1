// `saddle mc slr`'s options beside their struct (docs/mc_slr.md): McSlrCli holds them,
// add_mc_slr_options describes them, plan_mc_slr checks every one before any output (InputError,
// exit 2) and lays out the points of the grid. tools/commands/cmd_mc_slr.cpp writes the table.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "mc/slr_erm.hpp"
#include "tools/runner/runner.hpp"

namespace saddle {


struct McSlrCli {
  std::string task = "spiked", L = "2", L_dist, nu = "2", lambda = "0.1", delta = "0", alpha = "1,2,4";
  std::string activation = "softmax", init = "informed", mode = "erm", D = "400";
  std::string m_k, q_k, m_v, q_v;
  int seeds = 4, n_test = 20000, max_iter = 20000, restarts = 1;
  std::string keep = "first";
  std::uint64_t seed = 1;
  double erf_b = 0.0, c0 = -1.0, gtol = 1e-9, ftol = 1e-15;
  bool per_seed = false, extrapolate = false;
  CLI::Option* c0_option = nullptr;
  RunOptions run;
};

// One point of the grid: a chain of the runner.
struct McSlrPoint {
  slr::mc::SimSetting set;
  double lambda = 0, alpha = 0;
  double mk = 0, qk = 0, mv = 0, qv = 0;  // population mode
};

// The checked run: the sizes, the points in the order of the table and the ERM options.
struct McSlrPlan {
  bool population = false;  // --mode population
  std::vector<int> Ds;       // --D, each size once
  std::vector<McSlrPoint> points;
  slr::mc::ErmOptions eopt;  // erm mode: everything but lambda and split_seed
};

// The options of `mc slr` on its subcommand, with their domains in words.
void add_mc_slr_options(CLI::App* sub, McSlrCli& o);
// Checks every option, the work and the memory bound (InputError), then lays out the points.
McSlrPlan plan_mc_slr(const McSlrCli& o);

}  // namespace saddle
