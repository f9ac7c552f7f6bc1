// `saddle mc slr`: its options described and checked (tools/commands/mc_slr_options.hpp).
#include "tools/commands/mc_slr_options.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "equations/slr_model.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/commands/cmd_groups.hpp"
#include "tools/commands/cmd_slr.hpp"

namespace saddle {
namespace {

using slr::mc::Init;
using slr::mc::SimSetting;


// Domains of `mc slr` (README "Errors and exit codes", docs/mc_slr.md): nu, lambda, delta as the
// replica commands (nu in [0, 1e3] or inf for max, lambda and delta in [0, 1e4], alpha in
// [1e-3, 1e4] with N = max(1, round(alpha D))), D in [4, 1e7], L in [1, 1e6], |erf b| <= 1e3, c0 in [0, 100], population overlaps
// |m| <= 100, q in [0, 1e4] (beyond, normalised softplus attention underflows: 0/0); and the size bounds below.
constexpr double kMaxL = 1e6, kMaxD = 1e7, kMaxErfB = 1e3, kMaxC0 = 100, kMaxM = 100, kMaxQ = 1e4;
// Work bounds (each count that multiplies is checked before allocating): the tokens of one
// training set and of one test set, N L D and n_test L D, at most 1e9 entries each.
constexpr double kMaxEntries = 1e9;

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

}  // namespace

McSlrPlan plan_mc_slr(const McSlrCli& o) {
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
    eopt.init = as_input([&] { return slr::mc::parse_init(o.init); }, "--init");
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
      as_input([&] { return slr::mc::check_setting(s); });
    }

  // ---- the points (chains), in the order of the table ----
  std::vector<McSlrPoint> points;
  for (const auto& a : acts)
    for (const auto& law : laws)
      for (double nu : nus)
        for (double delta : deltas) {
          McSlrPoint p;
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
  McSlrPlan plan;
  plan.population = population;
  plan.Ds = Ds;
  plan.points = points;
  plan.eopt = eopt;
  return plan;
}

void add_mc_slr_options(CLI::App* sub, McSlrCli& o) {
  sub->add_option("--mode", o.mode, "erm (train by L-BFGS) or population (fixed overlaps)")
      ->capture_default_str();
  sub->add_option("--task", o.task, "spiked or max")->capture_default_str();
  sub->add_option("--L", o.L, "Sequence length in [1, 1e6] (sweepable: one fixed length per value)")
      ->capture_default_str();
  sub->add_option("--L-dist", o.L_dist,
                  "Variable length: a set (e.g. 1,2,3 or 1:3:3), L uniform on it per sample; "
                  "excludes --L");
  sub->add_option("--nu", o.nu, "Signal strength nu in [0, 1e3] (inf allowed for max; sweepable)")
      ->capture_default_str();
  sub->add_option("--lambda", o.lambda, "Ridge lambda in [0, 1e4] of (S13) (sweepable)")
      ->capture_default_str();
  sub->add_option("--delta", o.delta, "Noise variance Delta in [0, 1e4] (sweepable)")
      ->capture_default_str();
  sub->add_option("--alpha", o.alpha, "Sample ratio in [1e-3, 1e4] (sweepable); N = max(1, round(alpha D))")->capture_default_str();
  sub->add_option("--D", o.D,
                  "Embedding dimension(s), integers in [4, 1e7], each at most once (a list: one row per "
                  "size; the sizes of one point run together)")
      ->capture_default_str();
  sub->add_flag("--extrapolate", o.extrapolate,
                "Add a D = inf row per point: every mean fitted as a + b D^-p over the --D rows "
                "(p = 1, or 2/3 or 1/2 when a goodness-of-fit test rejects 1/D; docs/mc_slr.md)");
  sub->add_option("--seeds", o.seeds, "Number of independent seeds (teacher + data) in [1, 1e5]")
      ->capture_default_str();
  add_seed_option(sub, o.seed, "Base seed (an integer in [0, 2^64)); seed i uses the streams (seed, i, purpose)");
  sub->add_option("--activation", o.activation, "softmax, linear, erf, softplus (comma list)")
      ->capture_default_str();
  sub->add_option("--erf-b", o.erf_b, "Offset b of the erf activation, |b| <= 1e3")->capture_default_str();
  sub->add_option("--init", o.init,
                  "informed (k = c0 k*, v = v*), random (entries N(0, 0.01)) or overlaps (--m-k ... values)")
      ->capture_default_str();
  o.c0_option = sub->add_option(
      "--c0", o.c0,
      "Informed key scale in [0, 100] (default: sqrt(nu) spiked / min(nu,3) max for softmax and "
      "softplus, 0.5 for linear and erf)");
  sub->add_option("--n-test", o.n_test, "Fresh test samples per seed, >= 1 with n_test L D <= 1e9")->capture_default_str();
  sub->add_option("--max-iter", o.max_iter, "L-BFGS iterations in [1, 1e6]")->capture_default_str();
  sub->add_option("--gtol", o.gtol, "L-BFGS gradient tolerance (max |grad|) in [0, 1]")
      ->capture_default_str();
  sub->add_option("--ftol", o.ftol, "L-BFGS relative function tolerance in [0, 1]")->capture_default_str();
  sub->add_option("--m-k", o.m_k, "Population mode: m_k in [-100, 100] (sweepable); --init overlaps: start m_k");
  sub->add_option("--q-k", o.q_k, "Population mode: q_k in [m_k^2, 1e4] (sweepable)");
  sub->add_option("--m-v", o.m_v, "Population mode: m_v in [-100, 100] (sweepable)");
  sub->add_option("--q-v", o.q_v, "Population mode: q_v in [m_v^2, 1e4] (sweepable)");
  sub->add_flag("--per-seed", o.per_seed, "Also write one row per seed");
  sub->add_option("--restarts", o.restarts,
                  "Landscape probe: minimise each training set from this many starts (1..64) and "
                  "report the overlaps between the minima (q_*_ab vs q_*_aa)")
      ->capture_default_str();
  sub->add_option("--keep", o.keep,
                  "With --restarts: report the minimiser from --init (first) or the one with the "
                  "lowest training loss of all starts (lowest)")
      ->capture_default_str();
  add_run_options(sub, o.run);
}

}  // namespace saddle
