// Laplace factors of a log-normal variable in log form, for any mean and any spread
// (docs/equations/slr_population.md §7b). For Y ~ N(c, s^2):
//   F_k(c) = E[e^{kY} exp(-e^Y)]   (k = 0, 1, 2, 3),      C(c) = 1 - F_0(c) = E[1 - exp(-e^Y)].
// With a = e^{chi} (softmax) and t = e^tau these are the one-token factors of §7a at
// c = tau + mu: L_0 = F_0, t L_1 = F_1, t^2 L_2 = F_2 ((S29) without its e^{q/2} prefactors).
// Each value is computed relative to itself (the integration window follows the integrand's
// peak), so it keeps its relative accuracy where it is e^{-700} as well as near 1, at a cost that
// does not depend on c or s (about 150 nodes per value). Internal header of the population module.
#pragma once
#include <vector>

#include "equations/slr_laplace_tables.hpp"

namespace saddle {
namespace slr {
namespace detail {

// log Phi(-a) and the inverse Mills ratio phi(a)/Phi(-a), both accurate for every real a.
double log_phi_upper(double a);
double inv_mills(double a);

// Which values log_laplace computes (bit mask).
enum : unsigned {
  kLapF0 = 1u,
  kLapC0 = 2u,
  kLapF1 = 4u,
  kLapF2 = 8u,
  kLapF3 = 16u,
};
// Logs of F_0, C, F_1, F_2, F_3 (those not asked for are left NaN); -inf where a value is 0.
struct LogLaplace {
  double lF0, lC0, lF1, lF2, lF3;
};
LogLaplace log_laplace(double c, double s, unsigned what, const PopulationAccuracy& acc);

// log F_0 = log(1 - C), from whichever of F_0, C is the smaller (no cancellation).
double log_laplace_L0(double c, double s, const PopulationAccuracy& acc);

// The one-token tables of softmax (LapTable of equations/slr_laplace_tables.hpp) on the tau grid,
// Y ~ N(mu, q): every entry by log_laplace at c = tau + mu, s = sqrt(q). Cost independent of q.
LapTable laplace_table_lognormal(double mu, double q, const Grid& tau, const PopulationAccuracy& acc);

// F_0(s) = Lambda_{sigma^2}(e^s) of (S29), its complement 1 - F_0(s) and F_1(s) = E[e^Y exp(-e^Y)],
// Y ~ N(s, sigma^2), as functions of s: tabulated with step 0.05 max(1, sigma) (x h_x / 0.1) over
// the range where they are not trivially 0 or 1, with quintic Hermite interpolation of their
// logs (the derivatives are ratios of the neighbouring F_k). Its size depends on neither the range
// of s the caller needs nor sigma^2 (the cubic LambdaTable reached F_1 through F_0(s + sigma^2)).
class LogLaplaceTable {
 public:
  LogLaplaceTable(double sigma, const PopulationAccuracy& acc);
  // Below lo(): 1 - F_0 and F_1 are < 1e-21 (eval gives F_0 = 1, 1 - F_0 = F_1 = 0);
  // above hi(): F_0 and F_1 are < 1e-21 (eval gives F_0 = F_1 = 0, 1 - F_0 = 1).
  double lo() const { return lo_; }
  double hi() const { return hi_; }
  // log F_0(s), log(1 - F_0(s)), log F_1(s).
  void eval(double s, double& lF0, double& lC0, double& lF1) const;

 private:
  double sigma_ = 0.0, lo_ = 0.0, hi_ = 0.0;
  Grid grid_;
  // per node and function (log F_0, log C, log F_1): value, first and second derivative
  std::vector<double> f_[3][3];
};

}  // namespace detail
}  // namespace slr
}  // namespace saddle
