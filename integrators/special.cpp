// Out-of-line special functions: Mills ratio (continued fraction for large x), log Phi, normal quantile.
#include "integrators/special.hpp"

#include <gsl/gsl_cdf.h>

namespace saddle {

double mills_ratio(double x) {
  if (x < 5.0) return norm_cdf(-x) / norm_pdf(x);
  // Lentz evaluation of R(x) = 1/(x + 1/(x + 2/(x + 3/(x + ...)))).
  const double tiny = 1e-300;
  double f = x, C = x, Dd = 0.0;
  for (int k = 1; k < 500; ++k) {
    Dd = x + k * Dd;
    if (std::fabs(Dd) < tiny) Dd = tiny;
    C = x + k / C;
    if (std::fabs(C) < tiny) C = tiny;
    Dd = 1.0 / Dd;
    double delta = C * Dd;
    f *= delta;
    if (std::fabs(delta - 1.0) < 1e-16) break;
  }
  return 1.0 / f;
}

double log_norm_cdf(double x) {
  if (x > -5.0) return std::log(norm_cdf(x));
  // Phi(x) = phi(x) R(-x) for x < 0.
  return -0.5 * x * x - 0.5 * std::log(2.0 * kPi) + std::log(mills_ratio(-x));
}

double norm_quantile(double u) { return gsl_cdf_ugaussian_Pinv(u); }

}  // namespace saddle
