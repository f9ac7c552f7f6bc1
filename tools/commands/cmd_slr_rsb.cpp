// `saddle slr erm --symmetry 1rsb` (tools/commands/cmd_slr_rsb.hpp): the 1RSB fixed point at zero
// temperature (docs/equations/slr_rsb.md) along alpha, one row per (setting, init, alpha), with
// the RS columns of `slr erm` first (their 1RSB meaning in the header) and the 1RSB columns after.
#include "tools/commands/cmd_slr_rsb.hpp"

#include <algorithm>
#include <cmath>

#include "equations/slr_rsb.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/commands/cmd_slr.hpp"
#include "tools/commands/slr_replica_rows.hpp"

namespace saddle {

void run_erm_rsb(const ErmCli& o, const ErmPlan& plan) {
  using namespace slr;
  const std::vector<RsbSetting>& settings = plan.rsb_settings;
  const RsbCurveOptions& copt = plan.rsb_copt;
  const RsbSetting& s0 = settings.front();

  GridJob grid;
  grid.columns = replica_head_columns();
  for (const auto& c : replica_tail_columns()) grid.columns.push_back(c);
  for (const char* c : {"symmetry", "x_parisi", "x_parisi_se", "dq_k", "dq_k_se", "dq_v", "dq_v_se",
                        "free_energy", "free_energy_se", "at0_eigenvalue", "at0_eigenvalue_se",
                        "inner_points", "inner_ess", "stein_gap", "x_edge"})  // the 1RSB columns
    grid.columns.push_back(c);
  grid.text_columns = {"rs_stability", "path", "reason", "symmetry"};
  CsvTable table(grid.columns);
  table.setting("model",
                "SLR ridge ERM, one-step replica-symmetry-broken (1RSB) fixed point at zero "
                "temperature (docs/equations/slr_rsb.md); test_error (S7) at the self-overlaps "
                "q = q1, train_error = E<(y - f)^2> incl. Delta with the tilted inner measure (R6)");
  table.setting("L", o.L_dist.empty()
                         ? "fixed"
                         : "uniform on {" + o.L_dist + "} per sample, one shared (k, v)");
  table.setting("qmc", "outer: Sobol, " + std::to_string(s0.rs.n_points) + " points x " +
                           std::to_string(s0.rs.replicates) + " random shifts, seed " +
                           std::to_string(s0.rs.seed) + "; inner: " + std::to_string(o.rsb.inner) +
                           " antithetic moment-matched Sobol points per outer point (R2); one "
                           "fixed point per replicate, values are means, *_se standard errors; "
                           "refinement: target_se=" + fmt(copt.target_se) + " max_refine=" +
                           std::to_string(copt.max_refine) + " (4x outer points)");
  table.setting("prox", "grid1=" + std::to_string(s0.rs.prox.grid1) + " grid2=" +
                            std::to_string(s0.rs.prox.grid2) + " starts=" +
                            std::to_string(s0.rs.prox.n_starts) + " then Newton (global minimum)");
  table.setting("solver", describe(copt.solver) + " noise_factor=" + fmt(copt.noise_factor) +
                              (copt.retry ? "; failed replicates retried damped mix=" +
                                               fmt(copt.retry_mix) + " max_iter=" +
                                               std::to_string(retry_iterations(copt.retry_max_iter,
                                                                               copt.solver.max_iter))
                                         : ""));
  table.setting("continuation",
                "informed: backward from the largest alpha; uninformed: forward from the smallest; "
                "starts = the RS starts (§4.7) with dq = 0.3 (q - m^2) and x = 1; warm starts");
  table.setting("columns",
                "q_k, q_v = q1 (self-overlap), V = intra-state susceptibility, dq = q1 - q0 "
                "(0 up to noise: the 1RSB point has collapsed onto RS), x_parisi = Parisi "
                "parameter x = beta x_beta (R5; x_edge = -1/+1 at the ends of [1e-3, 1e3]); "
                "mhat, qhat = qhat1 = alpha E<|g|^2>, Vhat = 1/V - lambda (R4), Vhat_*_stein = "
                "Vhat, Vhat_*_hessian = alpha E<tr J> (misses the jumps of the prox minimiser); "
                "train_loss = train_error/2 + lambda (q_k + q_v)/(2 alpha), free_energy = the 1RSB "
                "ground-state energy per sample (R1), equal to train_loss at the fixed point; "
                "at_eigenvalue = intra-state replicon, at0_eigenvalue = inter-state replicon "
                "(R7); rs_stability = stability of the 1RSB point from the larger of the two "
                "(stable / marginal / unstable as for RS); preferred = lowest free_energy; "
                "inner_ess = effective share of inner points under the tilt exp(-x M); "
                "stein_gap = |Vhat0 - Vhat1 - x qhat0|/(lambda + |Vhat0|), a check of the inner "
                "Stein identity (noise level 0.01-0.1)");

  table.setting("convergence", convergence_rule_text(copt));
  grid.plot.y = {"test_error"};
  grid.plot.series = {"activation", "init"};
  grid.plot.flag_column = "rs_stability";
  grid.plot.flag_value = "unstable";
  grid.plot.flag_label = "1RSB unstable";
  grid.plot.params = {"alpha", "lambda", "nu", "L", "delta"};
  std::string alpha_key;
  for (double a : plan.alphas) alpha_key += fmt(a) + "|";
  for (const RsbSetting& s : settings)
    grid.chains.push_back({"1rsb;L=" + length_key(replica_lengths(s.rs)) + ";nu=" + fmt(s.rs.nu) +
                               ";lambda=" + fmt(s.rs.lambda) + ";delta=" + fmt(s.rs.delta) +
                               ";act=" + to_string(s.rs.activation) + ";inits=" + o.init +
                               ";inner=" + std::to_string(s.n_inner) + ";alpha=" + alpha_key,
                           plan.inits.size() * plan.alphas.size()});
  const std::vector<double> alphas = plan.alphas;
  const std::vector<ReplicaInit> inits = plan.inits;
  // Row k of chain c (rsb_curve's order: inits x sorted alphas).
  std::vector<double> sorted_alphas = alphas;
  std::sort(sorted_alphas.begin(), sorted_alphas.end());
  grid.row_key = [=](std::size_t c, std::size_t k) {
    return replica_row_key(settings[c].rs, sorted_alphas, inits, k);
  };
  grid.run_chain = [=](std::size_t c) {
    const RsbSetting& s = settings[c];
    std::vector<std::vector<std::string>> rows;
    const auto pts = rsb_curve(s, alphas, inits, copt);
    for (const RsbPoint& p : pts) {
      std::vector<std::string> row = replica_row_head(s.rs, p, p.Vhat_k, p.Vhat_v);
      push_replica_tail(row, p);
      row.push_back("1rsb");
      for (const Estimate* e : {&p.x_parisi, &p.dq_k, &p.dq_v, &p.free_energy, &p.at0_eigenvalue}) {
        row.push_back(fmt(e->mean));
        row.push_back(fmt(e->se));
      }
      row.push_back(std::to_string(p.n_inner));
      row.push_back(fmt(p.inner_ess.mean));
      row.push_back(fmt(p.stein_gap.mean));
      row.push_back(fmt(p.x_edge.mean));
      finish_row(row, grid.columns, 8, p.converged,
                 "at alpha " + fmt(p.alpha) + " (" + to_string(s.rs.activation) + ", 1rsb)");
      rows.push_back(row);
    }
    return rows;
  };
  grid.settings = table.settings();
  run_grid(grid, o.run);
}

}  // namespace saddle
