// Laplace tables of docs/equations/slr_population.md §7a shared by the population paths (an internal
// header of the population module): uniform grids, the normalised activations a(y) > 0, the
// one-token tables L_j(t; mu) = E[a(Y)^j e^{-t a(Y)}] of a Gaussian Y on a tau = log t grid
// (laplace_table), the function Lambda_{sigma^2}(e^s) of (S29) (LambdaTable), and the tau steps of
// the ridge-aligned grids.
#pragma once
#include <cmath>
#include <vector>

#include "equations/slr_model.hpp"
#include "integrators/special.hpp"

namespace saddle {
namespace slr {
namespace detail {

constexpr double kExpUnderflow = 745.0;
// Largest q_k of the shared-lattice tables (laplace_table: ~300 sqrt(q) nodes); softmax beyond it
// uses the log-normal kernel of equations/slr_laplace_lognormal.hpp.
constexpr double kLatticeMaxQ = 1e5;
// phi(x) underflows to 0 beyond |x| = 38.6
constexpr double kXUnderflow = 38.6;

inline bool normalised(Activation a) { return a == Activation::Softmax || a == Activation::Softplus; }
inline int max_length(const std::vector<int>& lengths) {
  int m = lengths.front();
  for (int L : lengths) m = L > m ? L : m;
  return m;
}

// Uniform grid lo + h i, i = 0..n-1, covering [lo, hi].
struct Grid {
  double lo = 0.0, h = 1.0;
  int n = 0;
  double at(int i) const { return lo + h * i; }
};
Grid make_grid(double lo, double hi, double h);

// Normalised activations a(y) > 0 (§2): softmax e^y, softplus log(1 + e^y).
inline double act_a(Activation act, double y) {
  return act == Activation::Softmax ? std::exp(y) : log1p_exp(y);
}
inline double log_act_a(Activation act, double y) {
  if (act == Activation::Softmax) return y;
  if (y < -30.0) return y + std::log1p(-0.5 * std::exp(y));
  return std::log(log1p_exp(y));
}
// An upper estimate of log E[a(Y)], Y ~ N(mu, q) (sets the lower end of the Laplace grid).
double log_mean_a(Activation act, double mu, double q);

// ---------------------------------------------------------------------------------------------
// Laplace tables (§7a): for Y ~ N(mu, q), q > 0, on a tau grid: log L0, 1 - L0, and the scaled
// tL1 = t L1 = E[(ta) e^{-ta}] <= 1/e, t2L2 = t^2 L2 = E[(ta)^2 e^{-ta}] <= 4/e^2 (no overflow for
// any q: ta = exp(tau + log a) is formed in log space).
struct LapTable {
  std::vector<double> logL0, cL0, tL1, t2L2;
  LapTable() = default;
  explicit LapTable(int n) : logL0(n), cL0(n), tL1(n), t2L2(n) {}  // n grid points, zeros
};

LapTable laplace_table(Activation act, double mu, double q, const Grid& tau,
                       const PopulationAccuracy& acc);

// Step of the log-Laplace grid tau = log t for the 1-D reductions (S26)-(S28) and the max-SLR A.
// Range: below tau = -log L - log max a - tail the integrand is < L t max a (the Gaussian
// variables are truncated at x_tail, so max a = a(mu + x_tail sqrt(q))); above, e^{-t a} is
// below e^{-tail} for every token. Step: the integrand is int phi(x) g(tau + log a(mu + sq x)) dx
// times powers of L0(tau) = int phi(x) e^{-e^{tau} a(..)} dx. For softmax, log a is linear in x,
// so every factor is a Gaussian (scale sq in tau) convolved with a bump of scale 1: its Fourier
// transform decays like exp(-(sq k h_r')^2/2)... and the trapezoid rule in tau is exact to the
// same order with steps up to h_r sq, h_r the Gaussian-variable step (h_x, shrunk for large L
// where Phi^{L-1} sharpens to the scale 1/sqrt(2 log L)). Softplus (log a curved) keeps h_tau.
double ridge_step_x(int Lmax, const PopulationAccuracy& acc);
double ridge_tau_step(Activation act, double sq, int Lmax, const PopulationAccuracy& acc);

// exp((n) * logx) with n possibly 0 (then 1 even if logx = -inf).
inline double powlog(double logx, double n) {
  if (n == 0.0) return 1.0;
  return std::exp(n * logx);
}

// Lambda_{sigma^2}(e^s) = E[exp(-e^{s + sigma X})] and its complement, X ~ N(0,1) (§7a (S29)),
// tabulated on a fine s grid with their s-derivatives; cubic Hermite interpolation of
// log Lambda and log(1 - Lambda).
class LambdaTable {
 public:
  LambdaTable(double sigma, double s_lo, double s_hi, const PopulationAccuracy& acc);
  // log Lambda(e^s) and log(1 - Lambda(e^s)).
  void eval(double s, double& logv, double& logc) const;

 private:
  double sigma_;
  Grid grid_;
  std::vector<double> lv_, dlv_, lc_, dlc_;
};

}  // namespace detail
}  // namespace slr
}  // namespace saddle
