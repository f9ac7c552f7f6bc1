// `saddle slr population`: population-level comparison of attention activations in single-location
// regression (docs/equations/slr_population.md §1-§3, §7a): for each (task, length law, nu, activation) the optimal risk
// over the key/value overlaps (§3.4: q_v = m_v^2, m_v = B/A (S8), q_k = m_k^2 + dq_k, m_k and the
// erf offset b optimised) or the risk at a given m_k (--m-k), next to the Bayes risk (S9).
// Optional field-space Monte Carlo of the predictor at the reported point (--mc-samples).
#include <cmath>
#include <memory>
#include <sstream>

#include "equations/slr_population.hpp"
#include "mc/slr_population_mc.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/commands/cmd_slr.hpp"
#include "tools/runner/runner.hpp"

namespace saddle {
namespace {

// --m-k, --m-k-max: parsed up to here; the domain of each point is checked against the model's
constexpr double kMaxMkInput = 1e50;

struct PopulationCli {
  std::string task = "spiked", L = "2", L_dist, nu = "1:5:9",
              activation = "softmax,linear,erf,softplus", m_k, erf_b, dq_k = "0";
  double m_k_max = 0.0, b_max = 8.0, refine = 1.0;
  long mc_samples = 0;
  unsigned long long seed = 1;
  RunOptions run;
  CLI::Option* L_dist_opt = nullptr;  // to tell an empty --L-dist '' from an absent one
};

void run_population(const PopulationCli& o) {
  using namespace slr;
  // ---- validate everything before any output
  const auto task_names = parse_names(o.task, "task", {"spiked", "max"});
  const auto act_names = parse_names(o.activation, "activation", {"softmax", "linear", "erf", "softplus"});
  if (o.L_dist_opt && o.L_dist_opt->count() > 0 && o.L_dist.empty())
    throw InputError("--L-dist: empty value (give a set of lengths such as 1,2,3, or omit it)");
  const auto laws = parse_length_laws(o.L, o.L_dist, 1e8);
  ParamDomain nur;
  nur.min = 0.0;
  nur.allow_inf = true;
  const auto nus = parse_sweep(o.nu, "nu", nur);
  bool any_spiked = false;
  for (const auto& t : task_names) any_spiked = any_spiked || t == "spiked";
  bool any_max = false;
  for (const auto& t : task_names) any_max = any_max || t == "max";
  // the documented domain (equations/slr_population.hpp): bounded time and memory, stated accuracy
  for (double nu : nus) {
    if (std::isinf(nu) && any_spiked) throw InputError("--nu: inf is only allowed for --task max");
    if (std::isfinite(nu) && nu > kPopulationMaxNu)
      throw InputError("--nu: " + fmt(nu) + " is above 1e3, the largest nu of the population "
                       "formulas (max-SLR: or inf)");
  }
  ParamDomain mk_rule;
  mk_rule.min = 0.0;
  mk_rule.max = kMaxMkInput;
  const bool fix_m = !o.m_k.empty();
  const auto mks = fix_m ? parse_sweep(o.m_k, "m-k", mk_rule) : std::vector<double>{0.0};
  const bool fix_b = !o.erf_b.empty();
  ParamDomain b_rule;
  b_rule.min = -kPopulationMaxErfB;
  b_rule.max = kPopulationMaxErfB;
  const auto bs = fix_b ? parse_sweep(o.erf_b, "erf-b", b_rule) : std::vector<double>{0.0};
  ParamDomain dq_rule;
  dq_rule.min = 0.0;
  dq_rule.max = kPopulationMaxQkLinear;
  const auto dqs = parse_sweep(o.dq_k, "dq-k", dq_rule);
  check_grid({task_names.size(), laws.size(), nus.size(), mks.size(), bs.size(), dqs.size()});
  if (!(o.m_k_max >= 0) || !(o.m_k_max <= kMaxMkInput))
    throw InputError("--m-k-max: must be in [0, 1e50] (0: automatic)");
  if (!(o.b_max > 0) || !(o.b_max <= kPopulationMaxErfB)) throw InputError("--b-max: must be in (0, 10]");
  if (!(o.refine >= 0.25) || !(o.refine <= 8)) throw InputError("--refine: must be in [0.25, 8]");
  if (o.mc_samples < 0 || o.mc_samples == 1 || o.mc_samples > 1000000000L)
    throw InputError("--mc-samples: must be 0 or in [2, 1e9]");
  if (o.mc_samples > 0) {
    int Lmax = 1;
    for (const auto& law : laws)
      for (int L : law) Lmax = std::max(Lmax, L);
    if (double(o.mc_samples) * Lmax > 1e10)
      throw InputError("--mc-samples: samples x L = " + fmt(double(o.mc_samples) * Lmax) +
                       " token draws, above 1e10");
  }

  struct Point {
    Task task;
    std::vector<int> Ls;
    double nu;
    Activation act;
    double m_k, b, dq;
  };
  std::vector<Point> points;
  for (const auto& tn : task_names)
    for (const auto& law : laws)
      for (double nu : nus)
        for (const auto& an : act_names)
          for (double mk : mks)
            for (double b : (an == "erf" ? bs : std::vector<double>{0.0}))
              for (double dq : dqs)
                points.push_back({parse_task(tn), law, nu, parse_activation(an), mk, b, dq});

  // Every point's search must stay inside the domain of (task, activation, nu): its largest key
  // overlap decides (q_k = m_k^2 + dq_k; the automatic m_k_max is capped by the domain).
  for (const Point& p : points) {
    PopulationSetting set;
    set.task = p.task;
    set.lengths = p.Ls;
    set.nu = p.nu;
    set.activation = p.act;
    const double m_auto = std::min(std::isinf(p.nu) ? 10.0 : std::max(10.0, 2.0 * c_nu(p.task, p.nu)),
                                   population_max_mk(set, p.dq));
    const double m_top = fix_m ? p.m_k : o.m_k_max > 0 ? o.m_k_max : m_auto;
    const std::string flag = fix_m ? "--m-k" : o.m_k_max > 0 ? "--m-k-max" : "--dq-k";
    const std::string where = " (at --task " + to_string(p.task) + " --nu " + fmt(p.nu) + " --activation " +
                              to_string(p.act) + "; see --help for the domain)";
    as_input([&] { check_population_domain(set, m_top, m_top * m_top + p.dq); }, flag, where);
  }

  GridJob job;
  job.columns = {"task", "L", "nu", "activation", "m_k", "q_k", "m_v", "q_v", "risk", "bayes_risk",
                 "erf_b", "L_mean", "A", "B", "gap", "m_k_at_cap", "b_at_cap", "evaluations"};
  if (o.mc_samples > 0) {
    job.columns.push_back("risk_mc");
    job.columns.push_back("risk_mc_se");
  }
  std::ostringstream acc_desc;
  acc_desc << "refine=" << fmt(o.refine) << " (Laplace reduction §7a, (S26)-(S30); cost independent of L)";
  job.settings = {
      {"model", "SLR population risk (S7) E = 1 - 2 m_v B + q_v A, optimal v (S8); Bayes (S9)"},
      {"optimisation", fix_m ? "m_k given (--m-k); q_k = m_k^2 + dq_k; m_v = B/A, q_v = m_v^2"
                             : "m_k in [0, m_k_max] (scan + Brent), q_k = m_k^2 + dq_k, m_v = B/A, q_v = m_v^2"},
      {"erf_offset", fix_b ? "given (--erf-b)" : "optimised in [-b_max, b_max], b_max = " + fmt(o.b_max)},
      {"m_k_max", o.m_k_max > 0 ? fmt(o.m_k_max) : "auto: max(10, 2 c_nu), 10 at nu = inf"},
      {"accuracy", acc_desc.str()},
      {"L", o.L_dist.empty() ? "fixed" : "uniform on {" + o.L_dist + "}, one shared (k, v)"}};
  job.plot.y = {"risk"};
  job.sweep = swept_columns({{"task", task_names.size()}, {"L", laws.size()}, {"nu", nus.size()}, {"activation", act_names.size()},
                             {"m_k", mks.size()}, {"erf_b", bs.size()}});
  job.plot.references = {"bayes_risk"};
  job.plot.series = {"activation"};
  if (fix_m) job.plot.params = {"m_k", "nu", "L", "dq_k", "erf_b"};
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    std::string Lkey;
    for (std::size_t j = 0; j < p.Ls.size(); ++j) Lkey += (j ? "|" : "") + std::to_string(p.Ls[j]);
    job.chains.push_back({"task=" + to_string(p.task) + ";L=" + Lkey + ";nu=" + fmt(p.nu) +
                              ";act=" + to_string(p.act) + ";mk=" + (fix_m ? fmt(p.m_k) : "opt") +
                              ";b=" + (fix_b ? fmt(p.b) : "opt") + ";dq=" + fmt(p.dq) +
                              ";mkmax=" + fmt(o.m_k_max) + ";bmax=" + fmt(o.b_max) +
                              ";refine=" + fmt(o.refine) + ";mc=" + std::to_string(o.mc_samples) +
                              ";seed=" + std::to_string(o.seed),
                          1});
  }
  // Row of chain c (one point per chain): its leading fields task, L, nu, activation (and m_k
  // when given).
  job.row_key = [=](std::size_t c, std::size_t) {
    const Point& p = points[c];
    std::vector<std::string> key{to_string(p.task), length_key(p.Ls), fmt(p.nu), to_string(p.act)};
    if (fix_m) key.push_back(fmt(p.m_k));
    return key;
  };
  const long mc_samples = o.mc_samples;
  const unsigned long long seed = o.seed;
  const double refine = o.refine, m_k_max = o.m_k_max, b_max = o.b_max;
  job.run_chain = [=](std::size_t c) {
    const Point& p = points[c];
    PopulationSetting set;
    set.task = p.task;
    set.lengths = p.Ls;
    set.nu = p.nu;
    set.activation = p.act;
    set.erf_b = p.b;
    OptimiseOptions opt;
    opt.fix_m_k = fix_m;
    opt.m_k = p.m_k;
    opt.fix_b = fix_b;
    opt.dq_k = p.dq;
    opt.m_k_max = m_k_max;
    opt.b_max = b_max;
    opt.acc = PopulationAccuracy{}.refined(refine);
    PopulationOptimum r = optimise_population(set, opt);
    const double eb = bayes_risk(p.task, p.Ls, p.nu, opt.acc);
    double Lmean = 0;
    for (int L : p.Ls) Lmean += L;
    Lmean /= p.Ls.size();
    const std::string Lkey = length_key(p.Ls);
    std::vector<std::string> row{to_string(p.task), Lkey, fmt(p.nu), to_string(p.act),
                                 fmt(r.m_k), fmt(r.q_k), fmt(r.m_v), fmt(r.q_v), fmt(r.risk),
                                 fmt(eb), p.act == Activation::Erf ? fmt(r.erf_b) : "0",
                                 fmt(Lmean), fmt(r.A), fmt(r.B), fmt(r.risk - eb),
                                 r.m_k_at_cap ? "1" : "0", r.b_at_cap ? "1" : "0",
                                 std::to_string(r.evaluations)};
    if (mc_samples > 0) {
      PopulationMcOptions mo;
      mo.samples = mc_samples;
      mo.seed = seed * 1000003ULL + c;
      set.erf_b = r.erf_b;
      auto mc = population_mc(set, r.m_k, r.q_k, r.m_v, r.q_v, mo);
      row.push_back(fmt(mc.risk.mean));
      row.push_back(fmt(mc.risk.se));
    }
    for (std::size_t j = 3; j < row.size(); ++j)  // computed columns (nu = inf is an input)
      if (row[j].find("nan") != std::string::npos || row[j].find("inf") != std::string::npos)
        throw std::runtime_error("slr population: non-finite " + job.columns[j] + " in the output");
    return std::vector<std::vector<std::string>>{row};
  };
  run_grid(job, o.run);
}

}  // namespace

void register_slr_population(CLI::App& slr) {
  auto o = std::make_shared<PopulationCli>();
  CLI::App* sub = slr.add_subcommand(
      "population",
      "Population risk of softmax / linear / erf / softplus attention vs the Bayes risk (docs/equations/slr_population.md §3, §7a)");
  sub->add_option("--task", o->task, "spiked and/or max (comma list)")->capture_default_str();
  sub->add_option("--L", o->L, "Sequence length(s), integers in [1, 1e8] (sweepable)")->capture_default_str();
  o->L_dist_opt = sub->add_option("--L-dist", o->L_dist,
                  "Length drawn uniformly from this set (e.g. 1,2,3), one shared (k, v); excludes --L");
  sub->add_option("--nu", o->nu,
                  "Signal strength nu in [0, 1e3] (sweepable); max-SLR: or inf")
      ->capture_default_str();
  sub->add_option("--activation", o->activation, "softmax, linear, erf, softplus (comma list)")
      ->capture_default_str();
  sub->add_option("--m-k", o->m_k,
                  "Evaluate at this key overlap m_k >= 0 (sweepable) instead of optimising it; q_k = m_k^2 + dq_k "
                  "within the key-overlap domain: linear 1e100, softmax 1e12 (max-SLR 1e6), erf 1e6, "
                  "softplus 1e5 (max-SLR 1e4, nu = inf 1e2)");
  sub->add_option("--dq-k", o->dq_k,
                  "q_k - m_k^2 >= 0 (sweepable; 0 is optimal per docs/equations/slr_population.md §3.4); q_k within "
                  "the domain of --m-k")
      ->capture_default_str();
  sub->add_option("--erf-b", o->erf_b, "Fixed erf offset b in [-10, 10] (sweepable) instead of optimising it");
  sub->add_option("--m-k-max", o->m_k_max, "Upper bound of m_k in the optimisation, in [0, 1e50] within the domain of --m-k (0: automatic)")
      ->capture_default_str();
  sub->add_option("--b-max", o->b_max, "erf offset searched in [-b_max, b_max]; b_max in (0, 10]")->capture_default_str();
  sub->add_option("--refine", o->refine,
                  "Quadrature refinement factor in [0.25, 8] (steps / refine; 2 checks the digits)")
      ->capture_default_str();
  sub->add_option("--mc-samples", o->mc_samples,
                  "Also estimate the risk at the reported point by field-space Monte Carlo (S6): 0 (off) or "
                  "samples in [2, 1e9], samples x L <= 1e10")
      ->capture_default_str();
  sub->add_option("--seed", o->seed, "Monte Carlo seed")->capture_default_str();
  add_run_options(sub, o->run);
  sub->callback([o] { run_population(*o); });
}

}  // namespace saddle
