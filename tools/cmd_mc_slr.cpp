// `saddle mc slr` (direct finite-size simulation of SLR, spec slr.md §1.5, §6) and
// `saddle validate slr` (theory against that simulation on built-in or given cases).
#include <cmath>
#include <memory>
#include <stdexcept>

#include "equations/slr_model.hpp"
#include "mc/slr_erm.hpp"
// validate: see below
#include "tools/cli_common.hpp"
#include "tools/cmd_groups.hpp"

namespace saddle {
namespace {

using slr::mc::Init;
using slr::mc::SimSetting;
using slr::mc::Summary;

struct McSlrCli {
  std::string task = "spiked", L = "2", nu = "2", lambda = "0.1", delta = "0", alpha = "1,2,4";
  std::string activation = "softmax", init = "informed", mode = "erm";
  std::string m_k, q_k, m_v, q_v;
  int D = 400, seeds = 4, n_test = 20000, max_iter = 20000;
  unsigned long long seed = 1;
  double erf_b = 0.0, c0 = -1.0, gtol = 1e-9, ftol = 1e-15;
  bool per_seed = false;
  std::string out;
};

std::vector<int> parse_lengths(const std::string& text) {
  SweepRules r;
  r.min = 1;
  r.integer = true;
  const auto v = parse_sweep(text, "L", r);
  std::vector<int> out;
  for (double x : v) out.push_back(static_cast<int>(std::lround(x)));
  return out;
}

std::string join_lengths(const std::vector<int>& Ls) {
  std::string s;
  for (std::size_t i = 0; i < Ls.size(); ++i) s += (i ? ";" : "") + std::to_string(Ls[i]);
  return s;
}

void run_mc_slr(const McSlrCli& o) {
  // ---- validate everything before any output ----
  SimSetting base;
  try {
    base.task = slr::parse_task(o.task);
  } catch (const std::exception& e) {
    throw InputError(std::string("--task: ") + e.what());
  }
  base.lengths = parse_lengths(o.L);
  SweepRules nonneg;
  nonneg.min = 0.0;
  SweepRules nu_rules = nonneg;
  nu_rules.allow_inf = base.task == slr::Task::Max;
  SweepRules positive;
  positive.min = 0.0;
  positive.min_inclusive = false;
  const auto nus = parse_sweep(o.nu, "nu", nu_rules);
  const auto deltas = parse_sweep(o.delta, "delta", nonneg);
  const auto acts = parse_names(o.activation, "activation", {"softmax", "linear", "erf", "softplus"});
  if (!std::isfinite(o.erf_b)) throw InputError("--erf-b must be finite");
  if (o.D < 4) throw InputError("--D must be >= 4");
  if (o.seeds < 1) throw InputError("--seeds must be >= 1");
  if (o.n_test < 1) throw InputError("--n-test must be >= 1");
  const bool population = o.mode == "population";
  if (!population && o.mode != "erm") throw InputError("--mode must be erm or population");

  slr::mc::ErmOptions eopt;
  std::vector<double> lambdas, alphas, mks, qks, mvs, qvs;
  if (!population) {
    try {
      eopt.init = slr::mc::parse_init(o.init);
    } catch (const std::exception& e) {
      throw InputError(std::string("--init: ") + e.what());
    }
    lambdas = parse_sweep(o.lambda, "lambda", nonneg);
    alphas = parse_sweep(o.alpha, "alpha", positive);
    if (o.max_iter < 1) throw InputError("--max-iter must be >= 1");
    if (!(o.gtol >= 0) || !(o.ftol >= 0)) throw InputError("--gtol and --ftol must be >= 0");
    if (!std::isfinite(o.c0)) throw InputError("--c0 must be finite");
    for (double a : alphas)
      if (std::lround(a * o.D) < 1) throw InputError("alpha * D must be >= 1");
    eopt.c0 = o.c0;
    eopt.max_iterations = o.max_iter;
    eopt.gradient_tolerance = o.gtol;
    eopt.function_tolerance = o.ftol;
    eopt.n_test = o.n_test;
  } else {
    if (o.m_k.empty() || o.q_k.empty() || o.m_v.empty() || o.q_v.empty())
      throw InputError("--mode population needs --m-k, --q-k, --m-v and --q-v");
    SweepRules any;
    mks = parse_sweep(o.m_k, "m-k", any);
    qks = parse_sweep(o.q_k, "q-k", nonneg);
    mvs = parse_sweep(o.m_v, "m-v", any);
    qvs = parse_sweep(o.q_v, "q-v", nonneg);
    for (double a : mks)
      for (double q : qks)
        if (q < a * a) throw InputError("population mode needs q_k >= m_k^2 for every pair");
    for (double a : mvs)
      for (double q : qvs)
        if (q < a * a) throw InputError("population mode needs q_v >= m_v^2 for every pair");
  }
  for (double nu : nus) {
    SimSetting s = base;
    s.nu = nu;
    try {
      slr::mc::check_setting(s);
    } catch (const std::exception& e) {
      throw InputError(e.what());
    }
  }

  const std::vector<std::string> stats{"m_k",        "q_k",         "m_v",     "q_v",
                                       "kv_star",    "vk_star",     "kv",      "train_error",
                                       "train_loss", "test_error",  "bayes_error"};
  std::vector<std::string> cols{"source", "mode",  "task",      "L",      "nu",    "lambda",
                                "delta",  "activation", "erf_b", "init", "alpha", "D",
                                "N",      "seed_index", "seeds"};
  if (population) cols.insert(cols.end(), {"m_k_in", "q_k_in", "m_v_in", "q_v_in"});
  for (const auto& s : stats) {
    cols.push_back(s);
    cols.push_back(s + "_se");
  }
  cols.insert(cols.end(), {"converged", "iterations", "seconds"});
  CsvTable table(cols);
  table.setting("model", "SLR direct simulation (spec slr.md §1.5, §6): feature-space sampling");
  table.setting("columns",
                "means over seeds with standard errors (_se); seed_index=all for the mean row; "
                "train_error = training MSE incl. Delta; train_loss = (S13)/N; test_error = test "
                "MSE - Delta on n_test fresh samples; bayes_error = Bayes predictor (S9) on the "
                "same samples; converged = seeds where L-BFGS met a tolerance");
  table.setting("optimiser", population ? "none (population mode)"
                                        : "ceres GradientProblemSolver LBFGS, gtol=" + fmt(o.gtol) +
                                              " ftol=" + fmt(o.ftol) +
                                              " max_iter=" + std::to_string(o.max_iter));
  table.setting("n_test", std::to_string(o.n_test));
  table.setting("seed", std::to_string(o.seed));

  auto emit = [&](const SimSetting& s, double lambda, double alpha, const Summary& S,
                  const std::vector<double>& in) {
    auto common = [&](const std::string& idx, int nseeds) {
      std::vector<std::string> row{"mc",
                                   o.mode,
                                   slr::to_string(s.task),
                                   join_lengths(s.lengths),
                                   fmt(s.nu),
                                   population ? "" : fmt(lambda),
                                   fmt(s.delta),
                                   slr::to_string(s.activation),
                                   fmt(s.erf_b),
                                   population ? "" : slr::mc::to_string(eopt.init),
                                   population ? "" : fmt(alpha),
                                   std::to_string(o.D),
                                   population ? std::to_string(o.n_test)
                                              : std::to_string(std::lround(alpha * o.D)),
                                   idx,
                                   std::to_string(nseeds)};
      for (double x : in) row.push_back(fmt(x));
      return row;
    };
    auto row = common("all", S.seeds);
    const slr::mc::Stat* st[] = {&S.m_k,       &S.q_k,        &S.m_v,    &S.q_v,
                                 &S.kv_star,   &S.vk_star,    &S.kv,     &S.train_mse,
                                 &S.train_loss, &S.e_test,    &S.e_bayes};
    for (const auto* x : st) {
      row.push_back(fmt(x->mean));
      row.push_back(fmt(x->se));
    }
    row.push_back(std::to_string(S.converged));
    row.push_back(fmt(S.iterations.mean));
    row.push_back(fmt(S.seconds.mean));
    table.add_row(row);
    if (o.per_seed)
      for (std::size_t i = 0; i < S.per_seed.size(); ++i) {
        const auto& r = S.per_seed[i];
        auto pr = common(std::to_string(i), 1);
        for (double x : {r.m_k, r.q_k, r.m_v, r.q_v, r.kv_star, r.vk_star, r.kv, r.train_mse,
                         r.train_loss, r.e_test, r.e_bayes}) {
          pr.push_back(fmt(x));
          pr.push_back("");
        }
        pr.push_back(r.converged ? "1" : "0");
        pr.push_back(std::to_string(r.iterations));
        pr.push_back(fmt(r.seconds));
        table.add_row(pr);
      }
  };

  for (const auto& a : acts)
    for (double nu : nus)
      for (double delta : deltas) {
        SimSetting s = base;
        s.activation = slr::parse_activation(a);
        s.nu = nu;
        s.delta = delta;
        s.erf_b = o.erf_b;
        if (population) {
          for (double mk : mks)
            for (double qk : qks)
              for (double mv : mvs)
                for (double qv : qvs) {
                  const Summary S =
                      slr::mc::run_population(s, o.D, mk, qk, mv, qv, o.n_test, o.seeds, o.seed);
                  emit(s, 0, 0, S, {mk, qk, mv, qv});
                }
        } else {
          for (double lambda : lambdas)
            for (double alpha : alphas) {
              slr::mc::ErmOptions e = eopt;
              e.lambda = lambda;
              const Summary S = slr::mc::run_erm(s, o.D, alpha, e, o.seeds, o.seed);
              emit(s, lambda, alpha, S, {});
            }
        }
      }
  table.write_to(o.out);
}

}  // namespace

void register_mc_slr(CLI::App& mc) {
  auto o = std::make_shared<McSlrCli>();
  CLI::App* sub = mc.add_subcommand(
      "slr", "SLR direct simulation: L-BFGS ERM or population risk at finite D (spec slr.md §6)");
  sub->add_option("--mode", o->mode, "erm (train by L-BFGS) or population (fixed overlaps)")
      ->capture_default_str();
  sub->add_option("--task", o->task, "spiked or max")->capture_default_str();
  sub->add_option("--L", o->L,
                  "Sequence length, or a set (e.g. 1,2,3 or 1:3:3): L uniform on the set per sample")
      ->capture_default_str();
  sub->add_option("--nu", o->nu, "Signal strength nu >= 0 (inf allowed for max; sweepable)")
      ->capture_default_str();
  sub->add_option("--lambda", o->lambda, "Ridge lambda >= 0 of (S13) (sweepable)")
      ->capture_default_str();
  sub->add_option("--delta", o->delta, "Noise variance Delta >= 0 (sweepable)")
      ->capture_default_str();
  sub->add_option("--alpha", o->alpha, "Sample ratio N/D > 0 (sweepable)")->capture_default_str();
  sub->add_option("--D", o->D, "Embedding dimension")->capture_default_str();
  sub->add_option("--seeds", o->seeds, "Number of independent seeds (teacher + data)")
      ->capture_default_str();
  sub->add_option("--seed", o->seed, "Base seed; seed i uses the streams (seed, i, purpose)")
      ->capture_default_str();
  sub->add_option("--activation", o->activation, "softmax, linear, erf, softplus (comma list)")
      ->capture_default_str();
  sub->add_option("--erf-b", o->erf_b, "Offset b of the erf activation")->capture_default_str();
  sub->add_option("--init", o->init,
                  "informed (k = c0 k*, v = v*) or random (entries N(0, 0.01))")
      ->capture_default_str();
  sub->add_option("--c0", o->c0,
                  "Informed key scale (default: sqrt(nu) spiked / min(nu,3) max for softmax and "
                  "softplus, 0.5 for linear and erf)");
  sub->add_option("--n-test", o->n_test, "Fresh test samples per seed")->capture_default_str();
  sub->add_option("--max-iter", o->max_iter, "L-BFGS iterations")->capture_default_str();
  sub->add_option("--gtol", o->gtol, "L-BFGS gradient tolerance (max |grad|)")
      ->capture_default_str();
  sub->add_option("--ftol", o->ftol, "L-BFGS relative function tolerance")->capture_default_str();
  sub->add_option("--m-k", o->m_k, "Population mode: m_k (sweepable)");
  sub->add_option("--q-k", o->q_k, "Population mode: q_k >= m_k^2 (sweepable)");
  sub->add_option("--m-v", o->m_v, "Population mode: m_v (sweepable)");
  sub->add_option("--q-v", o->q_v, "Population mode: q_v >= m_v^2 (sweepable)");
  sub->add_flag("--per-seed", o->per_seed, "Also write one row per seed");
  sub->add_option("--out", o->out, "Write the CSV to this file instead of stdout");
  sub->callback([o] { run_mc_slr(*o); });
}

}  // namespace saddle
