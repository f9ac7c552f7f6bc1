// `saddle mc slr`: direct finite-size simulation of SLR (docs/equations/slr_population.md §1.5,
// docs/equations/slr_replica.md §6; docs/mc_slr.md): parses and checks the options, then runs the
// points through the grid runner (tools/runner/runner.hpp: ordered incremental output, --resume,
// --shard, --threads, SIGINT/SIGTERM keep every finished row). One chain per point (setting,
// lambda, alpha, or the population overlaps): its rows for every --D, and with --extrapolate the
// D = inf row fitted from them (mc/slr_extrapolate.hpp).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "equations/slr_model.hpp"
#include "mc/slr_erm.hpp"
#include "mc/slr_extrapolate.hpp"
#include "solver/parallel.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/commands/cmd_groups.hpp"
#include "tools/commands/cmd_slr.hpp"
#include "tools/runner/runner.hpp"

namespace saddle {
namespace {

using slr::mc::Init;
using slr::mc::SeedResult;
using slr::mc::SimSetting;
using slr::mc::Summary;

PlotHints mc_slr_hints() {
  PlotHints h;
  h.y = {"test_error"};
  h.params = {"alpha", "lambda", "nu", "L", "D", "m_k_in"};
  return h;
}

// Domains of `mc slr` (README "Errors and exit codes", docs/mc_slr.md): nu, lambda, delta as the
// replica commands (nu in [0, 1e3] or inf for max, lambda and delta in [0, 1e4], alpha in
// [1e-3, 1e4] with N = max(1, round(alpha D))), D in [4, 1e7], L in [1, 1e6], |erf b| <= 1e3, c0 in [0, 100], population overlaps
// |m| <= 100, q in [0, 1e4] (beyond, normalised softplus attention underflows: 0/0); and the size bounds below.
constexpr double kMaxL = 1e6, kMaxD = 1e7, kMaxErfB = 1e3, kMaxC0 = 100, kMaxM = 100, kMaxQ = 1e4;
// Work bounds (each count that multiplies is checked before allocating): the tokens of one
// training set and of one test set, N L D and n_test L D, at most 1e9 entries each.
constexpr double kMaxEntries = 1e9;

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

// A length law as in every `slr` file: "1|2|3" (tools/commands/cmd_slr.hpp length_key).
std::string join_lengths(const std::vector<int>& Ls) { return length_key(Ls); }

// One point of the grid: a chain of the runner.
struct Point {
  SimSetting set;
  double lambda = 0, alpha = 0;
  double mk = 0, qk = 0, mv = 0, qv = 0;  // population mode
};

// The quantities of a row, in column order, with their per-seed values.
struct Stat {
  const char* name;
  Estimate Summary::*summary;
  double SeedResult::*seed;
};
const std::vector<Stat>& base_stats() {
  static const std::vector<Stat> s = {
      {"m_k", &Summary::m_k, &SeedResult::m_k},
      {"q_k", &Summary::q_k, &SeedResult::q_k},
      {"m_v", &Summary::m_v, &SeedResult::m_v},
      {"q_v", &Summary::q_v, &SeedResult::q_v},
      {"kv_star", &Summary::kv_star, &SeedResult::kv_star},
      {"vk_star", &Summary::vk_star, &SeedResult::vk_star},
      {"kv", &Summary::kv, &SeedResult::kv},
      {"train_error", &Summary::train_mse, &SeedResult::train_mse},
      {"train_loss", &Summary::train_loss, &SeedResult::train_loss},
      {"test_error", &Summary::e_test, &SeedResult::e_test},
      {"bayes_error", &Summary::e_bayes, &SeedResult::e_bayes}};
  return s;
}
const std::vector<Stat>& probe_stats() {
  static const std::vector<Stat> s = {
      {"q_k_aa", &Summary::q_k_aa, &SeedResult::q_k_aa},
      {"q_k_ab", &Summary::q_k_ab, &SeedResult::q_k_ab},
      {"q_v_aa", &Summary::q_v_aa, &SeedResult::q_v_aa},
      {"q_v_ab", &Summary::q_v_ab, &SeedResult::q_v_ab},
      {"loss_spread", &Summary::loss_spread, &SeedResult::loss_spread},
      {"init_lowest", &Summary::init_lowest, &SeedResult::init_lowest}};
  return s;
}

// Memory one seed holds at once (bytes): the training tokens (float), their offsets, labels and
// locations, the objective's block buffers, the minima of the restarts and the test set's
// per-sample errors; a population seed only the test part.
double seed_bytes(double N, int Lmax, int D, int n_test, int restarts, bool population) {
  const double test = 16.0 * n_test + 4.0 * Lmax * double(D) * 4;
  if (population) return test + 64.0 * D;
  const double blocks = std::ceil(N / 256.0) + 1;
  return 4.0 * N * Lmax * double(D) + 16.0 * N + 16.0 * D * (blocks + restarts + 8) + test;
}

// The tokens of one training or test set: N L D <= kMaxEntries (stated with their memory).
void check_tokens(double N, int L, int D, const std::string& what) {
  const double n = N * L * double(D);
  if (!(n <= kMaxEntries))
    throw InputError(what + ": N x L x D = " + fmt(N) + " x " + std::to_string(L) + " x " +
                     std::to_string(D) + " = " + fmt(n) + " tokens (" + bytes_text(4.0 * n) +
                     " as floats), above the bound 1e9 per seed");
}

void run_mc_slr(const McSlrCli& o) {
  // ---- validate everything before any output ----
  SimSetting base;
  base.task = parse_task_option(o.task);
  const auto laws = parse_length_laws(o.L, o.L_dist, kMaxL);
  ParamDomain nu_rules = nu_rule(base.task);
  nu_rules.max = kSlrMaxNu;
  ParamDomain scale = nonneg_rule();
  scale.max = kSlrMaxScale;
  const auto nus = parse_sweep(o.nu, "nu", nu_rules);
  const auto deltas = parse_sweep(o.delta, "delta", scale);
  const auto acts = parse_names(o.activation, "activation", {"softmax", "linear", "erf", "softplus"});
  if (!(std::abs(o.erf_b) <= kMaxErfB)) throw InputError("--erf-b must be in [-1e3, 1e3]");
  ParamDomain Drule;
  Drule.integer = true;
  Drule.min = 4;
  Drule.max = kMaxD;
  std::vector<int> Ds;
  for (double d : parse_sweep(o.D, "D", Drule)) {
    if (std::find(Ds.begin(), Ds.end(), static_cast<int>(d)) != Ds.end())
      throw InputError("--D: the size " + fmt(d) + " is given twice (each size is one row; give it once)");
    Ds.push_back(static_cast<int>(d));
  }
  if (o.seeds < 1 || o.seeds > 100000) throw InputError("--seeds must be in [1, 100000]");
  if (o.n_test < 1) throw InputError("--n-test must be >= 1");
  int Lmax = 1;
  for (const auto& law : laws)
    for (int L : law) Lmax = std::max(Lmax, L);
  const int Dmax = *std::max_element(Ds.begin(), Ds.end());
  const bool population = o.mode == "population";
  if (!population && o.mode != "erm") throw InputError("--mode must be erm or population");
  if (o.extrapolate) {
    if (population) throw InputError("--extrapolate: population mode is exact at any D (use --mode erm)");
    if (Ds.size() < 2) throw InputError("--extrapolate needs at least two sizes in --D (e.g. 200,400,800,1600)");
    if (o.seeds < 2) throw InputError("--extrapolate needs --seeds >= 2 (the fit weights are the standard errors)");
  }

  slr::mc::ErmOptions eopt;
  std::vector<double> lambdas, alphas, mks, qks, mvs, qvs;
  ParamDomain mrule;
  mrule.min = -kMaxM;
  mrule.max = kMaxM;
  ParamDomain qrule = nonneg_rule();
  qrule.max = kMaxQ;
  if (!population && o.init != "overlaps" &&
      (!o.m_k.empty() || !o.q_k.empty() || !o.m_v.empty() || !o.q_v.empty()))
    throw InputError("--m-k, --q-k, --m-v, --q-v are used by --mode population or --init overlaps only");
  if (!population) {
    try {
      eopt.init = slr::mc::parse_init(o.init);
    } catch (const std::exception& e) {
      throw InputError(std::string("--init: ") + e.what());
    }
    lambdas = parse_sweep(o.lambda, "lambda", scale);
    ParamDomain arule = positive_rule();
    arule.min = kSlrMinAlpha;
    arule.min_inclusive = true;
    arule.max = kSlrMaxAlpha;
    alphas = parse_sweep(o.alpha, "alpha", arule);
    if (o.max_iter < 1 || o.max_iter > 1000000) throw InputError("--max-iter must be in [1, 1e6]");
    if (!(o.gtol >= 0 && o.gtol <= 1) || !(o.ftol >= 0 && o.ftol <= 1))
      throw InputError("--gtol and --ftol must be in [0, 1]");
    if (o.c0_option && o.c0_option->count() > 0 && !(o.c0 >= 0 && o.c0 <= kMaxC0))
      throw InputError("--c0 must be in [0, 100]");
    for (double a : alphas)
      for (int D : Ds) {
        const double N = std::round(a * D);
        if (!(N <= 2147483647.0))
          throw InputError("--alpha " + fmt(a) + ", --D " + std::to_string(D) + ": N = alpha D = " +
                           fmt(N) + " samples, above 2^31 - 1");
        check_tokens(std::max(1.0, N), Lmax, D, "--alpha " + fmt(a) + ", --D " + std::to_string(D) + " (training set)");
      }
    if (eopt.init == Init::Overlaps) {  // start from prescribed overlaps (single values)
      if (o.m_k.empty() || o.q_k.empty() || o.m_v.empty() || o.q_v.empty())
        throw InputError("--init overlaps needs --m-k, --q-k, --m-v and --q-v");
      const auto a = parse_sweep(o.m_k, "m-k", mrule), b = parse_sweep(o.q_k, "q-k", qrule),
                 c = parse_sweep(o.m_v, "m-v", mrule), d = parse_sweep(o.q_v, "q-v", qrule);
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
    mks = parse_sweep(o.m_k, "m-k", mrule);
    qks = parse_sweep(o.q_k, "q-k", qrule);
    mvs = parse_sweep(o.m_v, "m-v", mrule);
    qvs = parse_sweep(o.q_v, "q-v", qrule);
    for (double a : mks)
      for (double q : qks)
        if (q < a * a) throw InputError("population mode needs q_k >= m_k^2 for every pair");
    for (double a : mvs)
      for (double q : qvs)
        if (q < a * a) throw InputError("population mode needs q_v >= m_v^2 for every pair");
  }
  check_tokens(double(o.n_test), Lmax, Dmax, "--n-test " + std::to_string(o.n_test) + " (test set, streamed)");
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

  // ---- the points (chains), in the order of the table ----
  std::vector<Point> points;
  for (const auto& a : acts)
    for (const auto& law : laws)
      for (double nu : nus)
        for (double delta : deltas) {
          Point p;
          p.set = base;
          p.set.lengths = law;
          p.set.activation = slr::parse_activation(a);
          p.set.nu = nu;
          p.set.delta = delta;
          p.set.erf_b = o.erf_b;
          if (population) {
            for (double mk : mks)
              for (double qk : qks)
                for (double mv : mvs)
                  for (double qv : qvs) {
                    p.mk = mk, p.qk = qk, p.mv = mv, p.qv = qv;
                    points.push_back(p);
                  }
          } else {
            for (double lambda : lambdas)
              for (double alpha : alphas) {
                p.lambda = lambda;
                p.alpha = alpha;
                points.push_back(p);
              }
          }
        }
  checked_count({double(points.size()), double(Ds.size()), double(o.seeds)}, 1e8,
                "points x sizes x seeds");

  // ---- memory: the largest seed, times the seeds that run at once (one per thread) ----
  {
    const double amax = population ? 0.0 : *std::max_element(alphas.begin(), alphas.end());
    const double per_seed = seed_bytes(std::round(amax * Dmax), Lmax, Dmax, o.n_test, o.restarts, population);
    const int threads = o.run.threads > 0 ? o.run.threads : omp_get_max_threads();
    const double at_once =
        std::min<double>(std::max(1, threads), double(points.size()) * Ds.size() * o.seeds);
    const double total = per_seed * at_once, limit = simulation_memory_limit_bytes();
    if (!(total <= limit))
      throw InputError("mc slr: the largest seed (D = " + std::to_string(Dmax) + ", L = " +
                       std::to_string(Lmax) + (population ? "" : ", alpha = " + fmt(amax)) +
                       ") needs about " + bytes_text(per_seed) + ", " + fmt(at_once) +
                       " seeds at once: " + bytes_text(total) + ", above the memory bound " +
                       bytes_text(limit) + " (half the physical memory, at most 16 GB); use a smaller --D, --alpha, --L or --threads");
  }

  // ---- the table ----
  std::vector<Stat> stats = base_stats();
  const bool probe = !population && o.restarts > 1;
  if (probe) stats.insert(stats.end(), probe_stats().begin(), probe_stats().end());
  std::vector<std::string> cols{"source", "mode",  "task",      "L",      "nu",    "lambda",
                                "delta",  "activation", "erf_b", "init", "alpha", "D",
                                "N",      "seed_index", "seeds"};
  if (population) cols.insert(cols.end(), {"m_k_in", "q_k_in", "m_v_in", "q_v_in"});
  for (const auto& s : stats) {
    cols.push_back(s.name);
    cols.push_back(std::string(s.name) + "_se");
  }
  cols.insert(cols.end(), {"converged", "seeds_converged", "iterations", "seconds"});
  if (o.extrapolate)
    for (const auto& s : stats) {
      cols.push_back(std::string(s.name) + "_fit");
      cols.push_back(std::string(s.name) + "_fit_p");
    }
  GridJob job;
  job.columns = cols;
  for (const auto& s : stats) job.text_columns.push_back(std::string(s.name) + "_fit");  // "2/3"
  job.plot = mc_slr_hints();
  auto setting = [&](const std::string& k, const std::string& v) { job.settings.emplace_back(k, v); };
  setting("model", "SLR direct simulation (docs/equations/slr_population.md §1.5, docs/equations/slr_replica.md §6): feature-space sampling");
  setting("columns",
          "means over seeds with standard errors (_se); seed_index=all for the mean row; "
          "train_error = training MSE incl. Delta; train_loss = (S13)/N; test_error = test "
          "MSE - Delta on n_test fresh samples; bayes_error = Bayes predictor (S9) on the "
          "same samples; converged = 1 when L-BFGS met a tolerance on every seed of the row (else 0), "
          "seeds_converged = how many did; population mode: "
          "test_error_se and bayes_error_se pooled over all test samples");
  setting("optimiser", population ? "none (population mode)"
                                  : "ceres GradientProblemSolver LBFGS, gtol=" + fmt(o.gtol) +
                                        " ftol=" + fmt(o.ftol) + " max_iter=" + std::to_string(o.max_iter));
  setting("n_test", std::to_string(o.n_test));
  if (probe)
    setting("restarts",
            std::to_string(o.restarts) + " minimisations of each training set (the first from "
            "--init, the others from random starts); q_k_aa, q_v_aa = mean self-overlap of "
            "the minima, q_k_ab, q_v_ab = mean overlap k_a.k_b/D, v_a.v_b/D over pairs of "
            "minima, loss_spread = max - min training loss (S13)/N; one minimum "
            "(replica symmetry) gives q_ab = q_aa, several (broken symmetry) q_ab < q_aa; "
            "init_lowest = share of seeds whose --init minimum had the lowest loss; "
            "reported minimiser (overlaps, errors, train_loss): " +
                std::string(o.keep == "lowest" ? "the lowest-loss one of all starts (--keep lowest)"
                                               : "the one from --init (--keep first)"));
  if (o.extrapolate)
    setting("extrapolate",
            "D = inf rows: each mean fitted as a + b D^-p over the --D rows by weighted least "
            "squares (weights 1/se^2), value a, se from the fit's covariance; p = 1 unless the "
            "chi-square goodness-of-fit test rejects it at 5%, then the p in {2/3, 1/2} with the "
            "smallest chi^2; se times sqrt(chi^2/dof) when that exceeds 1 (mc/slr_extrapolate.hpp); "
            "<q>_fit = the exponent p, <q>_fit_p = the fit's goodness-of-fit p-value; converged = 1 "
            "when every seed of every size converged, seeds_converged = how many seeds did over all "
            "sizes, iterations = their mean");
  setting("seed", std::to_string(o.seed));
  // Everything else that changes the numbers, for the cache (tools/runner/runner.hpp --cache).
  setting("run", "D=" + o.D + " seeds=" + std::to_string(o.seeds) + " init=" + o.init +
                     " c0=" + fmt(o.c0) + " restarts=" + std::to_string(o.restarts) + " keep=" +
                     o.keep + " per_seed=" + std::to_string(o.per_seed) +
                     (population ? " mode=population" : " mode=erm"));

  for (const auto& p : points)
    job.chains.push_back(
        {"task=" + slr::to_string(p.set.task) + ";L=" + join_lengths(p.set.lengths) + ";nu=" +
             fmt(p.set.nu) + ";delta=" + fmt(p.set.delta) + ";act=" + slr::to_string(p.set.activation) +
             ";lambda=" + fmt(p.lambda) + ";alpha=" + fmt(p.alpha) + ";m=" + fmt(p.mk) + "," +
             fmt(p.qk) + "," + fmt(p.mv) + "," + fmt(p.qv),
         Ds.size() * (1 + (o.per_seed ? static_cast<std::size_t>(o.seeds) : 0)) +
             (o.extrapolate ? 1 : 0)});

  const std::size_t first_output = population ? 19 : 15;
  // Seeds of the run as tasks (the runner's chains x sizes x seeds): when they fill the cores, a
  // seed draws its data and test sets in one pass (the same samples; no extra pass).
  if (o.run.threads > 0 && o.run.threads <= kMaxThreads) omp_set_num_threads(o.run.threads);
  const bool split_seed =
      slr::mc::seeds_leave_cores_idle(double(points.size()) * Ds.size() * o.seeds);
  // The leading fields of a row (source .. seed_index): the point, the size and the seed.
  const std::string init_text = population ? "" : slr::mc::to_string(eopt.init);
  auto lead = [=](const Point& p, const std::string& D, const std::string& N, const std::string& idx) {
    return std::vector<std::string>{"mc",
                                    o.mode,
                                    slr::to_string(p.set.task),
                                    join_lengths(p.set.lengths),
                                    fmt(p.set.nu),
                                    population ? "" : fmt(p.lambda),
                                    fmt(p.set.delta),
                                    slr::to_string(p.set.activation),
                                    fmt(p.set.erf_b),
                                    init_text,
                                    population ? "" : fmt(p.alpha),
                                    D,
                                    N,
                                    idx};
  };
  auto sample_count = [=](const Point& p, int D) {
    return population ? std::to_string(o.n_test) : std::to_string(std::max(1L, std::lround(p.alpha * D)));
  };
  // Row k of chain c, for --resume: per size, the mean row then (--per-seed) one row per seed;
  // last (--extrapolate) the D = inf row.
  const std::size_t rows_per_size = 1 + (o.per_seed ? static_cast<std::size_t>(o.seeds) : 0);
  job.row_key = [=](std::size_t c, std::size_t k) {
    const Point& p = points[c];
    if (k >= Ds.size() * rows_per_size) return lead(p, "inf", "inf", "all");
    const int D = Ds[k / rows_per_size];
    const std::size_t j = k % rows_per_size;
    return lead(p, std::to_string(D), sample_count(p, D), j == 0 ? "all" : std::to_string(j - 1));
  };
  job.run_chain = [=](std::size_t c) {
    const Point& p = points[c];
    const std::size_t nD = Ds.size(), S = static_cast<std::size_t>(o.seeds);
    // Every (size, seed) of the point as tasks of the one thread team.
    std::vector<std::vector<SeedResult>> res(nD, std::vector<SeedResult>(S));
    slr::mc::ErmOptions e = eopt;
    e.lambda = p.lambda;
    e.split_seed = split_seed;
    parallel_for(nD * S, [&](std::size_t i) {
      const int D = Ds[i / S];
      const std::uint64_t idx = i % S;
      res[i / S][idx] = population ? slr::mc::run_population_seed(p.set, D, p.mk, p.qk, p.mv, p.qv,
                                                                   o.n_test, o.seed, idx, split_seed)
                                   : slr::mc::run_erm_seed(p.set, D, p.alpha, e, o.seed, idx);
    });
    auto common = [&](const std::string& D, const std::string& N, const std::string& idx, int nseeds) {
      std::vector<std::string> row = lead(p, D, N, idx);
      row.push_back(std::to_string(nseeds));
      if (population)
        for (double x : {p.mk, p.qk, p.mv, p.qv}) row.push_back(fmt(x));
      return row;
    };
    auto fit_blanks = [&](std::vector<std::string>& row) {
      if (o.extrapolate) row.insert(row.end(), 2 * stats.size(), "");
    };
    std::vector<std::vector<std::string>> rows;
    std::vector<Summary> sums;
    for (std::size_t d = 0; d < nD; ++d) {
      const int D = Ds[d];
      sums.push_back(slr::mc::summarize_seeds(res[d]));
      const Summary& Sm = sums.back();
      const std::string N = sample_count(p, D);
      auto row = common(std::to_string(D), N, "all", Sm.seeds);
      for (const auto& st : stats) {
        const Estimate& x = Sm.*(st.summary);
        row.push_back(fmt(x.mean));
        // population mode: pooled standard errors of the two risks (i.i.d. test samples)
        if (population && st.summary == &Summary::e_test)
          row.push_back(fmt(Sm.e_test_pooled_se));
        else if (population && st.summary == &Summary::e_bayes)
          row.push_back(fmt(Sm.e_bayes_pooled_se));
        else
          row.push_back(fmt(x.se));
      }
      row.push_back(Sm.converged == Sm.seeds ? "1" : "0");
      row.push_back(std::to_string(Sm.converged));
      row.push_back(fmt(Sm.iterations.mean));
      row.push_back(fmt(Sm.seconds.mean));
      fit_blanks(row);
      require_finite(row, job.columns, first_output, "mc slr");
      rows.push_back(row);
      if (o.per_seed)
        for (std::size_t i = 0; i < Sm.per_seed.size(); ++i) {
          const SeedResult& r = Sm.per_seed[i];
          auto pr = common(std::to_string(D), N, std::to_string(i), 1);
          for (const auto& st : stats) {
            pr.push_back(fmt(r.*(st.seed)));
            pr.push_back("");
          }
          pr.push_back(r.converged ? "1" : "0");
          pr.push_back(r.converged ? "1" : "0");
          pr.push_back(std::to_string(r.iterations));
          pr.push_back(fmt(r.seconds));
          fit_blanks(pr);
          require_finite(pr, job.columns, first_output, "mc slr");
          rows.push_back(pr);
        }
    }
    if (o.extrapolate) {  // the D = inf row
      auto row = common("inf", "inf", "all", o.seeds);
      std::vector<std::string> fits;
      int converged = 0, seeds = 0;
      double iterations = 0, seconds = 0;
      for (const auto& st : stats) {
        std::vector<slr::mc::SizePoint> pts;
        for (std::size_t d = 0; d < nD; ++d) {
          const Estimate& x = sums[d].*(st.summary);
          pts.push_back({double(Ds[d]), x.mean, x.se});
        }
        const slr::mc::Extrapolation ex = slr::mc::extrapolate(pts);
        row.push_back(fmt(ex.value));
        row.push_back(fmt(ex.se));
        fits.push_back(slr::mc::exponent_text(ex.exponent));
        fits.push_back(ex.dof > 0 && ex.weighted ? fmt(ex.p_value) : "");
      }
      for (const auto& Sm : sums) {
        converged += Sm.converged;
        seeds += Sm.seeds;
        iterations += Sm.iterations.mean / nD;
        seconds += Sm.seconds.mean * Sm.seeds;
      }
      row.push_back(converged == seeds ? "1" : "0");
      row.push_back(std::to_string(converged));
      row.push_back(fmt(iterations));
      row.push_back(fmt(seconds));
      row.insert(row.end(), fits.begin(), fits.end());
      require_finite(row, job.columns, first_output, "mc slr");
      rows.push_back(row);
    }
    return rows;
  };
  run_grid(job, o.run);
  check_stdout_written(o.run.out);
}

}  // namespace

void register_mc_slr(CLI::App& mc) {
  auto o = std::make_shared<McSlrCli>();
  CLI::App* sub = mc.add_subcommand(
      "slr", "SLR direct simulation: L-BFGS ERM or population risk at finite D (docs/equations/slr_replica.md §6)");
  sub->add_option("--mode", o->mode, "erm (train by L-BFGS) or population (fixed overlaps)")
      ->capture_default_str();
  sub->add_option("--task", o->task, "spiked or max")->capture_default_str();
  sub->add_option("--L", o->L, "Sequence length in [1, 1e6] (sweepable: one fixed length per value)")
      ->capture_default_str();
  sub->add_option("--L-dist", o->L_dist,
                  "Variable length: a set (e.g. 1,2,3 or 1:3:3), L uniform on it per sample; "
                  "excludes --L");
  sub->add_option("--nu", o->nu, "Signal strength nu in [0, 1e3] (inf allowed for max; sweepable)")
      ->capture_default_str();
  sub->add_option("--lambda", o->lambda, "Ridge lambda in [0, 1e4] of (S13) (sweepable)")
      ->capture_default_str();
  sub->add_option("--delta", o->delta, "Noise variance Delta in [0, 1e4] (sweepable)")
      ->capture_default_str();
  sub->add_option("--alpha", o->alpha, "Sample ratio in [1e-3, 1e4] (sweepable); N = max(1, round(alpha D))")->capture_default_str();
  sub->add_option("--D", o->D,
                  "Embedding dimension(s), integers in [4, 1e7], each at most once (a list: one row per "
                  "size; the sizes of one point run together)")
      ->capture_default_str();
  sub->add_flag("--extrapolate", o->extrapolate,
                "Add a D = inf row per point: every mean fitted as a + b D^-p over the --D rows "
                "(p = 1, or 2/3 or 1/2 when a goodness-of-fit test rejects 1/D; docs/mc_slr.md)");
  sub->add_option("--seeds", o->seeds, "Number of independent seeds (teacher + data) in [1, 1e5]")
      ->capture_default_str();
  add_seed_option(sub, o->seed, "Base seed (an integer in [0, 2^64)); seed i uses the streams (seed, i, purpose)");
  sub->add_option("--activation", o->activation, "softmax, linear, erf, softplus (comma list)")
      ->capture_default_str();
  sub->add_option("--erf-b", o->erf_b, "Offset b of the erf activation, |b| <= 1e3")->capture_default_str();
  sub->add_option("--init", o->init,
                  "informed (k = c0 k*, v = v*), random (entries N(0, 0.01)) or overlaps (--m-k ... values)")
      ->capture_default_str();
  o->c0_option = sub->add_option(
      "--c0", o->c0,
      "Informed key scale in [0, 100] (default: sqrt(nu) spiked / min(nu,3) max for softmax and "
      "softplus, 0.5 for linear and erf)");
  sub->add_option("--n-test", o->n_test, "Fresh test samples per seed, >= 1 with n_test L D <= 1e9")->capture_default_str();
  sub->add_option("--max-iter", o->max_iter, "L-BFGS iterations in [1, 1e6]")->capture_default_str();
  sub->add_option("--gtol", o->gtol, "L-BFGS gradient tolerance (max |grad|) in [0, 1]")
      ->capture_default_str();
  sub->add_option("--ftol", o->ftol, "L-BFGS relative function tolerance in [0, 1]")->capture_default_str();
  sub->add_option("--m-k", o->m_k, "Population mode: m_k in [-100, 100] (sweepable); --init overlaps: start m_k");
  sub->add_option("--q-k", o->q_k, "Population mode: q_k in [m_k^2, 1e4] (sweepable)");
  sub->add_option("--m-v", o->m_v, "Population mode: m_v in [-100, 100] (sweepable)");
  sub->add_option("--q-v", o->q_v, "Population mode: q_v in [m_v^2, 1e4] (sweepable)");
  sub->add_flag("--per-seed", o->per_seed, "Also write one row per seed");
  sub->add_option("--restarts", o->restarts,
                  "Landscape probe: minimise each training set from this many starts (1..64) and "
                  "report the overlaps between the minima (q_*_ab vs q_*_aa)")
      ->capture_default_str();
  sub->add_option("--keep", o->keep,
                  "With --restarts: report the minimiser from --init (first) or the one with the "
                  "lowest training loss of all starts (lowest)")
      ->capture_default_str();
  add_run_options(sub, o->run);
  sub->footer(
      "Sizes are checked before anything is allocated: N L D and n_test L D at most 1e9 tokens per "
      "seed, and the memory of the seeds that run at once (one per thread) at most half the "
      "physical memory (16 GB at most).");
  sub->callback([o] { run_mc_slr(*o); });
}

}  // namespace saddle
