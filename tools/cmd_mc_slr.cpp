// `saddle mc slr` (direct finite-size simulation of SLR, docs/equations/slr_population.md §1.5, docs/equations/slr_replica.md §6) and
// `saddle validate slr` (theory against that simulation on built-in or given cases).
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

#include "equations/slr_model.hpp"
#include "equations/slr_replica_prox.hpp"
#include "mc/slr_erm.hpp"
#include "mc/slr_validate.hpp"
#include "tools/cli_common.hpp"
#include "tools/runner.hpp"
#include "tools/cmd_groups.hpp"
#include "tools/cmd_slr.hpp"

namespace saddle {
namespace {

PlotHints mc_slr_hints() {
  PlotHints h;
  h.y = {"test_error"};
  h.params = {"alpha", "lambda", "nu", "L", "D", "m_k_in"};
  return h;
}

using slr::mc::Init;
using slr::mc::SimSetting;
using slr::mc::Summary;

struct McSlrCli {
  std::string task = "spiked", L = "2", L_dist, nu = "2", lambda = "0.1", delta = "0", alpha = "1,2,4";
  std::string activation = "softmax", init = "informed", mode = "erm";
  std::string m_k, q_k, m_v, q_v;
  int D = 400, seeds = 4, n_test = 20000, max_iter = 20000, restarts = 1;
  std::string keep = "first";
  unsigned long long seed = 1;
  double erf_b = 0.0, c0 = -1.0, gtol = 1e-9, ftol = 1e-15;
  bool per_seed = false;
  std::string out;
  TablePlot plot;
};

// Bounds of the direct simulations (issue 15: every count that multiplies is checked before
// allocating). The training set holds N x L x D doubles, the test set n_test x L x D: each must
// stay within kMaxEntries (8 GB of doubles); N itself is an int.
constexpr double kMaxL = 1e6;
constexpr double kMaxD = 1e7;
constexpr double kMaxEntries = 1e9;

void check_sizes(double N, int Lmax, int D, const std::string& what) {
  if (!(N <= 2147483647.0))
    throw InputError(what + ": N = alpha D = " + fmt(N) + " samples, above 2^31 - 1");
  const double entries = N * Lmax * double(D);
  if (!(entries <= kMaxEntries))
    throw InputError(what + ": N x L x D = " + fmt(entries) + " doubles (" + fmt(entries * 8e-9) +
                     " GB), above the 1e9 (8 GB) bound");
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
  // one length law per --L value, or the one variable-length law of --L-dist
  const auto laws = parse_length_laws(o.L, o.L_dist, kMaxL);
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
  if (o.D < 4 || o.D > kMaxD) throw InputError("--D must be in [4, 1e7]");
  if (o.seeds < 1 || o.seeds > 100000) throw InputError("--seeds must be in [1, 100000]");
  if (o.n_test < 1) throw InputError("--n-test must be >= 1");
  int Lmax = 1;
  for (int L : base.lengths) Lmax = std::max(Lmax, L);
  check_sizes(double(o.n_test), Lmax, o.D, "--n-test");
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
    for (double a : alphas) {
      check_sizes(std::round(a * o.D), Lmax, o.D, "--alpha " + fmt(a));  // before lround to int
      if (std::lround(a * o.D) < 1) throw InputError("alpha * D must be >= 1");
    }
    if (eopt.init == slr::mc::Init::Overlaps) {  // start from prescribed overlaps (single values)
      if (o.m_k.empty() || o.q_k.empty() || o.m_v.empty() || o.q_v.empty())
        throw InputError("--init overlaps needs --m-k, --q-k, --m-v and --q-v");
      SweepRules any;
      const auto a = parse_sweep(o.m_k, "m-k", any), b = parse_sweep(o.q_k, "q-k", any),
                 c = parse_sweep(o.m_v, "m-v", any), d = parse_sweep(o.q_v, "q-v", any);
      if (a.size() != 1 || b.size() != 1 || c.size() != 1 || d.size() != 1)
        throw InputError("--init overlaps takes one value each of --m-k, --q-k, --m-v, --q-v");
      if (b[0] < a[0] * a[0] || d[0] < c[0] * c[0])
        throw InputError("--init overlaps needs q_k >= m_k^2 and q_v >= m_v^2");
      eopt.init_m_k = a[0];
      eopt.init_q_k = b[0];
      eopt.init_m_v = c[0];
      eopt.init_q_v = d[0];
    }
    eopt.c0 = o.c0;
    eopt.max_iterations = o.max_iter;
    eopt.gradient_tolerance = o.gtol;
    eopt.function_tolerance = o.ftol;
    eopt.n_test = o.n_test;
    if (o.restarts < 1 || o.restarts > 64) throw InputError("--restarts: must be in 1..64");
    eopt.restarts = o.restarts;
    if (o.keep != "first" && o.keep != "lowest") throw InputError("--keep: expected first or lowest");
    if (o.keep == "lowest" && o.restarts < 2) throw InputError("--keep lowest needs --restarts >= 2");
    eopt.keep_lowest = o.keep == "lowest";
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
  for (const auto& law : laws)
    for (double nu : nus) {
      SimSetting s = base;
      s.lengths = law;
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
  std::vector<std::string> all_stats = stats;
  const bool probe = !population && o.restarts > 1;
  if (probe) all_stats.insert(all_stats.end(), {"q_k_aa", "q_k_ab", "q_v_aa", "q_v_ab", "loss_spread", "init_lowest"});
  for (const auto& s : all_stats) {
    cols.push_back(s);
    cols.push_back(s + "_se");
  }
  cols.insert(cols.end(), {"converged", "iterations", "seconds"});
  CsvTable table(cols);
  table.setting("model", "SLR direct simulation (docs/equations/slr_population.md §1.5, docs/equations/slr_replica.md §6): feature-space sampling");
  table.setting("columns",
                "means over seeds with standard errors (_se); seed_index=all for the mean row; "
                "train_error = training MSE incl. Delta; train_loss = (S13)/N; test_error = test "
                "MSE - Delta on n_test fresh samples; bayes_error = Bayes predictor (S9) on the "
                "same samples; converged = seeds where L-BFGS met a tolerance; population mode: "
                "test_error_se and bayes_error_se pooled over all test samples");
  table.setting("optimiser", population ? "none (population mode)"
                                        : "ceres GradientProblemSolver LBFGS, gtol=" + fmt(o.gtol) +
                                              " ftol=" + fmt(o.ftol) +
                                              " max_iter=" + std::to_string(o.max_iter));
  table.setting("n_test", std::to_string(o.n_test));
  if (probe)
    table.setting("restarts",
                  std::to_string(o.restarts) + " minimisations of each training set (the first from "
                  "--init, the others from random starts); q_k_aa, q_v_aa = mean self-overlap of "
                  "the minima, q_k_ab, q_v_ab = mean overlap k_a.k_b/D, v_a.v_b/D over pairs of "
                  "minima, loss_spread = max - min training loss (S13)/N; one minimum "
                  "(replica symmetry) gives q_ab = q_aa, several (broken symmetry) q_ab < q_aa; "
                  "init_lowest = share of seeds whose --init minimum had the lowest loss; "
                  "reported minimiser (overlaps, errors, train_loss): " +
                      std::string(o.keep == "lowest" ? "the lowest-loss one of all starts (--keep lowest)"
                                                     : "the one from --init (--keep first)"));
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
    std::vector<const Estimate*> st = {&S.m_k,        &S.q_k,     &S.m_v,      &S.q_v,
                                      &S.kv_star,    &S.vk_star, &S.kv,       &S.train_mse,
                                      &S.train_loss, &S.e_test,  &S.e_bayes};
    if (probe)
      st.insert(st.end(), {&S.q_k_aa, &S.q_k_ab, &S.q_v_aa, &S.q_v_ab, &S.loss_spread, &S.init_lowest});
    for (const auto* x : st) {
      row.push_back(fmt(x->mean));
      // population mode: pooled standard errors of the two risks (i.i.d. test samples)
      if (population && x == &S.e_test)
        row.push_back(fmt(S.e_test_pooled_se));
      else if (population && x == &S.e_bayes)
        row.push_back(fmt(S.e_bayes_pooled_se));
      else
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
        std::vector<double> vals{r.m_k, r.q_k, r.m_v, r.q_v, r.kv_star, r.vk_star, r.kv,
                                 r.train_mse, r.train_loss, r.e_test, r.e_bayes};
        if (probe)
          vals.insert(vals.end(), {r.q_k_aa, r.q_k_ab, r.q_v_aa, r.q_v_ab, r.loss_spread, r.init_lowest});
        for (double x : vals) {
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
    for (const auto& law : laws)
      for (double nu : nus)
        for (double delta : deltas) {
          SimSetting s = base;
          s.lengths = law;
          s.activation = slr::parse_activation(a);
          s.nu = nu;
          s.delta = delta;
          s.erf_b = o.erf_b;
          if (population) {
            for (double mk : mks)
              for (double qk : qks)
                for (double mv : mvs)
                  for (double qv : qvs) {
                    const Summary S = slr::mc::run_population(
                        s, o.D, mk, qk, mv, qv, o.n_test, o.seeds, o.seed);
                    emit(s, 0, 0, S, {mk, qk, mv, qv});
                  }
          } else {
            for (double lambda : lambdas)
              for (double alpha : alphas) {
                slr::mc::ErmOptions e = eopt;
                e.lambda = lambda;
                const Summary S =
                    slr::mc::run_erm(s, o.D, alpha, e, o.seeds, o.seed);
                emit(s, lambda, alpha, S, {});
              }
          }
        }
  write_table(table, o.out, o.plot, mc_slr_hints());
}


struct ValidateSlrCli {
  bool quick = false;
  std::string mode;  // empty: built-in cases; erm | population: one case from the flags
  std::string task = "spiked", L = "2", L_dist, activation = "softmax", init = "random";
  double nu = 2.0, lambda = 0.1, delta = 0.0, alpha = 2.0, erf_b = 0.0;
  double m_k = 1.0, q_k = 1.5, m_v = 0.8, q_v = 0.9;
  int D = 0, seeds = 0, n_test = 0, points = 4096, replicates = 8;
  unsigned long long seed = 1;
  std::string out;
  TablePlot plot;
};

void run_validate_slr(const ValidateSlrCli& o) {
  std::vector<slr::mc::ValidationCase> cases;
  if (o.mode.empty()) {
    cases = slr::mc::builtin_slr_cases(o.quick);
  } else {
    slr::mc::ValidationCase c;
    try {
      c.set.task = slr::parse_task(o.task);
      c.set.activation = slr::parse_activation(o.activation);
    } catch (const std::exception& e) {
      throw InputError(e.what());
    }
    const auto laws = parse_length_laws(o.L, o.L_dist, kMaxL);
    if (laws.size() != 1) throw InputError("--L: one case takes one length (a law: --L-dist)");
    c.set.lengths = laws.front();
    c.set.nu = o.nu;
    c.set.delta = o.delta;
    c.set.erf_b = o.erf_b;
    try {
      slr::mc::check_setting(c.set);
    } catch (const std::exception& e) {
      throw InputError(e.what());
    }
    if (o.mode == "population") {
      c.kind = slr::mc::CaseKind::Population;
      if (!(o.q_k >= o.m_k * o.m_k) || !(o.q_v >= o.m_v * o.m_v))
        throw InputError("population case needs q_k >= m_k^2 and q_v >= m_v^2");
      c.m_k = o.m_k;
      c.q_k = o.q_k;
      c.m_v = o.m_v;
      c.q_v = o.q_v;
      c.D = o.D > 0 ? o.D : 48;
      c.seeds = o.seeds > 0 ? o.seeds : 16;
      c.n_test = o.n_test > 0 ? o.n_test : 50000;
      c.allowance_reason = "none: (S6) is exact at any D";
      c.name = "population";
    } else if (o.mode == "erm") {
      c.kind = slr::mc::CaseKind::Erm;
      for (int L : c.set.lengths)
        if (L > slr::replica::kMaxL)
          throw InputError("erm validation: the replica theory covers L <= " +
                           std::to_string(slr::replica::kMaxL));
      if (c.set.activation != slr::Activation::Softmax &&
          c.set.activation != slr::Activation::Linear)
        throw InputError("erm validation: the replica theory covers softmax and linear only");
      if (!(o.alpha > 0) || !std::isfinite(o.alpha)) throw InputError("--alpha must be > 0");
      if (!(o.lambda >= 0) || !std::isfinite(o.lambda)) throw InputError("--lambda must be >= 0");
      try {
        c.init = slr::mc::parse_init(o.init);
      } catch (const std::exception& e) {
        throw InputError(e.what());
      }
      c.lambda = o.lambda;
      c.alpha = o.alpha;
      c.D = o.D > 0 ? o.D : 400;
      c.seeds = o.seeds > 0 ? o.seeds : 16;
      c.n_test = o.n_test > 0 ? o.n_test : 20000;
      if (o.points < 16 || o.replicates < 2 || o.points > (1 << 22) || o.replicates > 64)
        throw InputError("--points in [16, 4194304], --replicates in [2, 64]");
      c.replica_points = o.points;
      c.replica_replicates = o.replicates;
      c.allowance = 1.0 / c.D;
      c.allowance_reason = "1/D finite-size bias (+ replica stall residual)";
      c.name = "erm";
    } else {
      throw InputError("--mode must be erm or population (or absent for the built-in cases)");
    }
    if (c.D < 4 || c.seeds < 2 || c.n_test < 1) throw InputError("need D >= 4, seeds >= 2");
    if (c.D > kMaxD || c.seeds > 100000) throw InputError("need D <= 1e7, seeds <= 100000");
    int Lmax = 1;
    for (int L : c.set.lengths) Lmax = std::max(Lmax, L);
    check_sizes(double(c.n_test), Lmax, c.D, "--n-test");
    if (c.kind == slr::mc::CaseKind::Erm) check_sizes(std::round(c.alpha * c.D), Lmax, c.D, "--alpha");
    cases.push_back(c);
  }
  const auto rows = slr::mc::run_slr_validation(cases, o.seed);

  CsvTable table({"case", "kind", "task", "L", "nu", "lambda", "delta", "activation", "erf_b",
                  "alpha", "init", "D", "seeds", "quantity", "source", "value", "se", "z",
                  "allowance", "verdict", "note"});
  table.setting("model", "SLR theory (population (S7), Bayes (S9), replica §4) against direct "
                         "simulation (docs/equations/slr_replica.md §6)");
  table.setting("verdict", "pass iff |mc - theory| <= 4 sqrt(se_mc^2 + se_theory^2) + allowance; "
                           "known_gap = documented disagreement (docs/mc_slr.md); rs_unstable = a "
                           "disagreement where the replica fixed point is locally unstable "
                           "(replicon eigenvalue > 1 + 2 s.e.: replica symmetry broken); neither "
                           "counted as FAIL");
  table.setting("cases", o.mode.empty() ? (o.quick ? "built-in quick" : "built-in full") : o.mode);
  table.setting("seed", std::to_string(o.seed));
  int fails = 0, gaps = 0, passes = 0, unstable = 0;
  for (const auto& r : rows) {
    const slr::mc::ValidationCase* c = nullptr;
    for (const auto& x : cases)
      if (x.name == r.case_name) c = &x;
    const bool erm = c->kind == slr::mc::CaseKind::Erm;
    if (r.source == "mc") {
      if (r.verdict == "pass") ++passes;
      else if (r.verdict == "known_gap") ++gaps;
      else if (r.verdict == "rs_unstable") ++unstable;
      else ++fails;
    }
    table.add_row({r.case_name, r.kind, slr::to_string(c->set.task), join_lengths(c->set.lengths),
                   fmt(c->set.nu), erm ? fmt(c->lambda) : "", fmt(c->set.delta),
                   slr::to_string(c->set.activation), fmt(c->set.erf_b), erm ? fmt(c->alpha) : "",
                   erm ? slr::mc::to_string(c->init) : "", std::to_string(c->D),
                   std::to_string(c->seeds), r.quantity, r.source, fmt(r.value), fmt(r.se),
                   r.source == "mc" && std::isfinite(r.z) ? fmt(r.z) : "", r.source == "mc" ? fmt(r.allowance) : "",
                   r.verdict, r.note});
  }
  for (const auto& c : cases)
    table.setting("allowance " + c.name, fmt(c.allowance) + " (" + c.allowance_reason + ")");
  table.setting("summary", std::to_string(passes) + " pass, " + std::to_string(gaps) +
                               " known_gap, " + std::to_string(unstable) + " rs_unstable, " +
                               std::to_string(fails) + " FAIL");
  write_table(table, o.out, o.plot, mc_slr_hints());
  if (fails > 0)
    throw std::runtime_error("validate slr: " + std::to_string(fails) +
                             " comparison(s) disagree beyond 4 s.e. + allowance");
}

}  // namespace

void register_mc_slr(CLI::App& mc) {
  auto o = std::make_shared<McSlrCli>();
  CLI::App* sub = mc.add_subcommand(
      "slr", "SLR direct simulation: L-BFGS ERM or population risk at finite D (docs/equations/slr_replica.md §6)");
  sub->add_option("--mode", o->mode, "erm (train by L-BFGS) or population (fixed overlaps)")
      ->capture_default_str();
  sub->add_option("--task", o->task, "spiked or max")->capture_default_str();
  sub->add_option("--L", o->L, "Sequence length (sweepable: one fixed length per value)")
      ->capture_default_str();
  sub->add_option("--L-dist", o->L_dist,
                  "Variable length: a set (e.g. 1,2,3 or 1:3:3), L uniform on it per sample; "
                  "excludes --L");
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
  sub->add_option("--m-k", o->m_k, "Population mode: m_k (sweepable); --init overlaps: start m_k");
  sub->add_option("--q-k", o->q_k, "Population mode: q_k >= m_k^2 (sweepable)");
  sub->add_option("--m-v", o->m_v, "Population mode: m_v (sweepable)");
  sub->add_option("--q-v", o->q_v, "Population mode: q_v >= m_v^2 (sweepable)");
  sub->add_flag("--per-seed", o->per_seed, "Also write one row per seed");
  sub->add_option("--restarts", o->restarts,
                  "Landscape probe: minimise each training set from this many starts and report "
                  "the overlaps between the minima (q_*_ab vs q_*_aa)")
      ->capture_default_str();
  sub->add_option("--keep", o->keep,
                  "With --restarts: report the minimiser from --init (first) or the one with the "
                  "lowest training loss of all starts (lowest)")
      ->capture_default_str();
  sub->add_option("--out", o->out, "Write the CSV to this file instead of stdout");
  add_plot_options(sub, o->plot);
  sub->callback([o] { run_mc_slr(*o); });
}

void register_validate_slr(CLI::App& validate) {
  auto o = std::make_shared<ValidateSlrCli>();
  CLI::App* sub = validate.add_subcommand(
      "slr", "SLR: population, Bayes and replica theory against direct simulation (docs/equations/slr_replica.md §6)");
  sub->add_flag("--quick", o->quick, "Built-in quick subset (about a minute)");
  sub->add_option("--mode", o->mode, "One case from the flags: erm or population (default: built-in cases)");
  sub->add_option("--task", o->task, "spiked or max")->capture_default_str();
  sub->add_option("--L", o->L, "Sequence length (one case: one value)")->capture_default_str();
  sub->add_option("--L-dist", o->L_dist,
                  "Variable length: a set of lengths drawn uniformly per sample; excludes --L");
  sub->add_option("--nu", o->nu, "Signal strength")->capture_default_str();
  sub->add_option("--lambda", o->lambda, "Ridge lambda (erm)")->capture_default_str();
  sub->add_option("--delta", o->delta, "Noise variance")->capture_default_str();
  sub->add_option("--alpha", o->alpha, "Sample ratio (erm)")->capture_default_str();
  sub->add_option("--activation", o->activation, "softmax, linear (erm); also erf, softplus (population)")
      ->capture_default_str();
  sub->add_option("--erf-b", o->erf_b, "erf offset b")->capture_default_str();
  sub->add_option("--init", o->init, "ERM start: random or informed")->capture_default_str();
  sub->add_option("--m-k", o->m_k, "population: m_k")->capture_default_str();
  sub->add_option("--q-k", o->q_k, "population: q_k")->capture_default_str();
  sub->add_option("--m-v", o->m_v, "population: m_v")->capture_default_str();
  sub->add_option("--q-v", o->q_v, "population: q_v")->capture_default_str();
  sub->add_option("--D", o->D, "Dimension (default 400 erm, 48 population)");
  sub->add_option("--seeds", o->seeds, "Seeds (default 16)");
  sub->add_option("--n-test", o->n_test, "Fresh test samples per seed");
  sub->add_option("--points", o->points, "Replica QMC points per replicate")->capture_default_str();
  sub->add_option("--replicates", o->replicates, "Replica QMC replicates")->capture_default_str();
  sub->add_option("--seed", o->seed, "Base seed of the simulation")->capture_default_str();
  sub->add_option("--out", o->out, "Write the CSV to this file instead of stdout");
  add_plot_options(sub, o->plot);
  sub->callback([o] { run_validate_slr(*o); });
}

}  // namespace saddle
