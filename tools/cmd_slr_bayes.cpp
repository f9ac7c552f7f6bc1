// `saddle slr bayes`: Bayes-optimal state evolution of single-location regression
// (docs/equations/slr_bayes.md §5) vs alpha, from an informed and an uninformed start, with the alphas where the two starts
// reach different fixed points flagged (hard phase). QMC channel expectations (§7b): values are
// means over R random shifts, *_se their standard errors.
#include <algorithm>
#include <cmath>
#include <memory>

#include "equations/slr_bayes.hpp"
#include "tools/cli_common.hpp"
#include "tools/cmd_slr.hpp"
#include "tools/runner.hpp"

namespace saddle {
namespace {

struct BayesCli {
  std::string task = "spiked", L = "2", L_dist, nu = "2", delta = "0", alpha = "0.5:8:16",
              init = "informed,uninformed";
  int points = 8192, replicates = 8, inner = 0;
  unsigned long long seed = 1;
  SolverOptions solver;
  std::string method;
  RunOptions run;
  BayesCli() { solver = slr::BayesCurveOptions().solver; }
};

void run_bayes(const BayesCli& o) {
  using namespace slr;
  SolverOptions opt = o.solver;
  finish_solver_options(opt, o.method);
  const Task task = parse_task_option(o.task);
  const auto laws = parse_length_laws(o.L, o.L_dist, 8);
  // Documented domain (README "Errors and exit codes").
  const SlrReplicaRules rules = slr_replica_rules(task);
  const auto nus = parse_sweep(o.nu, "nu", rules.nu);
  const auto deltas = parse_sweep(o.delta, "delta", rules.scale);
  const auto alphas = parse_sweep(o.alpha, "alpha", rules.alpha);
  const auto init_names = parse_names(o.init, "init", {"informed", "uninformed"});
  check_grid({laws.size(), nus.size(), deltas.size(), init_names.size(), alphas.size()});
  std::vector<BayesInit> inits;
  for (const auto& s : init_names)
    inits.push_back(s == "informed" ? BayesInit::Informed : BayesInit::Uninformed);
  if (o.points < 16) throw InputError("--points: must be >= 16");
  if (o.replicates < 2) throw InputError("--replicates: must be >= 2 (error bars need R >= 2)");
  if (o.points > (1 << 22)) throw InputError("--points: must be <= 4194304");
  if (o.replicates > 1024) throw InputError("--replicates: must be <= 1024");
  checked_count({static_cast<double>(o.points), static_cast<double>(o.replicates)}, 1 << 24,
                "--points x --replicates");
  std::vector<BayesSetting> settings;
  for (const auto& law : laws)
    for (double nu : nus)
      for (double delta : deltas) {
        BayesSetting s;
        s.task = task;
        s.L = law.front();
        if (law.size() > 1) s.lengths = law;
        s.nu = nu;
        s.delta = delta;
        s.n_points = o.points;
        s.replicates = o.replicates;
        s.seed = o.seed;
        s.inner_nodes = o.inner;
        try {
          validate(s);
        } catch (const std::exception& e) {
          throw InputError(e.what());
        }
        settings.push_back(s);
      }

  CsvTable table({"task", "L", "nu", "delta", "alpha", "init", "Q_k", "Q_v", "test_error",
                  "converged", "iterations", "residual", "test_error_se", "Q_k_se", "Q_v_se",
                  "Qhat_k", "Qhat_v", "A_hat", "B_hat", "e_bayes", "replicates", "hard_phase"});
  table.setting("model",
                "SLR Bayes-optimal state evolution (docs/equations/slr_bayes.md §5, (S23)-(S24)); test_error = "
                "(S25) for spiked, 1 - 2 Q_v B_hat + Q_v A_hat for max; A_hat = B_hat is the "
                "Nishimori identity; e_bayes = population Bayes risk (S9), the alpha -> inf limit");
  table.setting("qmc", "Sobol, " + std::to_string(o.points) + " points x " +
                           std::to_string(o.replicates) + " random shifts, seed " +
                           std::to_string(o.seed) + "; one fixed point per replicate");
  table.setting("solver", describe(opt));
  table.setting("starts",
                "informed Q = (0.999, 0.999), uninformed Q = (1e-3, 1e-3), fresh at every alpha "
                "(§5)");
  table.setting("columns",
                "hard_phase = 1 where both starts converged and their Q differ by more than "
                "4 s.e. + 1e-3 (two fixed points)");
  BayesCurveOptions copt;
  copt.solver = opt;
  GridJob job;
  job.columns = table.columns();
  job.settings = table.settings();
  job.plot.y = {"test_error"};
  job.sweep = swept_columns({{"L", laws.size()}, {"nu", nus.size()}, {"delta", deltas.size()}, {"alpha", alphas.size()},
                             {"init", init_names.size()}});
  job.plot.references = {"e_bayes"};
  job.plot.params = {"alpha", "nu", "L", "delta"};
  std::string alpha_key;
  for (double a : alphas) alpha_key += fmt(a) + "|";
  for (const BayesSetting& s : settings)
    job.chains.push_back({"L=" + length_key(bayes_lengths(s)) + ";nu=" + fmt(s.nu) + ";delta=" + fmt(s.delta) +
                              ";inits=" + o.init + ";alpha=" + alpha_key,
                          inits.size() * alphas.size()});
  // Row k of chain c (bayes_curve's order: inits x sorted alphas).
  std::vector<double> sorted_alphas = alphas;
  std::sort(sorted_alphas.begin(), sorted_alphas.end());
  job.row_key = [=](std::size_t c, std::size_t k) {
    const BayesSetting& s = settings[c];
    return std::vector<std::string>{to_string(s.task), length_key(bayes_lengths(s)), fmt(s.nu), fmt(s.delta),
                                    fmt(sorted_alphas[k % sorted_alphas.size()]),
                                    to_string(inits[k / sorted_alphas.size()])};
  };
  job.run_chain = [=](std::size_t c) {
    const BayesSetting& s = settings[c];
    std::vector<std::vector<std::string>> rows;
    const auto pts = bayes_curve(s, alphas, inits, copt);
    const double eb = bayes_risk(s.task, bayes_lengths(s), s.nu);
    for (const BayesPoint& p : pts) {
      std::vector<std::string> row{to_string(s.task), length_key(bayes_lengths(s)), fmt(s.nu),
                                   fmt(s.delta), fmt(p.alpha), to_string(p.init),
                                   fmt(p.Q_k.mean), fmt(p.Q_v.mean), fmt(p.test_error.mean),
                                   p.converged ? "1" : "0", std::to_string(p.iterations),
                                   fmt(p.residual), fmt(p.test_error.se), fmt(p.Q_k.se),
                                   fmt(p.Q_v.se), fmt(p.Qhat_k.mean), fmt(p.Qhat_v.mean),
                                   fmt(p.A_hat.mean), fmt(p.B_hat.mean), fmt(eb),
                                   std::to_string(s.replicates), p.coexist ? "1" : "0"};
      finish_row(row, job.columns, 6, p.converged, "at alpha " + fmt(p.alpha));
      rows.push_back(row);
    }
    return rows;
  };
  run_grid(job, o.run);
}

}  // namespace

void register_slr_bayes(CLI::App& slr) {
  auto o = std::make_shared<BayesCli>();
  CLI::App* sub = slr.add_subcommand(
      "bayes", "Bayes-optimal error vs alpha: state evolution (docs/equations/slr_bayes.md §5), hard-phase check");
  sub->add_option("--task", o->task, "spiked | max")->capture_default_str();
  sub->add_option("--L", o->L, "Number of tokens, integers in [1, 8] (sweepable)")->capture_default_str();
  sub->add_option("--L-dist", o->L_dist,
                  "Variable length: L drawn uniformly from this set (e.g. 1,2,3) per sample, "
                  "observed by the BO predictor (§1.4); excludes --L");
  sub->add_option("--nu", o->nu, "Signal strength in [0, 1e3]; inf allowed for max (sweepable)")
      ->capture_default_str();
  sub->add_option("--delta", o->delta, "Noise variance Delta in [0, 1e4] (sweepable)")
      ->capture_default_str();
  sub->add_option("--alpha", o->alpha, "Sample ratio N/D in [1e-3, 1e4] (value, list, start:stop:count[:log])")
      ->capture_default_str();
  sub->add_option("--init", o->init, "informed,uninformed (comma list)")->capture_default_str();
  sub->add_option("--points", o->points, "QMC points per replicate (§7b), in [16, 4194304]")->capture_default_str()
      ->group("Integration");
  sub->add_option("--replicates", o->replicates, "QMC random shifts R in [2, 1024]; points x R <= 2^24")
      ->capture_default_str()->group("Integration");
  sub->add_option("--seed", o->seed, "Seed of the random shifts")->capture_default_str()
      ->group("Integration");
  sub->add_option("--inner-nodes", o->inner,
                  "Gauss-Hermite nodes per axis for G_eps in max-SLR (0: automatic)")
      ->capture_default_str()->group("Integration");
  add_run_options(sub, o->run);
  add_solver_options(sub, o->solver, o->method);
  sub->callback([o] { run_bayes(*o); });
}

}  // namespace saddle
