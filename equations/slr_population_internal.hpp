// Internal declarations of the population module (docs/equations/slr_population.md §3.3, §3.8,
// §7a): the evaluation paths of A, B that population_AB_detail (equations/slr_population.cpp)
// dispatches to, one file each. Not installed API.
#pragma once
#include <memory>
#include <vector>

#include "equations/slr_laplace_tables.hpp"

namespace saddle {
namespace slr {
namespace detail {

// One token attends to itself: A = B = 1 exactly. These set out's A (or B) for L = 1 and return
// true, so that the paths below skip that length.
inline bool one_token_A(int L, ABDetail& out) {
  if (L != 1) return false;
  out.A = 1.0;
  out.cA = 0.0;
  return true;
}
inline bool one_token_B(int L, ABDetail& out) {
  if (L != 1) return false;
  out.B = 1.0;
  out.cB = 0.0;
  return true;
}

// ---- equations/slr_population.cpp: input checks (std::invalid_argument)
void check_lengths(const std::vector<int>& lengths);
void check_nu(Task task, double nu);

// ---- equations/slr_population_normalised.cpp: the 1-D Laplace reductions of §7a
// Spiked-SLR, normalised activation: (S26), (S27), (S28), (S26a), one entry per length.
std::vector<ABDetail> spiked_normalised(Activation act, double mu_s, double q,
                                        const std::vector<int>& lengths,
                                        const PopulationAccuracy& acc);
// Max-SLR, normalised activation: A and 1 - A (S27a) into out[j].A, out[j].cA.
void max_normalised_A(Activation act, double q, const std::vector<int>& lengths,
                      const PopulationAccuracy& acc, std::vector<ABDetail>& out);

// ---- equations/slr_population_max_finite.cpp: max-SLR B at finite nu by the 2-D (S30)
void max_normalised_B_finite(Activation act, double nu, double m, double q,
                             const std::vector<int>& lengths, const PopulationAccuracy& acc,
                             std::vector<ABDetail>& out);

// ---- equations/slr_population_max_inf.cpp: max-SLR B at nu = inf
// X-representation (any activation, key noise r = sqrt(q - m^2) small or softmax).
void max_normalised_B_inf_x(Activation act, double m, double r, const std::vector<int>& lengths,
                            const PopulationAccuracy& acc, std::vector<ABDetail>& out);
// (S30b) Y-representation (softplus with large key noise).
void max_normalised_B_inf_smooth(Activation act, double m, double q,
                                 const std::vector<int>& lengths, const PopulationAccuracy& acc,
                                 std::vector<ABDetail>& out);

// ---- equations/slr_population_elementwise.cpp: element-wise activations (S7a) and the density
// of chi*_{eps*} (S30a)
// Max-SLR: density of chi*_{eps*} (§7a, element-wise max-SLR), on the grid x = lo + h i:
// f_L(x) = L phi(x) e^{nu x} int_0^inf e^{-t e^{nu x}} Lambda_{nu^2}(t)^{L-1} dt (finite nu),
// L phi(x) Phi(x)^{L-1} (nu = inf), phi(x) (nu = 0). Cached per (nu, L, accuracy).
struct TiltDensity {
  Grid x;
  std::vector<double> f;  // density values; sum f h = 1
};
// Cached per (nu, L, accuracy); thread-safe.
std::shared_ptr<const TiltDensity> tilt_density(double nu, int L, const PopulationAccuracy& acc);
void clear_tilt_density_cache();

// Element-wise activations (§3.8): a(y) = 1 + y (linear), 1 + erf(b + y) (erf).
// E[a(Y)] and E[a(Y)^2] for Y ~ N(mu, q), closed forms. For erf:
// E[erf(c + sZ)] = erf(c / sqrt(1 + 2 s^2)),
// E[erf(c + sZ)^2] = 1 - 8 T(sqrt(2) c / sqrt(1 + 2 s^2), 1 / sqrt(1 + 4 s^2)) (Owen's T).
double ew_mean(Activation act, double b, double mu, double q);
// E[(1 + erf(b + Y))^2] (erf) or E[(1 + Y)^2] (linear).
double ew_second(Activation act, double b, double mu, double q, const PopulationAccuracy& acc);
// A and (spiked) B of an element-wise activation at one length; max-SLR B is elementwise_max_B.
ABDetail elementwise_AB(const PopulationSetting& set, int L, double m, double q,
                        const PopulationAccuracy& acc);
// B for element-wise max-SLR: int f_L(x) E_xi[a(m x + r xi)] dx, r^2 = q - m^2.
double elementwise_max_B(const PopulationSetting& set, int L, double m, double q,
                         const PopulationAccuracy& acc);

}  // namespace detail
}  // namespace slr
}  // namespace saddle
