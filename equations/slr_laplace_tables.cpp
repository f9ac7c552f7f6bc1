// Laplace tables of docs/equations/slr_population.md §7a (see equations/slr_laplace_tables.hpp):
// grids, laplace_table (the one-token tables of a Gaussian on a tau grid, with the Gaussian
// variable's trapezoid rule shared by all tau), LambdaTable (Lambda_{sigma^2} of (S29) with cubic
// Hermite interpolation), and the ridge-aligned tau steps.
#include "equations/slr_laplace_tables.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace saddle {
namespace slr {
namespace detail {

Grid make_grid(double lo, double hi, double h) {
  Grid g;
  g.lo = lo;
  g.h = h;
  // inside the documented domain grids stay far below this; the check keeps the int count (and
  // the memory) bounded if a caller passes something outside it
  const double n = std::ceil((hi - lo) / h - 1e-9) + 1.0;
  if (!(n <= 2e8))
    throw std::invalid_argument("SLR population: a quadrature grid would need " +
                                std::to_string(n) + " points (more than 2e8)");
  g.n = static_cast<int>(n);
  if (g.n < 2) g.n = 2;
  return g;
}

double log_mean_a(Activation act, double mu, double q) {
  if (act == Activation::Softmax) return mu + 0.5 * q;
  return std::log(log1p_exp(mu) + std::sqrt(q) + 1.0);
}

LapTable laplace_table(Activation act, double mu, double q, const Grid& tau,
                       const PopulationAccuracy& acc) {
  const double sq = std::sqrt(q);
  const double hx = std::min(acc.h_x, acc.steep / sq);
  double xlo = -acc.x_tail;
  // (ta)^2 e^{-ta} phi(x) at the smallest t peaks near x = 2 sqrt(q) (softmax), unless e^{-ta}
  // cuts it first.
  double xhi = acc.x_tail + (act == Activation::Softmax ? 2.0 * sq : 0.0);
  if (act == Activation::Softmax)
    xhi = std::max(acc.x_tail, std::min(xhi, (std::log(kExpUnderflow) - tau.at(0) - mu) / sq + 1.0));
  // The cut t a(Y) ~ 1 of the largest tau lies at x ~ -(tau + mu)/sqrt(q): for a tilted token
  // far in the left tail, where the small complements 1 - B, 1 - A of large nu are decided (the
  // products of the two tokens' factors peak near x = -mu/(2 sqrt(q))). Truncating at -x_tail
  // costs them a relative e^{mu^2/(4q) - x_tail^2/2}: for mu > 5 sqrt(q) extend the lattice by
  // whole steps (the nodes of [-x_tail, ...] stay) down to the cut, or to where phi underflows.
  const double xcut = -(tau.at(tau.n - 1) + mu) / sq - 1.0;
  if (mu > 5.0 * sq && xcut < xlo) xlo -= hx * std::ceil((xlo - std::max(xcut, -kXUnderflow)) / hx);
  Grid xg = make_grid(xlo, xhi, hx);
  const int n = xg.n;
  std::vector<double> w(n), la(n), wsuffix(n + 1, 0.0), wprefix(n + 1, 0.0);
  for (int k = 0; k < n; ++k) {
    double x = xg.at(k);
    w[k] = hx * norm_pdf(x);
    la[k] = log_act_a(act, mu + sq * x);  // increasing in k
  }
  for (int k = n - 1; k >= 0; --k) wsuffix[k] = wsuffix[k + 1] + w[k];
  for (int k = 0; k < n; ++k) wprefix[k + 1] = wprefix[k] + w[k];
  // Where ta < kTiny, e^{-ta} = 1 - ta to relative 1e-21: those terms need no exponential.
  // Their sums sum_{j<k} w_j a_j^p are kept scaled by a_k^{-p} (lref = la[min(k, n-1)]) so that
  // neither overflows: Qp[k] = sum_{j<k} w_j exp(p (la_j - lref_k)).
  constexpr double kLogTiny = -48.35;  // log(1e-21)
  std::vector<double> lref(n + 1), Q1(n + 1, 0.0), Q2(n + 1, 0.0);
  for (int k = 0; k <= n; ++k) lref[k] = la[std::min(k, n - 1)];
  for (int k = 0; k < n; ++k) {
    const double d = la[k] - lref[k + 1];
    Q1[k + 1] = (Q1[k] + w[k]) * std::exp(d);
    Q2[k + 1] = (Q2[k] + w[k]) * std::exp(2.0 * d);
  }
  LapTable T(tau.n);
  for (int i = 0; i < tau.n; ++i) {
    const double ti = tau.at(i);
    int k = static_cast<int>(std::lower_bound(la.begin(), la.end(), kLogTiny - ti) - la.begin());
    const double e1 = k > 0 ? std::exp(ti + lref[k]) : 0.0;  // (no prefix: Q1 = Q2 = 0)
    double s0 = wprefix[k], s1 = e1 * Q1[k], s2 = e1 * e1 * Q2[k], c = s1;
    for (; k < n; ++k) {
      const double ua = std::exp(ti + la[k]);
      if (ua > kExpUnderflow) break;  // a increases with x: every later term vanishes
      const double e = std::exp(-ua);
      const double we = w[k] * e;
      s0 += we;
      const double p1 = we * ua;
      s1 += p1;
      s2 += p1 * ua;
      c += w[k] * (ua < 0.5 ? -std::expm1(-ua) : 1.0 - e);
    }
    c += wsuffix[k];
    T.cL0[i] = c;
    T.logL0[i] = c < 0.5 ? std::log1p(-c) : std::log(s0);
    T.tL1[i] = s1;
    T.t2L2[i] = s2;
  }
  return T;
}

double ridge_step_x(int Lmax, const PopulationAccuracy& acc) {
  return acc.h_x / std::max(1.0, 0.5 * std::sqrt(2.0 * std::log(double(Lmax))));
}
double ridge_tau_step(Activation act, double sq, int Lmax, const PopulationAccuracy& acc) {
  if (act != Activation::Softmax) return acc.h_tau;
  return std::max(acc.h_tau, ridge_step_x(Lmax, acc) * sq);
}

LambdaTable::LambdaTable(double sigma, double s_lo, double s_hi, const PopulationAccuracy& acc)
    : sigma_(sigma) {
  if (sigma_ == 0.0) return;
  grid_ = make_grid(s_lo, s_hi, 0.01 * acc.h_x / 0.1);
  const double hx = std::min(acc.h_x, acc.steep / sigma);
  Grid xg = make_grid(-acc.x_tail, acc.x_tail, hx);
  std::vector<double> w(xg.n), ex(xg.n);
  for (int k = 0; k < xg.n; ++k) {
    w[k] = hx * norm_pdf(xg.at(k));
    ex[k] = sigma * xg.at(k);
  }
  lv_.resize(grid_.n);
  dlv_.resize(grid_.n);
  lc_.resize(grid_.n);
  dlc_.resize(grid_.n);
  for (int i = 0; i < grid_.n; ++i) {
    const double s = grid_.at(i);
    double v = 0, c = 0, d = 0;  // Lambda, 1 - Lambda, -dLambda/ds
    for (int k = 0; k < xg.n; ++k) {
      const double ua = std::exp(s + ex[k]);
      if (ua > kExpUnderflow) {
        for (int kk = k; kk < xg.n; ++kk) c += w[kk];
        break;
      }
      const double e = std::exp(-ua);
      v += w[k] * e;
      c += w[k] * (ua < 0.5 ? -std::expm1(-ua) : 1.0 - e);
      d += w[k] * ua * e;
    }
    // Far right Lambda underflows: clamp its log at -700 with zero slope (exp(-700) ~ 0).
    if (v > 1e-300) {
      lv_[i] = std::log(v);
      dlv_[i] = -d / v;
    } else {
      lv_[i] = -700.0;
      dlv_[i] = 0.0;
    }
    lc_[i] = std::log(c);
    dlc_[i] = d / c;
  }
}

void LambdaTable::eval(double s, double& logv, double& logc) const {
  if (sigma_ == 0.0) {
    const double ua = std::exp(s);
    logv = -ua;
    logc = std::log(-std::expm1(-ua));
    return;
  }
  double pos = (s - grid_.lo) / grid_.h;
  if (pos < 0 || pos > grid_.n - 1)
    throw std::logic_error("LambdaTable: argument outside the table");
  int i = std::min(static_cast<int>(pos), grid_.n - 2);
  double u = pos - i, h = grid_.h;
  auto herm = [&](const std::vector<double>& f, const std::vector<double>& df) {
    double u2 = u * u, u3 = u2 * u;
    return (2 * u3 - 3 * u2 + 1) * f[i] + (u3 - 2 * u2 + u) * h * df[i] +
           (-2 * u3 + 3 * u2) * f[i + 1] + (u3 - u2) * h * df[i + 1];
  };
  logv = herm(lv_, dlv_);
  logc = herm(lc_, dlc_);
}

}  // namespace detail
}  // namespace slr
}  // namespace saddle
