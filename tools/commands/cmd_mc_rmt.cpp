// `saddle mc rmt` (Monte Carlo of the finite-size nonlinear-attention model, docs/equations/rmt.md §8),
// through the grid runner (one chain per setting: ordered incremental output, --resume, --shard,
// --threads, SIGINT/SIGTERM keep every finished row). `saddle validate rmt` is in
// tools/commands/cmd_validate_rmt.cpp.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "mc/rmt_sim.hpp"
#include "mc/rmt_validate.hpp"
#include "solver/interrupt.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/runner/runner.hpp"
#include "tools/commands/cmd_groups.hpp"
#include "tools/commands/cmd_rmt_common.hpp"

namespace saddle {
namespace {

PlotHints mc_rmt_hints() {
  PlotHints h;
  h.y = {"mean"};
  h.params = {"gamma", "c", "snr", "n"};
  h.log_axes = {"gamma"};
  return h;
}

using rmt::mc::Model;


std::vector<Model> parse_models(const std::string& text) {
  std::vector<Model> out;
  for (const std::string& name : parse_names(text, "model", {"true", "surrogate", "ridge"})) {
    Model m = rmt::mc::parse_model(name);
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  }
  return out;
}


// ------------------------------------------------------------------------------- mc rmt
struct McRmtCli {
  int n = 1024, draws = 16;
  std::uint64_t seed = 1;
  std::string c = "0.25", gamma = "1e-4:10:6:log", snr = "1", activation = "tanh";
  std::string wk = "0,0,0", wq = "0,0,0", model = "true";
  bool keep_diagonal = false;
  RunOptions run;
};

// Columns of the simulated values (the rest are parameters).
constexpr std::size_t kFirstValue = 12;

void run_mc_rmt(const McRmtCli& o) {
  const auto cs = parse_sweep(o.c, "c", rmt_cli::c_rule());
  const auto gammas = parse_sweep(o.gamma, "gamma", rmt_cli::gamma_rule());
  const auto snrs = parse_sweep(o.snr, "snr", rmt_cli::snr_rule());
  const auto acts = rmt_cli::activations(o.activation);
  const Eigen::Vector3d wk = rmt_cli::coordinates(o.wk, "wk"), wq = rmt_cli::coordinates(o.wq, "wq");
  const std::vector<Model> wanted = parse_models(o.model);
  if (o.n < 2) throw InputError("--n must be >= 2");
  if (o.draws < 2) throw InputError("--draws must be >= 2 (a standard error needs two draws)");
  if (o.draws > 100000) throw InputError("--draws must be <= 100000");
  for (double c : cs)  // p = round(c n) must fit the size check below before it is formed
    checked_count({c, static_cast<double>(o.n), static_cast<double>(o.n)}, 1.2e8, "--n, --c: p * n");
  checked_count({static_cast<double>(o.draws), static_cast<double>(gammas.size()), 3.0}, 1e8,
                "--draws x gammas x models");
  std::vector<Model> models = wanted;  // the ridge baseline always runs, for diff_ridge
  if (std::find(models.begin(), models.end(), Model::Ridge) == models.end())
    models.push_back(Model::Ridge);
  // Validate every setting before any simulation or output.
  std::vector<rmt::mc::SimSetting> settings;
  for (const auto& a : acts)
    for (double c : cs)
      for (double snr : snrs) {
        rmt::mc::SimSetting s;
        s.n = o.n;
        s.c = c;
        s.snr = snr;
        s.act = a;
        s.h = rmt::hermite_data(a);
        s.keep_diagonal = o.keep_diagonal;
        s.wk = wk;
        s.wq = wq;
        s.gammas = gammas;
        s.models = models;
        s.draws = o.draws;
        s.seed = o.seed;
        as_input([&] { return rmt::mc::validate_setting(s); });
        settings.push_back(s);
      }
  // Memory: one draw holds X (p x n), T and K (n x n), Phi and a Gram matrix, in double; one
  // draw per thread at once.
  {
    double per_draw = 0;
    for (const auto& s : settings)
      per_draw = std::max(per_draw, 8.0 * (3.0 * s.p() * s.n + 4.0 * double(s.n) * s.n +
                                           2.0 * std::min<double>(s.p(), s.n) * std::min<double>(s.p(), s.n)));
    const int threads = o.run.threads > 0 ? o.run.threads : omp_get_max_threads();
    const double total = per_draw * std::min(threads, o.draws);
    if (!(total <= simulation_memory_limit_bytes()))
      throw InputError("mc rmt: " + std::to_string(std::min(threads, o.draws)) + " draws at once need about " +
                       bytes_text(total) + ", above the memory bound " +
                       bytes_text(simulation_memory_limit_bytes()) + "; use a smaller --n or --threads");
  }
  // A finite-size kernel can overflow where the deterministic equivalent does not (exp of
  // x^T W x / sqrt p with large weights or signal): the exponential kernel's first draw is
  // simulated up front, so that the usual overflow is refused before any output. (An overflow in
  // a later draw stops the run there, with the complete rows kept.)
  auto overflow_error = [](const rmt::mc::SimSetting& s, Model m) {
    return InputError("mc rmt: the simulation overflowed (model " + rmt::mc::to_string(m) +
                      ", activation " + s.act.name + ", c = " + fmt(s.c) + ", snr = " + fmt(s.snr) +
                      "): the kernel values exceed double precision; use smaller --wk/--wq or --snr, "
                      "or another activation");
  };
  for (const auto& s : settings) {
    if (std::isfinite(s.h.kappa_d) ||
        std::find(wanted.begin(), wanted.end(), Model::True) == wanted.end())
      continue;
    rmt::mc::SimSetting probe = s;
    probe.models = {Model::True};
    const rmt::mc::DrawResult d = rmt::mc::simulate_draw(probe, 0);
    for (double e : d.error[0])
      if (!std::isfinite(e)) throw overflow_error(s, Model::True);
  }

  GridJob job;
  job.columns = {"source", "model", "n", "p", "c", "gamma", "snr", "activation", "wk", "wq",
                 "draws", "seed", "mean", "se", "diff_ridge_mean", "diff_ridge_se", "trace_mean",
                 "trace_se"};
  job.plot = mc_rmt_hints();
  job.settings = {
      {"model", "finite-size simulation of docs/equations/rmt.md §8: X = Z + mu y^T, mu = sqrt(snr) e1, "
                "K = f_c(X^T W X/sqrt p)/sqrt p (true), a1(T/p - I) + sigma Xi/sqrt p "
                "(surrogate, §8.2), Phi = X (ridge); E(gamma) from one tridiagonal reduction of "
                "the smaller Gram matrix per draw"},
      {"diagonal", o.keep_diagonal ? "kept" : "removed"},
      {"columns", "mean, se: E over draws (se = sd/sqrt(draws)); diff_ridge: E_model - "
                  "E_ridge on the same draws; trace: (gamma^2/n) tr (Phi^T Phi/n + "
                  "gamma)^-2 (the mu = 0 statistic of §8.1.7)"},
      {"seeding", "draw d uses (seed, d) only: independent of the thread count"},
      {"run", "n=" + std::to_string(o.n) + " draws=" + std::to_string(o.draws) + " seed=" +
                  std::to_string(o.seed) + " models=" + o.model + " gamma=" + o.gamma + " wk=" +
                  rmt_cli::vec_text(wk) + " wq=" + rmt_cli::vec_text(wq)}};
  for (const auto& s : settings)  // one chain per setting: its rows for every model and gamma
    job.chains.push_back({"act=" + s.act.name + ";c=" + fmt(s.c) + ";snr=" + fmt(s.snr),
                          wanted.size() * gammas.size()});
  // The models of setting s that are written, in the simulation's order.
  auto written_models = [=](const rmt::mc::SimSetting& s) {
    std::vector<Model> out;
    for (Model m : s.models)
      if (std::find(wanted.begin(), wanted.end(), m) != wanted.end()) out.push_back(m);
    return out;
  };
  // The leading fields of a row (source .. seed). The ridge baseline (Phi = X) has no activation
  // and no weights: those cells are empty.
  auto lead = [=](const rmt::mc::SimSetting& s, Model m, double gamma) {
    const bool ridge = m == Model::Ridge;
    return std::vector<std::string>{"mc", rmt::mc::to_string(m), std::to_string(s.n), std::to_string(s.p()),
                                    fmt(s.c), fmt(gamma), fmt(s.snr), ridge ? "" : s.act.name,
                                    ridge ? "" : rmt_cli::vec_text(s.wk), ridge ? "" : rmt_cli::vec_text(s.wq),
                                    std::to_string(s.draws), std::to_string(s.seed)};
  };
  // Row k of chain ci, for --resume: models x gammas.
  job.row_key = [=](std::size_t ci, std::size_t k) {
    const rmt::mc::SimSetting& s = settings[ci];
    return lead(s, written_models(s)[k / gammas.size()], gammas[k % gammas.size()]);
  };
  job.run_chain = [=](std::size_t ci) {
    const rmt::mc::SimSetting& s = settings[ci];
    const rmt::mc::SimSummary sum = rmt::mc::simulate(s);
    std::vector<std::vector<std::string>> rows;
    for (std::size_t mi = 0; mi < s.models.size(); ++mi) {
      if (std::find(wanted.begin(), wanted.end(), s.models[mi]) == wanted.end()) continue;
      for (std::size_t k = 0; k < gammas.size(); ++k) {
        std::vector<std::string> row = lead(s, s.models[mi], gammas[k]);
        for (const Estimate* e : {&sum.error[mi][k], &sum.diff_ridge[mi][k], &sum.trace[mi][k]}) {
          row.push_back(fmt(e->mean));
          row.push_back(fmt(e->se));
        }
        for (std::size_t j = kFirstValue; j < row.size(); ++j)
          if (is_nonfinite_text(row[j])) throw overflow_error(s, s.models[mi]);
        rows.push_back(std::move(row));
      }
    }
    return rows;
  };
  run_grid(job, o.run);
  check_stdout_written(o.run.out);
}

}  // namespace

void register_mc_rmt(CLI::App& mc) {
  auto o = std::make_shared<McRmtCli>();
  CLI::App* sub = mc.add_subcommand(
      "rmt", "Finite-size simulation of nonlinear attention / ridge interpolation error (docs/equations/rmt.md §8)");
  sub->add_option("--n", o->n, "Number of tokens n")->capture_default_str();
  sub->add_option("--c", o->c, "Ratio c = p/n in [1e-4, 1e4], p = round(c n) >= 3, p n <= 1.2e8 (sweepable)")
      ->capture_default_str();
  sub->add_option("--gamma", o->gamma, "Ridge gamma in [1e-10, 1e8] (grid; one tridiagonal reduction per draw serves every gamma)")
      ->capture_default_str();
  sub->add_option("--snr", o->snr, "|mu|^2 in [0, 1e6] (sweepable)")->capture_default_str();
  sub->add_option("--activation", o->activation, "Activation(s): " + rmt::activation_help())
      ->capture_default_str();
  sub->add_option("--wk", o->wk, "w_K as 3 coordinates on (e1,e2,e3), each in [-1e3, 1e3]")->capture_default_str();
  sub->add_option("--wq", o->wq, "w_Q as 3 coordinates on (e1,e2,e3), each in [-1e3, 1e3]")->capture_default_str();
  sub->add_flag("--keep-diagonal", o->keep_diagonal, "Keep the kernel diagonal");
  sub->add_option("--draws", o->draws, "Independent draws in [2, 100000]")->capture_default_str();
  add_seed_option(sub, o->seed, "Seed (an integer in [0, 2^64)); draw d is seeded from (seed, d)");
  sub->add_option("--model", o->model, "true, surrogate and/or ridge (comma list)")->capture_default_str();
  add_run_options(sub, o->run);
  sub->callback([o] { run_mc_rmt(*o); });
}


}  // namespace saddle
