// `saddle ridge`: the ridge-regression fixture (equations/ridge.hpp), solved by the generic
// fixed-point solver with continuation in alpha. A complete example of a subcommand.
#include <memory>

#include "equations/ridge.hpp"
#include "solver/continuation.hpp"
#include "tools/cli_common.hpp"
#include "tools/runner.hpp"

namespace saddle {
namespace {

struct RidgeCli {
  std::string alpha = "0.5:4:8", lambda = "0.1", delta = "0.25";
  SolverOptions solver;
  std::string method;
  RunOptions run;
};

void run_ridge(const RidgeCli& o) {
  SolverOptions opt = o.solver;
  finish_solver_options(opt, o.method);
  // Documented domain: alpha in [1e-6, 1e6], lambda in [1e-8, 1e6], delta in [0, 1e6]; every
  // corner converges to finite values (alpha = 1e308 overflowed the residual).
  auto range = [](double lo, double hi) {
    SweepRules r;
    r.min = lo;
    r.max = hi;
    return r;
  };
  const auto alphas = parse_sweep(o.alpha, "alpha", range(1e-6, 1e6));
  const auto lambdas = parse_sweep(o.lambda, "lambda", range(1e-8, 1e6));
  const auto deltas = parse_sweep(o.delta, "delta", range(0.0, 1e6));

  GridJob job;
  job.columns = {"alpha", "lambda", "delta", "m", "q", "V", "mhat", "qhat", "Vhat", "test_error",
                 "train_error", "converged", "iterations", "residual"};
  job.settings = {{"model", "ridge fixture (spec slr.md §4.8, prior (S14)); test_error = 1 - 2m + q"},
                  {"solver", describe(opt)},
                  {"continuation", "warm start along alpha, forward, from (m,q,V) = (0,0,1)"}};
  job.plot.y = {"test_error"};
  // One continuation chain per (lambda, delta), along alpha.
  const auto outer = cartesian({lambdas, deltas});
  std::string alpha_key;
  for (double a : alphas) alpha_key += fmt(a) + "|";
  for (const auto& ld : outer)
    job.chains.push_back({"lambda=" + fmt(ld[0]) + ";delta=" + fmt(ld[1]) + ";alpha=" + alpha_key, alphas.size()});
  job.run_chain = [=](std::size_t c) {
    const double lambda = outer[c][0], delta = outer[c][1];
    auto make = [&](double alpha) -> std::unique_ptr<FixedPointSystem> {
      return std::make_unique<ridge::RidgeSystem>(ridge::Params{alpha, lambda, delta});
    };
    auto chain = continuation(make, alphas, ridge::RidgeSystem::cold_start(), opt);
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < alphas.size(); ++i) {
      const SolveResult& r = chain[i];
      Vec obs = ridge::RidgeSystem({alphas[i], lambda, delta}).observables(r.x);
      std::vector<std::string> row{fmt(alphas[i]), fmt(lambda), fmt(delta)};
      for (int k = 0; k < 3; ++k) row.push_back(fmt(r.x[k]));
      for (int k = 0; k < obs.size(); ++k) row.push_back(fmt(obs[k]));
      row.push_back(r.summary.converged ? "1" : "0");
      row.push_back(std::to_string(r.summary.iterations));
      row.push_back(fmt(r.summary.residual));
      rows.push_back(row);
    }
    return rows;
  };
  run_grid(job, o.run);
}

}  // namespace

void register_ridge(CLI::App& app) {
  auto o = std::make_shared<RidgeCli>();
  CLI::App* sub = app.add_subcommand(
      "ridge", "Ridge regression fixture: replica fixed point with a closed form (spec slr.md §4.8)");
  sub->add_option("--alpha", o->alpha, "Sample ratio N/D in [1e-6, 1e6] (value, list a,b, range start:stop:count[:log])")
      ->capture_default_str();
  sub->add_option("--lambda", o->lambda, "Ridge penalty in [1e-8, 1e6] (sweepable)")->capture_default_str();
  sub->add_option("--delta", o->delta, "Noise variance Delta in [0, 1e6] (sweepable)")->capture_default_str();
  add_solver_options(sub, o->solver, o->method);
  add_run_options(sub, o->run);
  sub->callback([o] { run_ridge(*o); });
}

}  // namespace saddle
