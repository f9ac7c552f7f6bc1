// Extrapolation to infinite size: see mc/slr_extrapolate.hpp.
#include "mc/slr_extrapolate.hpp"

#include <boost/math/special_functions/gamma.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace saddle {
namespace slr {
namespace mc {

namespace {
constexpr double kExponents[] = {1.0, 2.0 / 3.0, 0.5};
constexpr double kGofLevel = 0.05;

double gof_p_value(double chi2, int dof) {
  if (dof <= 0) return 1.0;
  if (!(chi2 > 0)) return 1.0;
  return boost::math::gamma_q(0.5 * dof, 0.5 * chi2);
}
}  // namespace

std::string exponent_text(double p) {
  if (p == 1.0) return "1";
  if (std::abs(p - 2.0 / 3.0) < 1e-12) return "2/3";
  if (p == 0.5) return "1/2";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", p);
  return buf;
}

Extrapolation fit_power(const std::vector<SizePoint>& pts, double exponent) {
  const int n = static_cast<int>(pts.size());
  if (n < 2) throw std::invalid_argument("extrapolation needs at least two sizes");
  bool weighted = true;
  for (const auto& q : pts) {
    if (!std::isfinite(q.value) || !std::isfinite(q.se) || !(q.D > 0))
      throw std::invalid_argument("extrapolation: non-finite value or size");
    if (!(q.se > 0)) weighted = false;
  }
  // Weighted least squares of y = a + b x, x = D^-p, weights 1/s_i^2 (1 unweighted), in centred
  // sums: the textbook S Sxx - Sx^2 cancels to nothing when one weight dominates (a statistic
  // nearly constant over the seeds of one size, e.g. loss_spread ~ 1e-18), the centred form does
  // not. The weights are scaled by s_min^2 (w_i = (s_min/s_i)^2 in (0, 1]), so that no tiny s_i
  // overflows them; the covariance is scaled back by s_min^2.
  double s_min = 1.0;
  if (weighted) {
    s_min = pts[0].se;
    for (const auto& q : pts) s_min = std::min(s_min, q.se);
  }
  std::vector<double> x(n), w(n);
  for (int i = 0; i < n; ++i) {
    x[i] = std::pow(pts[i].D, -exponent);
    w[i] = weighted ? (s_min / pts[i].se) * (s_min / pts[i].se) : 1.0;
    // Error bars more than ~1e150 apart: a weight underflows; the fit is made unweighted.
    if (!(w[i] > 0)) weighted = false;
  }
  if (!weighted) {
    s_min = 1.0;
    std::fill(w.begin(), w.end(), 1.0);
  }
  double S = 0, xbar = 0, ybar = 0;
  for (int i = 0; i < n; ++i) S += w[i];
  for (int i = 0; i < n; ++i) {
    xbar += w[i] / S * x[i];
    ybar += w[i] / S * pts[i].value;
  }
  double Cxx = 0, Cxy = 0;  // sum w (x - xbar)^2, sum w (x - xbar)(y - ybar)
  for (int i = 0; i < n; ++i) {
    Cxx += w[i] * (x[i] - xbar) * (x[i] - xbar);
    Cxy += w[i] * (x[i] - xbar) * (pts[i].value - ybar);
  }
  if (!(Cxx > 0) || !std::isfinite(Cxx)) throw std::invalid_argument("extrapolation needs two distinct sizes");
  Extrapolation e;
  e.exponent = exponent;
  e.weighted = weighted;
  e.slope = Cxy / Cxx;
  e.value = ybar - e.slope * xbar;
  e.dof = n - 2;
  double chi2 = 0;
  for (int i = 0; i < n; ++i) {
    const double r = (pts[i].value - e.value - e.slope * x[i]) / (weighted ? pts[i].se : 1.0);
    chi2 += r * r;
  }
  e.chi2 = chi2;
  double var_a = s_min * s_min * (1.0 / S + xbar * xbar / Cxx);  // (X^T W X)^-1 [0][0]
  if (!weighted) {  // unweighted: the residual variance is the error scale
    var_a *= e.dof > 0 ? chi2 / e.dof : 0.0;
    e.p_value = 1.0;
  } else {
    e.p_value = gof_p_value(chi2, e.dof);
  }
  e.se = std::sqrt(std::max(0.0, var_a));
  e.p_value_inverse = exponent == 1.0 ? e.p_value : 1.0;
  return e;
}

Extrapolation extrapolate(const std::vector<SizePoint>& pts) {
  Extrapolation best = fit_power(pts, 1.0);
  const double p_inverse = best.p_value;
  if (best.weighted && best.dof > 0 && p_inverse < kGofLevel) {
    for (double p : kExponents) {
      if (p == 1.0) continue;
      const Extrapolation e = fit_power(pts, p);
      if (e.chi2 < best.chi2) best = e;
    }
  }
  best.p_value_inverse = p_inverse;
  if (best.weighted && best.dof > 0 && best.chi2 > best.dof) best.se *= std::sqrt(best.chi2 / best.dof);
  return best;
}

}  // namespace mc
}  // namespace slr
}  // namespace saddle
