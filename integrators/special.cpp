// Out-of-line special functions: Mills ratio (Boost.Math continued fraction for large x), log Phi,
// normal quantile.
#include "integrators/special.hpp"

#include <gsl/gsl_cdf.h>

#include <boost/math/tools/fraction.hpp>
#include <cstdint>
#include <limits>
#include <utility>

namespace saddle {

double mills_ratio(double x) {
  if (x < 5.0) return norm_cdf(-x) / norm_pdf(x);
  // R(x) = 1/(x + 1/(x + 2/(x + 3/(x + ...)))) (Laplace's continued fraction), evaluated by
  // Boost.Math's modified-Lentz continued_fraction_b: b0 = x, then (a_k, b_k) = (k, x).
  struct Terms {
    using result_type = std::pair<double, double>;
    double x;
    int k = 0;
    std::pair<double, double> operator()() {
      const std::pair<double, double> t{double(k), x};
      ++k;
      return t;
    }
  } terms{x};
  std::uintmax_t max_terms = 500;
  const double f = boost::math::tools::continued_fraction_b(
      terms, std::numeric_limits<double>::epsilon(), max_terms);
  return 1.0 / f;
}

double log_norm_cdf(double x) {
  if (x > -5.0) return std::log(norm_cdf(x));
  // Phi(x) = phi(x) R(-x) for x < 0.
  return -0.5 * x * x - 0.5 * std::log(2.0 * kPi) + std::log(mills_ratio(-x));
}

double norm_quantile(double u) { return gsl_cdf_ugaussian_Pinv(u); }

}  // namespace saddle
