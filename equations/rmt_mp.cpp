// Marchenko-Pastur quadrature and Stieltjes transform: docs/equations/rmt.md §6.1 (law, m(z)) and §6.5
// (theta-midpoint rule, split rule clustered at the peak of the integrands, exact partial-fraction
// alternative for linear f).
#include "equations/rmt_mp.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"

namespace saddle {
namespace rmt {

using cplx = std::complex<double>;

double mp_lower_edge(double c) {
  double r = 1.0 - std::sqrt(c);
  return r * r;
}
double mp_upper_edge(double c) {
  double r = 1.0 + std::sqrt(c);
  return r * r;
}

namespace {

void check_c(double c) {
  if (!(c > 0.0) || !std::isfinite(c)) throw std::invalid_argument("MP law needs 0 < c < inf");
}

// theta <-> s on the bulk: s = s_- + (s_+ - s_-) sin^2(theta/2).
struct ThetaMap {
  double sm, sp, L;
  explicit ThetaMap(double c) : sm(mp_lower_edge(c)), sp(mp_upper_edge(c)), L(sp - sm) {}
  double s(double th) const {
    double h = std::sin(0.5 * th);
    return sm + L * h * h;
  }
  // Density factor: rho_MP(s) ds = L^2 sin^2(theta) / (8 pi s) dtheta.
  double dens(double th) const {
    double st = std::sin(th);
    return L * L * st * st / (8.0 * kPi * s(th));
  }
  double theta(double s_) const {
    double x = (s_ - sm) / L;
    x = std::min(1.0, std::max(0.0, x));
    return 2.0 * std::asin(std::sqrt(x));
  }
};

// Roots of the cubic P(s) = gamma + s (alpha s + beta)^2 = alpha^2 s^3 + 2 alpha beta s^2 +
// beta^2 s + gamma (alpha != 0).
std::vector<cplx> cubic_roots(double alpha, double beta, double gamma) {
  return poly_roots({gamma, beta * beta, 2.0 * alpha * beta, alpha * alpha});
}

// Gauss-Legendre on [a, b] in theta, optionally clustered at one endpoint by
// theta = end +- eps sinh(t): appends (s, weight) pairs.
void append_piece(const ThetaMap& tm, double a, double b, int n, int cluster_end, double eps,
                  std::vector<double>& s, std::vector<double>& w) {
  const Rule1D& gl = gauss_legendre(n);
  double len = b - a;
  if (len <= 0.0) return;
  if (cluster_end == 0 || !(eps > 0.0) || eps >= 0.25 * len) {
    double h = 0.5 * len, mid = 0.5 * (a + b);
    for (int j = 0; j < n; ++j) {
      double th = mid + h * gl.x[j];
      s.push_back(tm.s(th));
      w.push_back(h * gl.w[j] * tm.dens(th));
    }
    return;
  }
  double tmax = std::asinh(len / eps), h = 0.5 * tmax;
  for (int j = 0; j < n; ++j) {
    double t = h + h * gl.x[j];
    double off = eps * std::sinh(t);
    double th = cluster_end < 0 ? a + off : b - off;  // -1: cluster at a, +1: at b
    s.push_back(tm.s(th));
    w.push_back(h * gl.w[j] * eps * std::cosh(t) * tm.dens(th));
  }
}

void finish_rule(double c, MPRule& r) {
  double tot = 0.0;
  for (double x : r.w) tot += x;
  double target = std::min(1.0, c);
  for (double& x : r.w) x *= target / tot;
  if (c < 1.0) {
    r.s.push_back(0.0);
    r.w.push_back(1.0 - c);
  }
}

}  // namespace

MPRule mp_theta_midpoint(double c, int N) {
  check_c(c);
  if (N < 1) throw std::invalid_argument("mp_theta_midpoint: N >= 1");
  ThetaMap tm(c);
  MPRule r;
  r.s.reserve(N + 1);
  r.w.reserve(N + 1);
  for (int j = 0; j < N; ++j) {
    double th = (j + 0.5) * kPi / N;
    r.s.push_back(tm.s(th));
    r.w.push_back(tm.dens(th) * kPi / N);
  }
  finish_rule(c, r);
  return r;
}

std::vector<cplx> poly_roots(const std::vector<double>& coef_in) {
  std::vector<double> coef = coef_in;
  while (!coef.empty() && coef.back() == 0.0) coef.pop_back();
  const int deg = static_cast<int>(coef.size()) - 1;
  std::vector<cplx> z;
  if (deg < 1) return z;
  Eigen::MatrixXd comp = Eigen::MatrixXd::Zero(deg, deg);
  for (int j = 0; j < deg; ++j) comp(0, j) = -coef[deg - 1 - j] / coef[deg];
  for (int j = 1; j < deg; ++j) comp(j, j - 1) = 1.0;
  Eigen::EigenSolver<Eigen::MatrixXd> es(comp, false);
  for (int j = 0; j < deg; ++j) {
    cplx x = es.eigenvalues()(j);
    for (int it = 0; it < 4; ++it) {  // Newton polish
      cplx pv = 0.0, dp = 0.0;
      for (int k = deg; k >= 0; --k) {
        dp = dp * x + pv;
        pv = pv * x + coef[k];
      }
      if (std::abs(dp) == 0.0) break;
      cplx step = pv / dp;
      x -= step;
      if (std::abs(step) <= 1e-16 * std::abs(x)) break;
    }
    z.push_back(x);
  }
  return z;
}

MPRule mp_split_rule(double c, double gamma, double a1, double kappa_d, int n) {
  std::vector<cplx> poles;
  if (a1 != 0.0 && gamma > 0.0) poles = cubic_roots(a1 / c, kappa_d - a1, gamma);
  return mp_split_rule(c, poles, n);
}

MPRule mp_split_rule(double c, const std::vector<cplx>& poles, int n) {
  check_c(c);
  if (n < 2) throw std::invalid_argument("mp_split_rule: n_per_side >= 2");
  ThetaMap tm(c);
  MPRule r;
  // Cluster points: every pole z of the integrands within a quarter of the bulk width of
  // [s_-, s_+] gives the nearest bulk point and its distance (docs/equations/rmt.md §6.5).
  struct Cluster {
    double theta, eps;
  };
  std::vector<Cluster> cl;
  std::vector<cplx> all = poles;
  // The density factor 1/s has its pole at s = 0, a distance s_- from the bulk: for c near 1
  // (but not at c = 1, where sin^2(theta)/s is analytic) it needs clustering too.
  if (c != 1.0) all.emplace_back(0.0, 0.0);
  for (const cplx& z : all) {
    if (!std::isfinite(z.real()) || !std::isfinite(z.imag())) continue;
    double sp = std::min(tm.sp, std::max(tm.sm, z.real()));
    double dist = std::abs(z - sp);
    if (!(dist < 0.25 * tm.L)) continue;
    double th = tm.theta(sp);
    double eps;
    if (sp <= tm.sm) eps = tm.theta(tm.sm + dist);
    else if (sp >= tm.sp) eps = kPi - tm.theta(tm.sp - dist);
    else
      eps = std::min(std::abs(tm.theta(sp + dist) - th), std::abs(th - tm.theta(sp - dist)));
    eps = std::max(eps, 1e-14);
    bool merged = false;
    for (auto& x : cl)
      if (std::abs(x.theta - th) < 1e-12) {
        x.eps = std::min(x.eps, eps);
        merged = true;
      }
    if (!merged) cl.push_back({th, eps});
  }
  // Breakpoints: 0, pi and interior cluster points; every piece is halved so each half has at
  // most one clustered end.
  std::vector<double> br = {0.0, kPi};
  for (const auto& x : cl)
    if (x.theta > 0.0 && x.theta < kPi) br.push_back(x.theta);
  std::sort(br.begin(), br.end());
  auto eps_at = [&](double th) {
    for (const auto& x : cl)
      if (std::abs(x.theta - th) < 1e-12) return x.eps;
    return 0.0;
  };
  for (std::size_t i = 0; i + 1 < br.size(); ++i) {
    double a = br[i], b = br[i + 1], mid = 0.5 * (a + b);
    double ea = eps_at(a), eb = eps_at(b);
    append_piece(tm, a, mid, n, ea > 0.0 ? -1 : 0, ea, r.s, r.w);
    append_piece(tm, mid, b, n, eb > 0.0 ? +1 : 0, eb, r.s, r.w);
  }
  finish_rule(c, r);
  return r;
}

cplx mp_stieltjes(double c, cplx z) {
  const double sm = mp_lower_edge(c), sp = mp_upper_edge(c);
  const cplx b = -(z + 1.0 - c), R = std::sqrt(z - sm) * std::sqrt(z - sp);
  // The two roots multiply to 1/z: use the form without cancellation.
  if (std::abs(b + R) >= std::abs(b - R)) return (b + R) / (2.0 * z);
  return 2.0 / (b - R);
}

cplx mp_stieltjes_derivative(double c, cplx z) {
  cplx m = mp_stieltjes(c, z);
  return -(m * m + m) / (2.0 * z * m + z + 1.0 - c);
}

LinearExact linear_mu0_exact(double c, double gamma, double a1, double kappa_d) {
  check_c(c);
  if (a1 == 0.0 || !(gamma > 0.0)) throw std::invalid_argument("linear_mu0_exact: a1 != 0, gamma > 0");
  const double alpha = a1 / c, beta = kappa_d - a1;
  const double a3 = alpha * alpha, a2 = 2.0 * alpha * beta, a1c = beta * beta;
  cplx dt = 0.0, e2 = 0.0;
  for (const cplx& z : cubic_roots(alpha, beta, gamma)) {
    cplx dp = (3.0 * a3 * z + 2.0 * a2) * z + a1c;  // P'(z)
    cplx ddp = 6.0 * a3 * z + 2.0 * a2;             // P''(z)
    cplx m = mp_stieltjes(c, z), mp = mp_stieltjes_derivative(c, z);
    dt += m / dp;                                         // <1/P> = sum_j m(z_j)/P'(z_j)
    e2 += mp / (dp * dp) - ddp / (dp * dp * dp) * m;      // <1/P^2>, double poles
  }
  LinearExact out;
  out.delta_tilde = dt.real();
  out.error = gamma * gamma * e2.real();
  return out;
}

}  // namespace rmt
}  // namespace saddle
