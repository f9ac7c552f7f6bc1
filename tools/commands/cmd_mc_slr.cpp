// `saddle mc slr`: direct finite-size simulation of SLR (docs/equations/slr_population.md §1.5,
// docs/equations/slr_replica.md §6; docs/mc_slr.md). Its options are checked in
// tools/commands/mc_slr_options.cpp; here the points run through the grid runner (tools/runner/runner.hpp),
// one chain per point: its rows for every --D, and with --extrapolate the D = inf row fitted from
// them (mc/slr_extrapolate.hpp).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "equations/slr_model.hpp"
#include "mc/slr_erm.hpp"
#include "mc/slr_extrapolate.hpp"
#include "solver/parallel.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/commands/cmd_groups.hpp"
#include "tools/commands/cmd_slr.hpp"
#include "tools/commands/mc_slr_options.hpp"
#include "tools/runner/runner.hpp"

namespace saddle {
namespace {

using slr::mc::SeedResult;
using slr::mc::Summary;

PlotHints mc_slr_hints() {
  PlotHints h;
  h.y = {"test_error"};
  h.params = {"alpha", "lambda", "nu", "L", "D", "m_k_in"};
  return h;
}

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

void run_mc_slr(const McSlrCli& o) {
  const McSlrPlan plan = plan_mc_slr(o);
  const bool population = plan.population;
  const std::vector<int>& Ds = plan.Ds;
  const std::vector<McSlrPoint>& points = plan.points;
  const slr::mc::ErmOptions& eopt = plan.eopt;

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
        {"task=" + slr::to_string(p.set.task) + ";L=" + length_key(p.set.lengths) + ";nu=" +
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
  auto lead = [=](const McSlrPoint& p, const std::string& D, const std::string& N, const std::string& idx) {
    return std::vector<std::string>{"mc",
                                    o.mode,
                                    slr::to_string(p.set.task),
                                    length_key(p.set.lengths),
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
  auto sample_count = [=](const McSlrPoint& p, int D) {
    return population ? std::to_string(o.n_test) : std::to_string(std::max(1L, std::lround(p.alpha * D)));
  };
  // Row k of chain c, for --resume: per size, the mean row then (--per-seed) one row per seed;
  // last (--extrapolate) the D = inf row.
  const std::size_t rows_per_size = 1 + (o.per_seed ? static_cast<std::size_t>(o.seeds) : 0);
  job.row_key = [=](std::size_t c, std::size_t k) {
    const McSlrPoint& p = points[c];
    if (k >= Ds.size() * rows_per_size) return lead(p, "inf", "inf", "all");
    const int D = Ds[k / rows_per_size];
    const std::size_t j = k % rows_per_size;
    return lead(p, std::to_string(D), sample_count(p, D), j == 0 ? "all" : std::to_string(j - 1));
  };
  job.run_chain = [=](std::size_t c) {
    const McSlrPoint& p = points[c];
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
  add_mc_slr_options(sub, *o);
  sub->footer(
      "Sizes are checked before anything is allocated: N L D and n_test L D at most 1e9 tokens per "
      "seed, and the memory of the seeds that run at once (one per thread) at most half the "
      "physical memory (16 GB at most).");
  sub->callback([o] { run_mc_slr(*o); });
}

}  // namespace saddle
