// SLR at population level (docs/equations/slr_population.md §3, §7a): the expectations A = E[sum_l s_l^2] and
// B = E[s_{eps*}] of (S7) for the four activations, the Bayes risk (S9), the closed forms of §3.6,
// and the optimisation of the risk over the key/value overlaps (§3.4).
//
// Every L-dimensional expectation is reduced to 1-D (or, for the max-SLR B of a normalised
// activation at finite nu, 2-D) integrals by the Laplace identities of §7a, (S26)-(S30), so the
// cost does not depend on L: the length enters only as an exponent (L-1) log L0 in log space.
// Element-wise activations decouple across tokens (§3.8): spiked-SLR closed forms / 1-D sums,
// max-SLR through the density of chi*_{eps*} (one 1-D Laplace integral per x, cached per (nu, L)).
//
// The basic declarations (PopulationSetting, AB, population_AB, population_risk, bayes_risk) are
// in equations/slr_model.hpp; this header adds accuracy control, the complements 1-A, 1-B (used to
// keep small risks accurate), and the optimiser.
#pragma once
#include <limits>
#include <stdexcept>
#include <vector>

#include "equations/slr_model.hpp"
#include "solver/system.hpp"

namespace saddle {
namespace slr {

// Domain of the population computations (docs/equations/slr_population.md §7c): inside it every
// quantity is computed to the stated accuracy in bounded time and memory; outside it the functions
// below throw PopulationDomainError before allocating anything.
// - nu <= 1e3 (max-SLR: or inf), the domain of `slr erm` and `slr bayes`;
// - q_k (>= m_k^2, so |m_k| <= sqrt(q_k)) up to a bound per activation and task:
//   linear 1e100 (closed forms); softmax: spiked 1e12 (the cost does not depend on q_k), max-SLR
//   1e6 (the 2-D (S30) grid ~ sqrt(q_k): up to ~1 s and 10 MB per evaluation); erf 1e6;
//   normalised softplus: spiked 1e5, max-SLR 1e4 (finite nu) and 1e2 (nu = inf);
// - erf in max-SLR: |m_k| <= 10 sqrt(1 + 2 (q_k - m_k^2)) as well;
// - erf offset |b| <= 10 (beyond, (1 + erf)^2 underflows where b + chi << 0 and A = 0).
constexpr double kPopulationMaxNu = 1e3;
constexpr double kPopulationMaxQkLinear = 1e100;
constexpr double kPopulationMaxQkSoftmax = 1e12;
constexpr double kPopulationMaxQkSoftmaxMax = 1e6;
constexpr double kPopulationMaxQkErf = 1e6;
constexpr double kPopulationMaxQkSoftplus = 1e5;
constexpr double kPopulationMaxQkSoftplusMax = 1e4;
constexpr double kPopulationMaxQkSoftplusMaxInf = 1e2;
constexpr double kPopulationMaxErfSlope = 10.0;
constexpr double kPopulationMaxErfB = 10.0;

// Thrown for a point outside the domain above (nu, or the key overlaps m_k, q_k: not finite or too
// large). An iteration that visits such a point (the replica at small ridge, whose overlaps grow
// without bound near the interpolation threshold) can catch it and mark the point as not converged
// with what() as the reason. Plain bad input (nu < 0 or NaN, spiked nu = inf, q_k < m_k^2, L < 1,
// |erf b| > 10) throws std::invalid_argument itself.
struct PopulationDomainError : OutOfDomain {
  using OutOfDomain::OutOfDomain;
};

// Largest q_k of the domain for (task, activation, nu).
double population_max_qk(Task task, Activation act, double nu);
// Largest m_k with (m_k, m_k^2 + dq_k) in the domain of set (the optimiser's automatic bound).
double population_max_mk(const PopulationSetting& set, double dq_k);
// Throws PopulationDomainError / std::invalid_argument as the evaluations below would (nothing is
// computed).
void check_population_domain(const PopulationSetting& set, double m_k, double q_k);

// (S7) A and B at (m_k, q_k), q_k >= m_k^2 (tolerance 1e-12 relative), averaged over the length law.
// Throws std::invalid_argument on bad input (nu < 0, nu = inf in spiked, q_k < m_k^2, L < 1).
ABDetail population_AB_detail(const PopulationSetting& set, double m_k, double q_k,
                              const PopulationAccuracy& acc);
AB population_AB(const PopulationSetting& set, double m_k, double q_k,
                 const PopulationAccuracy& acc);

// (S8): min over v of (S7), 1 - B^2/A, formed as [(1-B)(1+B) - (1-A)]/A when the complements are
// available (no cancellation for small risks), and as (A - B^2)/A from dAB where even that
// cancels (risk < 1e-3 (1 - B): spiked softmax away from m_k = c_nu at large nu).
double risk_optimal_v(const ABDetail& ab);

// (S9) Bayes risk with explicit accuracy; also the second (Nishimori) form 1 - E[p_{eps*}].
double bayes_risk(Task task, const std::vector<int>& lengths, double nu,
                  const PopulationAccuracy& acc);
double bayes_risk_via_B(Task task, const std::vector<int>& lengths, double nu,
                        const PopulationAccuracy& acc);

// (S11) mu_1(L) = E[sum_l p_l chi*_l] in max-SLR (nu = inf: E[max of L N(0,1)]), computed as the
// mean of the density of chi*_{eps*} (independent of the Stein identity mu_1 = nu E_Bayes).
double max_mu1(int L, double nu, const PopulationAccuracy& acc = {});

// Closed forms of §3.6 for linear attention, optimal over (k, v) with q = m^2:
// spiked (S10) with L -> E[L]; max (S12) with mu_1 -> E_L[mu_1(L)] and L -> E[L].
struct LinearOptimum {
  double m_k = 0.0;
  double m_v = 0.0;
  double risk = 0.0;
};
LinearOptimum linear_closed_form(Task task, const std::vector<int>& lengths, double nu,
                                 const PopulationAccuracy& acc = {});

// Optimisation of (S7) over (k, v) (§3.4): q_v = m_v^2, m_v = B/A, q_k = m_k^2 + dq_k, m_k in
// [0, m_k_max] (several starts, then Brent), and b in [-b_max, b_max] for erf (nested Brent).
struct OptimiseOptions {
  bool fix_m_k = false;     // evaluate at m_k (no optimisation over the key)
  double m_k = 0.0;
  bool fix_b = false;       // erf: use set.erf_b instead of optimising it
  double dq_k = 0.0;        // q_k - m_k^2 (the spec's observation: 0 is optimal)
  double m_k_max = 0.0;     // <= 0: automatic, max(10, 2 c_nu) (10 at nu = inf), capped by
                            // population_max_mk (the domain)
  double b_max = 8.0;
  double tol = 1e-7;        // absolute tolerance on m_k and b (max-SLR softmax/softplus:
                            // m_k to max(tol, 1e-5), where the risk is flat to ~1e-10)
  PopulationAccuracy acc{};
};
struct PopulationOptimum {
  double m_k = 0.0, q_k = 0.0, m_v = 0.0, q_v = 0.0, erf_b = 0.0;
  double A = 0.0, B = 0.0;
  double risk = 0.0;
  bool m_k_at_cap = false;  // optimum on the upper bound m_k_max (e.g. softmax, max-SLR, nu = inf)
  bool b_at_cap = false;    // erf offset on +-b_max
  int evaluations = 0;      // number of (A, B) evaluations
};
PopulationOptimum optimise_population(const PopulationSetting& set, const OptimiseOptions& opt);

// Clears the internal caches (density of chi*_{eps*} per (nu, L)); for benchmarks.
void clear_population_caches();

}  // namespace slr
}  // namespace saddle
