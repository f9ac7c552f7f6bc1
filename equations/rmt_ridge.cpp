// Linear-regression baseline, docs/equations/rmt.md §5 (LR1)-(LR3), written without cancellation at small
// gamma and c >= 1.
#include "equations/rmt_ridge.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace saddle {
namespace rmt {

RidgeBaseline ridge_baseline(double c, double gamma, double snr) {
  if (!(c > 0.0) || !std::isfinite(c)) throw std::invalid_argument("ridge_baseline: c must be > 0");
  if (!(gamma >= 0.0) || !std::isfinite(gamma))
    throw std::invalid_argument("ridge_baseline: gamma must be >= 0");
  if (!(snr >= 0.0) || !std::isfinite(snr))
    throw std::invalid_argument("ridge_baseline: snr must be >= 0");
  const double inf = std::numeric_limits<double>::infinity();
  RidgeBaseline r;
  const double b = 1.0 + snr;
  if (gamma == 0.0) {  // ridgeless limit (§5)
    if (c > 1.0) {
      r.m = 1.0 / (c - 1.0);  // root of (c - 1) m - 1 = 0
      r.q = r.m * (1.0 + r.m) / (1.0 + b * r.m);
    } else {
      r.m = r.q = inf;
    }
    r.error = std::max(0.0, 1.0 - c) / b;
    return r;
  }
  // (LR1): positive root of gamma m^2 + (gamma - 1 + c) m - 1 = 0. sqrtD = sqrt((1-c-gamma)^2 +
  // 4 gamma) = 2 gamma m + gamma - 1 + c (the denominator of (LR3)).
  const double t = 1.0 - c - gamma;
  const double sqrtD = std::sqrt(t * t + 4.0 * gamma);
  r.m = t >= 0.0 ? (t + sqrtD) / (2.0 * gamma) : 2.0 / (sqrtD - t);
  const double m = r.m;
  // (LR2)
  r.q = m * (1.0 + m) / (1.0 + b * m);
  // (LR3), with (1 + m)/(1 + b m)^2 and gamma m kept as products to avoid overflow at tiny gamma.
  const double gm = gamma * m;
  const double den = 1.0 + b * m;
  r.error = gm * gm * ((1.0 + m) / den) * ((1.0 + 2.0 * m + b * m * m) / (m * den)) / sqrtD;
  return r;
}

}  // namespace rmt
}  // namespace saddle
