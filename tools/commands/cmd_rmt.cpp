// `saddle rmt` (docs/equations/rmt.md): `hermite` (Hermite data of the activation, §3), `attention` (the
// deterministic equivalent of the nonlinear-attention interpolation error, §6, with the
// linear-regression baseline beside it) and `ridge` (the closed-form baseline (LR1)-(LR3), §5).
#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "equations/rmt_attention.hpp"
#include "equations/rmt_hermite.hpp"
#include "equations/rmt_ridge.hpp"
#include "solver/interrupt.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/commands/cmd_rmt_common.hpp"
#include "tools/runner/runner.hpp"

namespace saddle {

std::vector<rmt::Activation> rmt_cli::activations(const std::string& text) {
  return as_input([&] { return rmt::parse_activations(text); }, "--activation");
}

Eigen::Vector3d rmt_cli::coordinates(const std::string& text, const std::string& name) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) parts.push_back(item);
  if (!text.empty() && text.back() == ',') parts.push_back("");
  if (parts.size() != 3)
    throw InputError("--" + name + ": give exactly 3 comma-separated coordinates on (e1, e2, e3), got " +
                     std::to_string(parts.size()) + " in '" + text + "'");
  Eigen::Vector3d v = Eigen::Vector3d::Zero();
  ParamDomain rule;
  rule.min = -kMaxCoordinate;
  rule.max = kMaxCoordinate;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto vals = parse_sweep(parts[i], name, rule);
    if (vals.size() != 1)
      throw InputError("--" + name + ": coordinates are single numbers (the vector is not swept)");
    v(i) = vals[0];
  }
  return v;
}

ParamDomain rmt_cli::c_rule() {
  ParamDomain r;
  r.min = kMinC;
  r.max = kMaxC;
  return r;
}
ParamDomain rmt_cli::gamma_rule() {
  ParamDomain r;
  r.min = kMinGamma;
  r.max = kMaxGamma;
  return r;
}
ParamDomain rmt_cli::snr_rule() {
  ParamDomain r = nonneg_rule();
  r.max = kMaxSnr;
  return r;
}

std::string rmt_cli::vec_text(const Eigen::Vector3d& v) {
  return fmt(v(0)) + ";" + fmt(v(1)) + ";" + fmt(v(2));
}

namespace {

struct AttentionCli {
  std::string c = "0.5", gamma = "1e-6:1:13:log", snr = "1", activation = "tanh";
  std::string wk = "0,0,0", wq = "0,0,0";
  bool keep_diagonal = false;
  int nodes = 48, max_iter = 50000;
  double tol = 1e-13;
  RunOptions run;
};


void run_attention(const AttentionCli& o) {
  const auto cs = parse_sweep(o.c, "c", rmt_cli::c_rule());
  const auto gammas = parse_sweep(o.gamma, "gamma", rmt_cli::gamma_rule());
  const auto snrs = parse_sweep(o.snr, "snr", rmt_cli::snr_rule());
  const auto acts = rmt_cli::activations(o.activation);
  check_grid({cs.size(), gammas.size(), snrs.size(), acts.size()});
  const Eigen::Vector3d wk = rmt_cli::coordinates(o.wk, "wk"), wq = rmt_cli::coordinates(o.wq, "wq");
  // The rule has ~8 pieces of 2 x nodes points and the solver a few dense 3r x 3r steps per point
  // only for the spike (r = rule size): 2000 nodes per half-piece is far beyond convergence
  // (48 resolves every case to 1e-12) and still bounded in memory.
  if (o.nodes < 4 || o.nodes > 2000) throw InputError("--nodes must be in [4, 2000]");
  if (!(o.tol > 0.0) || !(o.tol < 1e-2)) throw InputError("--tol must be in (0, 1e-2)");
  if (o.max_iter < 1 || o.max_iter > 1000000) throw InputError("--max-iter must be in 1..1e6");
  std::vector<rmt::HermiteData> hd;
  for (const auto& a : acts) {
    hd.push_back(rmt::hermite_data(a));
    if (o.keep_diagonal && !std::isfinite(hd.back().kappa_d))
      throw InputError("--keep-diagonal needs a finite kappa_d = lim f(t)/t; '" + a.name +
                       "' has kappa_d = inf (docs/equations/rmt.md §2): remove the diagonal");
  }
  rmt::AttentionOptions opt;
  opt.nodes_per_side = o.nodes;
  opt.tol = o.tol;
  opt.max_iter = o.max_iter;

  GridJob job;
  job.columns = {"c", "gamma", "snr", "activation", "wk", "wq", "a1", "nu", "delta", "delta_tilde",
                 "q", "error", "error_ridge", "converged", "iterations", "residual"};
  job.settings = {
      {"model", "nonlinear attention, deterministic equivalent (docs/equations/rmt.md §6: (R1)-(R6)); "
                "error = -gamma^2 dq/dgamma by implicit differentiation (R6); error_ridge = (LR3)"},
      {"geometry", "mu = sqrt(snr) e1; wk, wq = coordinates on (e1;e2;e3)"},
      {"diagonal", o.keep_diagonal ? "kept (kappa_d = lim f(t)/t)" : "removed (kappa_d = 0)"},
      {"quadrature", "Marchenko-Pastur split Gauss-Legendre rule clustered at the integrand poles, " +
                         std::to_string(o.nodes) + " nodes per half-piece (docs/equations/rmt.md §6.5)"},
      {"solver", "Newton in (log(1+delta), log delta_tilde) with exact Jacobian; residual = "
                 "max(|F1|/delta_tilde, |F2|/(1+delta)); tol=" + fmt(o.tol)}};
  job.plot.y = {"error"};
  job.plot.references = {"error_ridge"};
  job.sweep = swept_columns({{"c", cs.size()}, {"gamma", gammas.size()}, {"snr", snrs.size()}, {"activation", acts.size()}});
  job.plot.series = {"activation"};
  job.plot.log_axes = {"gamma"};
  struct Outer {
    std::size_t act;
    double c, snr;
  };
  std::vector<Outer> outer;
  std::string gkey;
  for (double g : gammas) gkey += fmt(g) + "|";
  for (std::size_t a = 0; a < acts.size(); ++a)
    for (double c : cs)
      for (double snr : snrs) {
        outer.push_back({a, c, snr});
        job.chains.push_back({"act=" + acts[a].name + ";c=" + fmt(c) + ";snr=" + fmt(snr) +
                                  ";wk=" + rmt_cli::vec_text(wk) + ";wq=" + rmt_cli::vec_text(wq) +
                                  ";keep=" + (o.keep_diagonal ? "1" : "0") +
                                  ";nodes=" + std::to_string(o.nodes) + ";tol=" + fmt(o.tol) +
                                  ";gamma=" + gkey,
                              gammas.size()});
      }
  const bool keep = o.keep_diagonal;
  const std::vector<std::string> job_columns = job.columns;
  job.row_key = [=](std::size_t ci, std::size_t k) {
    const Outer& ou = outer[ci];
    return std::vector<std::string>{fmt(ou.c), fmt(gammas[k]), fmt(ou.snr), acts[ou.act].name,
                                    rmt_cli::vec_text(wk), rmt_cli::vec_text(wq)};
  };
  job.run_chain = [=](std::size_t ci) {
    const Outer& ou = outer[ci];
    const rmt::HermiteData& h = hd[ou.act];
    rmt::Geometry geo;
    geo.mu << std::sqrt(ou.snr), 0.0, 0.0;
    geo.wk = wk;
    geo.wq = wq;
    std::vector<std::vector<std::string>> rows;
    const WorkShare work = current_work();  // progress per point (solver/interrupt.hpp)
    for (double g : gammas) {
      if (interrupt_requested()) break;  // the runner drops the chain
      work.add(1.0 / gammas.size());
      rmt::AttentionResult r = rmt::solve_attention(rmt::make_params(ou.c, g, h, keep, geo), opt);
      const double er = rmt::ridge_baseline(ou.c, g, ou.snr).error;
      rows.push_back({fmt(ou.c), fmt(g), fmt(ou.snr), acts[ou.act].name, rmt_cli::vec_text(wk),
                      rmt_cli::vec_text(wq), fmt(h.a1), fmt(h.nu), fmt(r.delta),
                      fmt(r.delta_tilde), fmt(r.q), fmt(r.error), fmt(er),
                      r.converged ? "1" : "0", std::to_string(r.iterations), fmt(r.residual)});
      require_finite(rows.back(), job_columns, 6, "in rmt attention (c=" + fmt(ou.c) + ", gamma=" + fmt(g) + ")");
    }
    return rows;
  };
  run_grid(job, o.run);
}

struct RidgeCli {
  std::string c = "0.5", gamma = "0,1e-6:1:13:log", snr = "1";
  RunOptions run;
};

void run_ridge(const RidgeCli& o) {
  const auto cs = parse_sweep(o.c, "c", rmt_cli::c_rule());
  const auto gammas = parse_sweep(o.gamma, "gamma", nonneg_rule());
  for (double g : gammas)
    if (g != 0.0 && !(g >= rmt_cli::kMinGamma && g <= 1e10))
      throw InputError("--gamma: value " + fmt(g) + " out of range (must be 0 or in [" +
                       fmt(rmt_cli::kMinGamma) + ", 1e10])");
  const auto snrs = parse_sweep(o.snr, "snr", rmt_cli::snr_rule());
  check_grid({cs.size(), gammas.size(), snrs.size()});
  GridJob job;
  job.columns = {"c", "gamma", "snr", "m", "q", "error"};
  job.sweep = swept_columns({{"c", cs.size()}, {"gamma", gammas.size()}, {"snr", snrs.size()}});
  job.settings = {{"model", "linear-regression baseline Phi = X, closed form (docs/equations/rmt.md §5 "
                            "(LR1)-(LR3)); gamma = 0: ridgeless limit (1-c)^+/(1+snr), m and q "
                            "are inf there for c <= 1"}};
  job.plot.y = {"error"};
  job.plot.log_axes = {"gamma"};
  std::vector<std::pair<double, double>> outer;
  std::string gkey;
  for (double g : gammas) gkey += fmt(g) + "|";
  for (double c : cs)
    for (double snr : snrs) {
      outer.push_back({c, snr});
      job.chains.push_back({"c=" + fmt(c) + ";snr=" + fmt(snr) + ";gamma=" + gkey, gammas.size()});
    }
  const std::vector<std::string> columns = job.columns;
  job.row_key = [=](std::size_t ci, std::size_t k) {
    return std::vector<std::string>{fmt(outer[ci].first), fmt(gammas[k]), fmt(outer[ci].second)};
  };
  job.run_chain = [=](std::size_t ci) {
    std::vector<std::vector<std::string>> rows;
    for (double g : gammas) {
      rmt::RidgeBaseline r = rmt::ridge_baseline(outer[ci].first, g, outer[ci].second);
      rows.push_back({fmt(outer[ci].first), fmt(g), fmt(outer[ci].second), fmt(r.m), fmt(r.q),
                      fmt(r.error)});
      if (g > 0.0)  // gamma = 0: m = q = inf for c <= 1 is the documented ridgeless limit
        require_finite(rows.back(), columns, 3, "in rmt ridge (c=" + fmt(outer[ci].first) + ", gamma=" + fmt(g) + ")");
    }
    return rows;
  };
  run_grid(job, o.run);
}

struct HermiteCli {
  std::string activation = "tanh,erf,relu,sigmoid,cos,exp,linear";
  std::string out;
};

void run_hermite(const HermiteCli& o) {
  check_writable(o.out, "--out");
  const auto acts = rmt_cli::activations(o.activation);
  CsvTable table({"activation", "a0", "a1", "a2", "nu", "sigma2", "kappa_d"});
  table.setting("model", "Hermite data of f (docs/equations/rmt.md §3, probabilists' convention); a0 is "
                         "removed (f centred); nu = E[(f - a0)^2]; sigma2 = nu - a1^2; kappa_d = "
                         "lim f(t)/t (used only with --keep-diagonal)");
  table.setting("quadrature", "composite 20-point Gauss-Legendre on unit panels of [-40, 40], "
                              "split at the kinks of f");
  for (const auto& a : acts) {
    rmt::HermiteData h = rmt::hermite_data(a);
    table.add_row({a.name, fmt(h.a0), fmt(h.a1), fmt(h.a2), fmt(h.nu), fmt(h.sigma2),
                   fmt(h.kappa_d)});
  }
  table.write_to(o.out);
}

}  // namespace

void register_rmt(CLI::App& app) {
  CLI::App* rmt = app.add_subcommand(
      "rmt", "Nonlinear attention vs linear regression: interpolation error (docs/equations/rmt.md)");
  rmt->require_subcommand(1);

  auto h = std::make_shared<HermiteCli>();
  CLI::App* sh = rmt->add_subcommand("hermite", "Hermite coefficients a0 (removed), a1, a2, nu, "
                                                "sigma^2, kappa_d of the activations (docs/equations/rmt.md §3)");
  sh->add_option("--activation", h->activation,
                 "Comma-separated list of " + rmt::activation_help())
      ->capture_default_str();
  sh->add_option("--out", h->out, "Write the CSV to this file instead of stdout");
  sh->callback([h] { run_hermite(*h); });

  auto a = std::make_shared<AttentionCli>();
  CLI::App* sa = rmt->add_subcommand(
      "attention", "Deterministic equivalent of the nonlinear-attention interpolation error "
                   "E(gamma) (docs/equations/rmt.md §6), with the linear-regression baseline");
  sa->add_option("--c", a->c, "Ratio c = p/n in [1e-4, 1e4] (value, list a,b, range start:stop:count[:log])")
      ->capture_default_str();
  sa->add_option("--gamma", a->gamma, "Ridge gamma in [1e-10, 1e8] (sweepable)")->capture_default_str();
  sa->add_option("--snr", a->snr, "|mu|^2 in [0, 1e6], mu = sqrt(snr) e1 (sweepable)")->capture_default_str();
  sa->add_option("--activation", a->activation, "Activation(s): " + rmt::activation_help())
      ->capture_default_str();
  sa->add_option("--wk", a->wk, "w_K as 3 coordinates on (e1,e2,e3), each in [-1e3, 1e3], e.g. 1,0,0 (not swept)")
      ->capture_default_str();
  sa->add_option("--wq", a->wq, "w_Q as coordinates on (e1,e2,e3) (not swept)")->capture_default_str();
  sa->add_flag("--keep-diagonal", a->keep_diagonal,
               "Keep the kernel diagonal (kappa_d = lim f(t)/t) instead of removing it");
  sa->add_option("--nodes", a->nodes, "Quadrature nodes per half-piece of the MP rule, in [4, 2000]")
      ->capture_default_str();
  sa->add_option("--tol", a->tol, "Tolerance on the relative residual of (R1)-(R2), in (0, 1e-2)")
      ->capture_default_str();
  sa->add_option("--max-iter", a->max_iter, "Cap on all iterations of a point (Newton steps of both passes, then the damped fallback), in [1, 1e6]")
      ->capture_default_str();
  add_run_options(sa, a->run);
  sa->callback([a] { run_attention(*a); });

  auto r = std::make_shared<RidgeCli>();
  CLI::App* sr = rmt->add_subcommand(
      "ridge", "Linear-regression baseline E_RR(gamma), closed form (LR1)-(LR3) (docs/equations/rmt.md §5); "
               "gamma = 0 gives the ridgeless limit");
  sr->add_option("--c", r->c, "Ratio c = p/n in [1e-4, 1e4] (sweepable)")->capture_default_str();
  sr->add_option("--gamma", r->gamma, "Ridge gamma: 0 (ridgeless) or in [1e-10, 1e10] (sweepable)")
      ->capture_default_str();
  sr->add_option("--snr", r->snr, "|mu|^2 in [0, 1e6] (sweepable)")->capture_default_str();
  add_run_options(sr, r->run);
  sr->callback([r] { run_ridge(*r); });
}

}  // namespace saddle
