// Extrapolation of finite-size Monte Carlo means to infinite size (`mc slr --extrapolate`): a
// quantity measured at sizes D_1 < ... < D_n with standard errors s_i is fitted as
//   y(D) = a + b D^(-p),  p in {1, 2/3, 1/2},
// by weighted least squares (weights 1/s_i^2), and a (the value at D = inf) is reported with the
// standard error from the fit's covariance. The exponent: p = 1 (the O(1/D) finite-size bias of
// seed-averaged ERM) unless its fit is rejected by the chi-square goodness-of-fit test at the 5%
// level (p-value of chi^2 with n - 2 degrees of freedom); then the exponent whose fit has the
// smallest chi^2. When the chosen fit has chi^2/dof > 1 the standard error is multiplied by
// sqrt(chi^2/dof) (the Birge ratio: scatter beyond the error bars widens the bar, never
// narrows it). With two sizes (no degree of freedom left) p = 1 and no test. Points with a zero
// standard error (a quantity constant over seeds) make the fit unweighted, with the residual
// variance as the error scale.
#pragma once
#include <string>
#include <vector>

namespace saddle {
namespace slr {
namespace mc {

struct SizePoint {
  double D = 0, value = 0, se = 0;
};

struct Extrapolation {
  double value = 0, se = 0;  // a and its standard error
  double slope = 0;          // b
  double exponent = 1;       // the chosen p
  double chi2 = 0;           // of the chosen fit
  int dof = 0;               // n - 2
  double p_value = 1;        // goodness of fit of the chosen fit (1 when dof = 0)
  double p_value_inverse = 1;  // goodness of fit of p = 1 (the default model)
  bool weighted = true;
};

// The fit of one exponent (no choice, no Birge scaling), for the tests.
Extrapolation fit_power(const std::vector<SizePoint>& points, double exponent);
// The fit with the exponent chosen as above. Needs at least two distinct sizes; throws
// std::invalid_argument otherwise (or on a non-finite value).
Extrapolation extrapolate(const std::vector<SizePoint>& points);
// "1", "2/3" or "1/2".
std::string exponent_text(double p);

}  // namespace mc
}  // namespace slr
}  // namespace saddle
