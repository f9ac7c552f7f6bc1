// Tests of integrators/special: the stable special functions against closed forms and limits.
#include <catch2/catch.hpp>

#include <cmath>
#include <thread>
#include <vector>

#include "integrators/qmc.hpp"
#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"

using namespace saddle;

TEST_CASE("Stable special functions", "[core][special]") {
  std::vector<double> x{1000.0, 1000.0 + std::log(3.0)};
  CHECK(log_sum_exp(x.data(), 2) == Approx(1000.0 + std::log(4.0)).epsilon(1e-15));
  std::vector<double> s(2);
  softmax(x.data(), s.data(), 2);
  // 1000 + log 3 carries an absolute rounding error of ~1e-13.
  CHECK(s[0] == Approx(0.25).epsilon(1e-12));
  CHECK(s[1] == Approx(0.75).epsilon(1e-12));
  CHECK(log1p_exp(800.0) == Approx(800.0).epsilon(1e-15));
  CHECK(log1p_exp(-800.0) == Approx(std::exp(-800.0)).epsilon(1e-12));
  CHECK(log1p_exp(0.0) == Approx(std::log(2.0)).epsilon(1e-15));
  CHECK(sigmoid(-800.0) >= 0.0);
  CHECK(sigmoid(2.0) == Approx(1.0 / (1.0 + std::exp(-2.0))).epsilon(1e-15));
  // Mills ratio: R(0) = sqrt(pi/2); asymptotics R(x) ~ 1/x - 1/x^3 + 3/x^5 - ... for large x
  // (truncation error at x = 40 below 1e-15 relative).
  CHECK(mills_ratio(0.0) == Approx(std::sqrt(kPi / 2)).epsilon(1e-14));
  const double x0 = 40.0;
  CHECK(mills_ratio(x0) == Approx(1 / x0 - 1 / std::pow(x0, 3) + 3 / std::pow(x0, 5) -
                                  15 / std::pow(x0, 7) + 105 / std::pow(x0, 9) -
                                  945 / std::pow(x0, 11)).epsilon(1e-14));
  // Continuity at the switch point x = 5 against the erfc form.
  CHECK(mills_ratio(5.0) == Approx(norm_cdf(-5.0) / norm_pdf(5.0)).epsilon(1e-12));
  CHECK(log_norm_cdf(-40.0) == Approx(-800.0 - 0.5 * std::log(2 * kPi) + std::log(mills_ratio(40.0))).epsilon(1e-14));
  CHECK(norm_quantile(0.975) == Approx(1.959963984540054).epsilon(1e-12));
}
