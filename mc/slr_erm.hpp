// Direct finite-size simulation of single-location regression: the trainer's driver
// (docs/equations/slr_replica.md §4.1 (S13), §6 protocol). One seed: teacher and data
// (mc/slr_erm_data.hpp), ERM of (S13) (mc/slr_erm_objective.hpp) with Ceres' line-search L-BFGS
// from one or several starts, test error and the Bayes predictor's risk (S9) on fresh samples;
// the population mode of §6 (explicit k, v with prescribed overlaps); means and standard errors
// over seeds.
// Every loop runs through solver/parallel.hpp: seeds as tasks of one thread team, inside a seed
// the objective's blocks, the data's chunks and the test set's chunks (the test set's sequential
// pass runs beside the training). Seed i draws from the streams (seed, i, purpose), so results
// do not depend on the number of threads.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "integrators/estimate.hpp"
#include "mc/slr_erm_data.hpp"
#include "mc/slr_erm_objective.hpp"

namespace saddle {
namespace slr {
namespace mc {

// Informed: k = c0 k*, v = v*. Random: N(0, init_sd^2) entries. Overlaps: k, v built with the
// prescribed overlaps (init_m_k, init_q_k, init_m_v, init_q_v) as in population mode, e.g. to
// start ERM on a branch the replica theory predicts.
enum class Init { Informed, Random, Overlaps };
Init parse_init(const std::string& s);  // "informed" | "random" | "overlaps"; throws std::invalid_argument
std::string to_string(Init i);

// Informed-start key scale c0 (§4.7, §6): softmax/softplus sqrt(nu) (spiked), min(nu, 3) (max);
// linear and erf 0.5.
double default_c0(const SimSetting& set);

struct ErmOptions {
  double lambda = 0.1;                 // lambda_k = lambda_v = lambda
  Init init = Init::Informed;
  double c0 = -1.0;                    // < 0: default_c0
  double init_sd = 0.1;                // random start: entries N(0, init_sd^2) (spec: N(0, 0.01))
  double init_m_k = 0, init_q_k = 0, init_m_v = 0, init_q_v = 0;  // Init::Overlaps
  int max_iterations = 20000;          // §6
  double function_tolerance = 1e-15;   // §6
  double gradient_tolerance = 1e-9;    // §6 (on max_i |grad_i| of (S13))
  double parameter_tolerance = 1e-14;
  int lbfgs_rank = 20;
  int n_test = 20000;                  // fresh test samples (§6)
  // Landscape probe: restarts > 1 also minimises the same training set from restarts - 1 further
  // random starts and measures how far apart the minima are (SeedResult::q_k_ab ...). The
  // reported minimiser is the one from `init`, unless keep_lowest.
  int restarts = 1;
  // With restarts > 1: report the minimiser with the lowest training loss (S13) among all starts
  // (the global minimiser that the zero-temperature replica theory describes, as far as the starts
  // find it) instead of the one from `init`.
  bool keep_lowest = false;
  // Parallelism inside one seed for its data and test sets (chunks formed in parallel after a
  // sequential pass over the stream, the test set's pass beside the training). Off when the
  // seeds alone fill the cores (run_erm and `mc slr` decide): the extra pass is then saved. The
  // results are the same either way.
  bool split_seed = true;
};

// Everything measured for one seed.
struct SeedResult {
  double m_k = 0, q_k = 0, m_v = 0, q_v = 0;     // §3.1
  double kv_star = 0, vk_star = 0, kv = 0;       // cross overlaps k.v*/D, v.k*/D, k.v/D
  double train_mse = 0;                          // mean (y - f)^2 on the training set (incl. Delta)
  double train_loss = 0;                         // (S13) / N at the minimiser
  double test_mse = 0;                           // on fresh samples (incl. Delta)
  double e_test = 0;                             // test_mse - Delta (excess error)
  double e_bayes = 0;                            // Bayes predictor (S9) on the same fresh samples
  double test_var = 0, bayes_var = 0;             // per-sample variances of (y - f)^2
  int n_test = 0;
  // With restarts > 1: mean over pairs of minima a != b of k_a.k_b/D and v_a.v_b/D, the mean
  // self-overlaps q_k, q_v over the minima, and max - min of the training loss (S13)/N. A unique
  // minimum (replica symmetry) gives q_ab = q and spread 0 as D grows; many minima (broken
  // replica symmetry) give q_ab < q.
  double q_k_ab = 0, q_v_ab = 0, q_k_aa = 0, q_v_aa = 0, loss_spread = 0;
  // With restarts > 1: 1 if the minimiser from `init` had the lowest training loss of all starts
  // (ties to within 1e-12 relative count for `init`), else 0.
  double init_lowest = 1;
  int iterations = 0;
  long evaluations = 0;                          // objective evaluations, all starts together
  bool converged = false;                        // Ceres termination CONVERGENCE
  std::string termination;                       // Ceres message
  double seconds = 0;
};

// ERM for one seed: teacher, N = round(alpha D) training samples, L-BFGS, test set.
SeedResult run_erm_seed(const SimSetting& set, int D, double alpha, const ErmOptions& opt,
                        std::uint64_t seed, std::uint64_t index);

// Population mode (§6 "Population module"): k = m_k k* + sqrt(q_k - m_k^2) u_k, v = m_v v* +
// sqrt(q_v - m_v^2) u_v with u_k, u_v orthogonal to each other and to k*, v*, |u|^2 = D; the
// test and Bayes errors on n_test fresh samples. Overlap fields of SeedResult are the realised
// ones.
SeedResult run_population_seed(const SimSetting& set, int D, double m_k, double q_k, double m_v,
                               double q_v, int n_test, std::uint64_t seed, std::uint64_t index,
                               bool split_seed = true);

// Mean and standard error over seeds of each reported quantity.
struct Summary {
  int seeds = 0;
  Estimate m_k, q_k, m_v, q_v, kv_star, vk_star, kv, train_mse, train_loss, test_mse, e_test, e_bayes,
      iterations, seconds;
  Estimate q_k_ab, q_v_ab, q_k_aa, q_v_aa, loss_spread, init_lowest;  // restarts > 1
  int converged = 0;  // number of seeds whose L-BFGS converged
  // Standard errors of e_test, e_bayes from all test samples pooled (population mode: the risk
  // does not depend on the teacher draw, so the pooled samples are i.i.d.).
  double e_test_pooled_se = 0, e_bayes_pooled_se = 0;
  std::vector<SeedResult> per_seed;
};
Summary summarize_seeds(std::vector<SeedResult> results);

// Runs seeds 0..n_seeds-1 in parallel (tasks of one team; results independent of the thread
// count). An exception of a seed is rethrown after the loop (the lowest seed's).
Summary run_erm(const SimSetting& set, int D, double alpha, const ErmOptions& opt, int n_seeds,
                std::uint64_t seed);
// Whether this many seeds running as tasks at once leave cores idle (fewer than two per thread of
// the team): then each seed parallelises its own data and test sets (ErmOptions::split_seed).
bool seeds_leave_cores_idle(double seeds_at_once);
Summary run_population(const SimSetting& set, int D, double m_k, double q_k, double m_v,
                       double q_v, int n_test, int n_seeds, std::uint64_t seed);

}  // namespace mc
}  // namespace slr
}  // namespace saddle
