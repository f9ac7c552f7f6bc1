// Tests of the extrapolation to infinite size (mc/slr_extrapolate.*): exact fits, the choice of
// the exponent by the goodness-of-fit test, the coverage of the reported standard error on
// synthetic Monte Carlo data with known truth, and the Birge scaling.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "mc/slr_extrapolate.hpp"

using namespace saddle::slr::mc;

namespace {
const double kSizes[] = {200, 400, 800, 1600};
std::vector<SizePoint> synthetic(double a, double b, double p, double se, std::mt19937_64* rng) {
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<SizePoint> pts;
  for (double D : kSizes) pts.push_back({D, a + b * std::pow(D, -p) + (rng ? se * g(*rng) : 0.0), se});
  return pts;
}
}  // namespace

TEST_CASE("extrapolation: exact a + b/D data give a, with the covariance's s.e.", "[mc][slr]") {
  const auto pts = synthetic(0.7, 30.0, 1.0, 0.01, nullptr);
  const Extrapolation e = extrapolate(pts);
  CHECK(e.exponent == 1.0);
  CHECK(e.value == Approx(0.7).epsilon(1e-12));
  CHECK(e.slope == Approx(30.0).epsilon(1e-10));
  CHECK(e.chi2 == Approx(0.0).margin(1e-16));
  CHECK(e.dof == 2);
  // var(a) = Sxx / (S Sxx - Sx^2) with equal weights 1/se^2: an independent closed form.
  double S = 0, Sx = 0, Sxx = 0;
  for (double D : kSizes) {
    S += 1e4;
    Sx += 1e4 / D;
    Sxx += 1e4 / (D * D);
  }
  CHECK(e.se == Approx(std::sqrt(Sxx / (S * Sxx - Sx * Sx))).epsilon(1e-12));
}

TEST_CASE("extrapolation: 1/D is kept unless the goodness-of-fit test rejects it", "[mc][slr]") {
  // Exact D^-1/2 data with small error bars: 1/D is rejected, 1/2 chosen and exact.
  const auto half = synthetic(1.0, 5.0, 0.5, 1e-3, nullptr);
  const Extrapolation e = extrapolate(half);
  CHECK(e.p_value_inverse < 0.05);
  CHECK(e.exponent == 0.5);
  CHECK(e.value == Approx(1.0).epsilon(1e-10));
  CHECK(exponent_text(e.exponent) == "1/2");
  // The same data with wide error bars: 1/D is not rejected and stays.
  const auto wide = synthetic(1.0, 5.0, 0.5, 1.0, nullptr);
  CHECK(extrapolate(wide).exponent == 1.0);
  // Exact D^-2/3 data.
  const Extrapolation t = extrapolate(synthetic(-0.2, 3.0, 2.0 / 3.0, 1e-4, nullptr));
  CHECK(exponent_text(t.exponent) == "2/3");
  CHECK(t.value == Approx(-0.2).epsilon(1e-9));
}

TEST_CASE("extrapolation: the s.e. covers the truth at its nominal rate (synthetic MC)", "[mc][slr]") {
  std::mt19937_64 rng(11);
  int inside = 0;
  const int trials = 2000;
  for (int t = 0; t < trials; ++t) {
    const Extrapolation e = extrapolate(synthetic(0.5, 20.0, 1.0, 0.02, &rng));
    inside += std::abs(e.value - 0.5) <= 1.96 * e.se;
  }
  // Nominal 95%; the Birge scaling and the exponent choice make it conservative or slightly
  // anti-conservative: bar 4 binomial s.e. (0.005) below 0.95, and never far above 0.99.
  const double share = double(inside) / trials;
  INFO("coverage " << share);
  CHECK(share > 0.95 - 4 * std::sqrt(0.95 * 0.05 / trials) - 0.02);
  CHECK(share < 0.995);
}

TEST_CASE("extrapolation: scatter beyond the bars widens the s.e. (Birge ratio)", "[mc][slr]") {
  std::vector<SizePoint> pts = {{200, 1.10, 0.01}, {400, 1.00, 0.01}, {800, 1.06, 0.01}, {1600, 1.00, 0.01}};
  const Extrapolation raw = fit_power(pts, 1.0);
  const Extrapolation e = extrapolate(pts);
  REQUIRE(e.chi2 > e.dof);
  const Extrapolation chosen = fit_power(pts, e.exponent);
  CHECK(e.se == Approx(chosen.se * std::sqrt(chosen.chi2 / chosen.dof)).epsilon(1e-12));
  CHECK(raw.se > 0);
}

TEST_CASE("extrapolation: zero standard errors fall back to an unweighted fit; bad input throws",
          "[mc][slr]") {
  std::vector<SizePoint> c = {{200, 1.0, 0.0}, {400, 1.0, 0.0}, {800, 1.0, 0.0}};
  const Extrapolation e = extrapolate(c);
  CHECK(!e.weighted);
  CHECK(e.value == Approx(1.0).epsilon(1e-12));
  CHECK(e.se == Approx(0.0).margin(1e-12));
  CHECK_THROWS_AS(extrapolate({{200, 1.0, 0.1}}), std::invalid_argument);
  CHECK_THROWS_AS(extrapolate({{200, 1.0, 0.1}, {200, 1.1, 0.1}}), std::invalid_argument);
  CHECK_THROWS_AS(extrapolate({{200, std::nan(""), 0.1}, {400, 1.1, 0.1}}), std::invalid_argument);
}

TEST_CASE("extrapolation: one size far more precise than the other (a near-constant statistic)",
          "[mc][slr]") {
  // mc slr --restarts 2 --extrapolate: loss_spread had se 4e-18 at D = 16 and 5e-4 at D = 24; the
  // textbook determinant S Sxx - Sx^2 cancelled to zero and the run failed ("two distinct
  // sizes"). Two sizes: the line through both points, var(a) = (x2^2 s1^2 + x1^2 s2^2) / (x2 - x1)^2
  // (x = 1/D), an independent closed form.
  const double s1 = 4e-18, s2 = 5e-4, y1 = 1e-17, y2 = 0.0021;
  const double x1 = 1.0 / 16, x2 = 1.0 / 24;
  const Extrapolation e = fit_power({{16, y1, s1}, {24, y2, s2}}, 1.0);
  CHECK(e.weighted);
  CHECK(e.value == Approx((y1 * x2 - y2 * x1) / (x2 - x1)).epsilon(1e-9));
  CHECK(e.se == Approx(std::sqrt(x2 * x2 * s1 * s1 + x1 * x1 * s2 * s2) / std::abs(x2 - x1)).epsilon(1e-9));
  // A standard error so small that 1/se^2 would overflow (1e-100): still the weighted line and
  // its s.e. (the weights are scaled by the smallest se).
  const Extrapolation t = fit_power({{16, y1, 1e-100}, {24, y2, s2}}, 1.0);
  CHECK(t.weighted);
  CHECK(t.value == Approx((y1 * x2 - y2 * x1) / (x2 - x1)).epsilon(1e-9));
  CHECK(t.se == Approx(std::abs(x1) * s2 / std::abs(x2 - x1)).epsilon(1e-9));
  // Error bars 1e166 apart: a scaled weight underflows; the unweighted line through both points.
  const Extrapolation u = fit_power({{16, y1, 1e-170}, {24, y2, s2}}, 1.0);
  CHECK(!u.weighted);
  CHECK(u.value == Approx((y1 * x2 - y2 * x1) / (x2 - x1)).epsilon(1e-9));
}
