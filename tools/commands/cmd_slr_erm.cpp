// `saddle slr erm`: replica-symmetric fixed point of ridge ERM in single-location regression
// (docs/equations/slr_replica.md §4), channel expectations by randomly shifted QMC (§7b), continuation in alpha
// from an informed and/or uninformed start. One row per (L, nu, lambda, delta, activation, init,
// alpha): mean over the R QMC replicates, with test_error_se their standard error.
#include <algorithm>
#include <cmath>
#include <memory>

#include "equations/slr_replica.hpp"
#include "equations/slr_replica_curve.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/commands/cmd_slr.hpp"
#include "tools/commands/cmd_slr_rsb.hpp"
#include "tools/commands/slr_erm_options.hpp"
#include "tools/commands/slr_replica_rows.hpp"
#include "tools/runner/runner.hpp"

namespace saddle {

// Declared in tools/commands/cmd_slr.hpp; here, with the replica model it needs (the fuzz build links
// tools/commands/cmd_slr.cpp without it).
std::vector<std::string> replica_row_key(const slr::ReplicaSetting& s, const std::vector<double>& sorted_alphas,
                                         const std::vector<slr::ReplicaInit>& inits, std::size_t k) {
  return {to_string(s.task),  length_key(slr::replica_lengths(s)),       fmt(s.nu),
          fmt(s.lambda),      fmt(s.delta),                              fmt(sorted_alphas[k % sorted_alphas.size()]),
          to_string(s.activation), to_string(inits[k / sorted_alphas.size()])};
}

namespace {

void run_erm(const ErmCli& o) {
  using namespace slr;
  const ErmPlan plan = plan_slr_erm(o);
  const SolverOptions& opt = plan.opt;
  slr::ReplicaCurveOptions copt = plan.copt;
  const VhatForm vhat = plan.vhat;
  const ChannelKind channel = plan.channel;
  const int points = plan.points;
  const std::vector<ReplicaSetting>& settings = plan.settings;
  const std::vector<double>& alphas = plan.alphas;
  const std::vector<ReplicaInit>& inits = plan.inits;
  if (plan.rsb) {  // --symmetry 1rsb: tools/commands/cmd_slr_rsb.cpp
    run_erm_rsb(o, plan);
    return;
  }

  GridJob job;
  job.columns = replica_head_columns();
  job.columns.push_back("rs_reason");
  for (const auto& c : replica_tail_columns()) job.columns.push_back(c);
  job.text_columns = {"rs_stability", "rs_reason", "path", "reason"};
  CsvTable table(job.columns);  // collects the settings lines
  table.setting("model",
                "SLR ridge ERM, replica-symmetric fixed point (docs/equations/slr_replica.md §4); test_error (S7), "
                "train_error = E(y - f)^2 incl. Delta (§4.6)");
  table.setting("L", o.L_dist.empty()
                         ? "fixed"
                         : "uniform on {" + o.L_dist + "} per sample, one shared (k, v); every "
                           "channel expectation and the test error averaged over L (§4.6)");
  table.setting("vhat", to_string(vhat) +
                            " (stein = (S20'), hessian = (S20)); both forms reported as columns");
  table.setting("qmc", "Sobol, " + std::to_string(points) +
                           (channel == ChannelKind::Sampled ? " points x " : " lines x ") +
                           std::to_string(o.replicates) + " random shifts, seed " +
                           std::to_string(o.seed) +
                           "; one fixed point per replicate, values are means, *_se standard errors; "
                           "refinement: target_se=" + fmt(o.target_se) + " max_refine=" +
                           std::to_string(o.max_refine) +
                           (o.refine_unstable ? " (all points)" : " (points not RS-unstable)") +
                           ", points = QMC points per replicate used");
  table.setting("channel",
                channel == ChannelKind::Sampled
                    ? "sampled: plain QMC over every coordinate of the channel draw (§7b); a replicate "
                      "whose Newton steps end near a fixed point without meeting tol (a jump of the "
                      "sampled map straddling it) is drawn again with a new random shift, at most 2 "
                      "times (path: +redraw); one that still does not converge is solved again with "
                      "the pre-integrated map on points/4 lines (path: +fallback); jump_share from one pre-integrated pass at each "
                      "solution on max(256, points/16) lines, " + std::to_string(o.line_nodes) + " nodes (§4.9)"
                    : "preint: one key-noise direction per QMC point integrated along a line, jumps "
                      "of the proximal minimiser located, Gauss rules of the normal density on the "
                      "pieces, " + std::to_string(o.line_nodes) + " nodes (§4.9)");
  table.setting("prox", "grid1=" + std::to_string(o.grid1) + " grid2=" + std::to_string(o.grid2) +
                            " starts=" + std::to_string(o.starts) + " then Newton");
  table.setting("solver", describe(opt) + " noise_factor=" + fmt(copt.noise_factor) +
                              (!copt.retry ? "" : "; failed replicates retried damped mix=" + fmt(copt.retry_mix) +
                                                      " max_iter=" + std::to_string(retry_iterations(copt))));
  table.setting("continuation",
                "informed: backward from the largest alpha, start (S4.7); uninformed: forward from "
                "the smallest alpha, start m=0.05 q=0.01 V=1; warm starts, " + predictor_text(copt));
  table.setting("columns",
                convergence_rule_text(copt) + "; stalled = number of stalled replicates (value = "
                "the mean of the last stall_window iterates); train_loss = objective (S13)/N at the RS "
                "minimiser; preferred = lowest train_loss among converged inits; coexist = the "
                "inits converged to test errors more than 4 s.e. + 1e-3 apart; at_eigenvalue = "
                "replicon (de Almeida-Thouless) eigenvalue of the RS fixed point from the "
                "Hessian-form Jacobian; rs_stability = stable (at + 2 se < 1), unstable "
                "(at - 2 se > 1: replica symmetry is broken and the RS value is not the ERM "
                "answer) or marginal; jump_share = the relative change of V due to jumps of the "
                "proximal minimiser, max over k, v of Vhat_jump / (lambda + |Vhat_hessian|) "
                "(Vhat_jump = the jump term (S20b) from the located jumps of a pre-integrated pass); "
                "a point with jump_share - 2 se > 0.03 is rs_stability = unstable; rs_reason = "
                "why a point is not stable (replicon, jumps) or empty; path = the iteration each replicate's result came from "
                "(newton: Newton steps with the map's Jacobian from the channel pass; anderson: the "
                "Anderson iteration, alone or as the fallback of newton; damped: the retry), with "
                "counts when the replicates differ, then +redraw:N (replicates solved on a new "
                "random shift) and +fallback:N (on the pre-integrated map)");

  copt.refine_unstable = o.refine_unstable;
  job.plot.y = {"test_error"};
  job.sweep = swept_columns(plan.counts);
  job.plot.series = {"activation", "init"};
  job.plot.flag_column = "rs_stability";
  job.plot.flag_value = "unstable";
  job.plot.flag_label = "RS unstable";
  job.plot.params = {"alpha", "lambda", "nu", "L", "delta"};
  std::string alpha_key;
  for (double a : alphas) alpha_key += fmt(a) + "|";
  // One chain per setting: every init, continuation along alpha (rows: inits x sorted alphas).
  for (const ReplicaSetting& s : settings)
    job.chains.push_back({"L=" + length_key(replica_lengths(s)) + ";nu=" + fmt(s.nu) + ";lambda=" + fmt(s.lambda) +
                              ";delta=" + fmt(s.delta) + ";act=" + to_string(s.activation) +
                              ";inits=" + o.init + ";alpha=" + alpha_key +
                              (s.channel == ChannelKind::Sampled
                                   ? std::string()
                                   : ";channel=preint;nodes=" + std::to_string(s.line.nodes)),
                          inits.size() * alphas.size()});
  // Row k of chain c (replica_curve's order: inits x sorted alphas).
  std::vector<double> sorted_alphas = alphas;
  std::sort(sorted_alphas.begin(), sorted_alphas.end());
  job.row_key = [=](std::size_t c, std::size_t k) { return replica_row_key(settings[c], sorted_alphas, inits, k); };
  job.run_chain = [=](std::size_t c) {
    const ReplicaSetting& s = settings[c];
    std::vector<std::vector<std::string>> rows;
    const auto pts = replica_curve(s, alphas, inits, copt);
    for (const ReplicaPoint& p : pts) {
      std::vector<std::string> row = replica_row_head(s, p, p.Vhat_k_stein, p.Vhat_v_stein);
      row.push_back(to_string(p.rs_reason));
      push_replica_tail(row, p);
      finish_row(row, job.columns, 8, p.converged,
                 "at alpha " + fmt(p.alpha) + " (" + to_string(s.activation) + ")");
      rows.push_back(row);
    }
    return rows;
  };
  job.settings = table.settings();
  run_grid(job, o.run);
}

}  // namespace

void register_slr_erm(CLI::App& slr) {
  auto o = std::make_shared<ErmCli>();
  CLI::App* sub = slr.add_subcommand(
      "erm", "Ridge ERM test/train error vs alpha: replica fixed point (docs/equations/slr_replica.md §4, §7b)");
  add_slr_erm_options(sub, *o);
  sub->callback([o] { run_erm(*o); });
}

}  // namespace saddle
