// Quadrature of the Marchenko-Pastur law mu_S of S = Z^T Z / n (docs/equations/rmt.md §6.1, §6.5) and its
// Stieltjes transform m(z) (§6.1), used by the deterministic equivalent (§6.2-§6.4).
//
// A rule is a list of nodes s_j and weights w_j with sum_j w_j h(s_j) ~ <h> = int h dmu_S; the
// atom (1 - c) at s = 0 (c < 1) is one node of the rule.
#pragma once
#include <complex>
#include <vector>

namespace saddle {
namespace rmt {

struct MPRule {
  std::vector<double> s;
  std::vector<double> w;
  int size() const { return static_cast<int>(s.size()); }
};

// Edges s_- = (1 - sqrt c)^2, s_+ = (1 + sqrt c)^2.
double mp_lower_edge(double c);
double mp_upper_edge(double c);

// The theta-midpoint rule of §6.5 with N bulk nodes: s_j = s_- + (s_+ - s_-) sin^2(theta_j / 2),
// theta_j = (j + 1/2) pi / N, w_j ~ (s_+ - s_-)^2 sin^2 theta_j / (8 N s_j), renormalised to
// min(1, c), plus the atom (0, 1 - c) for c < 1. Exponentially convergent for smooth integrands.
MPRule mp_theta_midpoint(double c, int N);

// Production rule (docs/equations/rmt.md §6.5 "Better: split the interval at s_0 and cluster nodes there"):
// in theta in [0, pi] (s = s_- + (s_+ - s_-) sin^2(theta/2), density factor
// (s_+ - s_-)^2 sin^2 theta / (8 pi s)). The integrands' denominators are bounded below by
// P(s) = gamma + s d(s)^2, d(s) = a1 (s/c - 1) + kappa_d; every root z of this cubic that lies
// within a quarter of the bulk width of [s_-, s_+] (the peak at s_0 = c(1 - kappa_d/a1), of width
// ~sqrt(gamma); the edge s = 0 at c = 1) gives a cluster point theta_k = theta(nearest bulk point)
// with width eps_k = the distance in theta. [0, pi] is split at the interior cluster points and
// at the midpoints between them; a half-piece ending at a cluster point is mapped by
// theta = theta_k +- eps_k sinh(t) and gets n_per_side Gauss-Legendre nodes in t, other pieces
// n_per_side nodes in theta. With a1 = 0 it is a plain Gauss-Legendre rule in theta. Weights are
// renormalised to the bulk mass min(1, c); the atom (0, 1 - c) is added for c < 1.
MPRule mp_split_rule(double c, double gamma, double a1, double kappa_d, int n_per_side);
// The same rule for a given list of complex poles of the integrands (e.g. the roots of
// gamma(1+delta)(1+kappa s) + s d(s)^2 and -1/kappa once delta, delta_tilde are known).
MPRule mp_split_rule(double c, const std::vector<std::complex<double>>& poles, int n_per_side);
// Complex roots of sum_k coef[k] s^k (companion matrix + Newton polish); trailing zero
// leading coefficients are dropped.
std::vector<std::complex<double>> poly_roots(const std::vector<double>& coef);

// Stieltjes transform m(z) = <1/(s - z)> (atom included) at complex z off [s_-, s_+] and z != 0:
// m(z) = [-(z + 1 - c) + sqrt(z - s_-) sqrt(z - s_+)] / (2 z), principal roots (§6.1).
std::complex<double> mp_stieltjes(double c, std::complex<double> z);
// Its derivative m'(z) = <1/(s - z)^2>, from z m^2 + (z + 1 - c) m + 1 = 0.
std::complex<double> mp_stieltjes_derivative(double c, std::complex<double> z);

// Exact alternative of §6.5 for linear f (sigma^2 = 0) at mu = 0: delta_tilde = <1/P(s)> and
// E = gamma^2 <1/P(s)^2> with P(s) = gamma + s d(s)^2, by partial fractions over the three roots
// of the cubic P and the Stieltjes transform. Independent of any quadrature (a test reference).
struct LinearExact {
  double delta_tilde = 0.0;
  double error = 0.0;
};
LinearExact linear_mu0_exact(double c, double gamma, double a1, double kappa_d);

}  // namespace rmt
}  // namespace saddle
