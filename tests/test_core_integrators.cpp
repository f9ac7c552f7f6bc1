// Tests of integrators/: Gauss-Hermite moments, exponential moments, a correlated 2-D Gaussian
// expectation, Gauss-Legendre / adaptive rules, QMC coverage, and the stable special functions.
// Every expected value is a closed form.
#include <catch2/catch.hpp>

#include <cmath>
#include <thread>
#include <vector>

#include "integrators/qmc.hpp"
#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"

using namespace saddle;

namespace {
double double_factorial(int k) {  // (k-1)!! = E[xi^k] for even k
  double r = 1.0;
  for (int j = k - 1; j > 1; j -= 2) r *= j;
  return r;
}
}  // namespace

TEST_CASE("Gauss-Hermite reproduces the moments of N(0,1) to 1e-13", "[core][quadrature]") {
  for (int n : {10, 20, 40, 80}) {
    const Rule1D& r = gauss_hermite(n);
    for (int k = 0; k <= 2 * n - 1 && k <= 16; ++k) {
      double s = 0.0;
      for (int i = 0; i < n; ++i) s += r.w[i] * std::pow(r.x[i], k);
      double exact = (k % 2) ? 0.0 : double_factorial(k);
      INFO("n=" << n << " k=" << k);
      // Odd moments vanish; their rounding error scales like E|xi|^k <= (k+1)!!.
      CHECK(std::fabs(s - exact) <= 1e-13 * std::max(1.0, double_factorial(k + 1)));
    }
  }
}

TEST_CASE("E[exp(a xi)] = exp(a^2/2) for |a| <= 5", "[core][quadrature]") {
  const Rule1D& r = gauss_hermite(120);
  for (double a = -5.0; a <= 5.0; a += 0.5) {
    double s = 0.0;
    for (int i = 0; i < r.size(); ++i) s += r.w[i] * std::exp(a * r.x[i]);
    INFO("a=" << a);
    CHECK(s == Approx(std::exp(a * a / 2)).epsilon(1e-12));
  }
}

TEST_CASE("Gauss-Hermite cache is thread-safe and stable", "[core][quadrature]") {
  std::vector<const Rule1D*> ptr(8);
  std::vector<std::thread> th;
  for (int t = 0; t < 8; ++t) th.emplace_back([&, t] { ptr[t] = &gauss_hermite(57); });
  for (auto& t : th) t.join();
  for (int t = 1; t < 8; ++t) CHECK(ptr[t] == ptr[0]);
  double s = 0.0;
  for (double w : ptr[0]->w) s += w;
  CHECK(s == Approx(1.0).epsilon(1e-15));
}

TEST_CASE("Correlated 2-D Gaussian expectation with a closed form", "[core][quadrature]") {
  // X ~ N(mu, Sigma): E[exp(a.X)] = exp(a.mu + a^T Sigma a / 2); E[X1 X2] = Sigma12 + mu1 mu2.
  Eigen::Vector2d mu(0.3, -0.7);
  Eigen::Matrix2d S;
  S << 1.5, 0.9, 0.9, 2.0;
  GaussianTensorRule rule(mu, S, 40);
  Eigen::Vector2d a(0.4, -0.3);
  double exact = std::exp(a.dot(mu) + 0.5 * a.dot(S * a));
  double got = rule.expect([&](const double* x) { return std::exp(a[0] * x[0] + a[1] * x[1]); });
  CHECK(got == Approx(exact).epsilon(1e-12));
  double cross = rule.expect([](const double* x) { return x[0] * x[1]; });
  CHECK(cross == Approx(0.9 + 0.3 * -0.7).epsilon(1e-12));
  // Singular covariance (rank one) falls back to the eigen square root.
  Eigen::Matrix2d S1;
  S1 << 1.0, 1.0, 1.0, 1.0;
  GaussianTensorRule r1(Eigen::Vector2d::Zero(), S1, 20);
  CHECK(r1.expect([](const double* x) { return (x[0] - x[1]) * (x[0] - x[1]); }) ==
        Approx(0.0).margin(1e-12));
  CHECK(r1.expect([](const double* x) { return x[0] * x[1]; }) == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("Gauss-Legendre and adaptive Gauss-Kronrod", "[core][quadrature]") {
  CHECK(integrate_gl([](double x) { return std::cos(x); }, 0.0, kPi / 2, 20) ==
        Approx(1.0).epsilon(1e-14));
  const Rule1D& r = gauss_legendre(7);
  double s = 0.0;
  for (int i = 0; i < 7; ++i) s += r.w[i] * std::pow(r.x[i], 12);
  CHECK(s == Approx(2.0 / 13.0).epsilon(1e-14));
  auto res = integrate_adaptive([](double x) { return norm_pdf(x); }, -INFINITY, INFINITY);
  CHECK(res.ok);
  CHECK(res.value == Approx(1.0).epsilon(1e-12));
  auto half = integrate_adaptive([](double x) { return std::exp(-x); }, 0.0, INFINITY);
  CHECK(half.value == Approx(1.0).epsilon(1e-12));
  auto sq = integrate_adaptive([](double x) { return 1.0 / std::sqrt(x); }, 0.0, 1.0, 1e-10, 1e-10);
  CHECK(sq.value == Approx(2.0).epsilon(1e-8));
}

TEST_CASE("QMC standard error covers the truth about 95% of the time", "[core][qmc]") {
  // E[exp(0.5 (x1 + x2 + x3))] = exp(3 * 0.125) in d = 3; 200 independent shift sets.
  const double truth = std::exp(3 * 0.125);
  int covered = 0;
  const int trials = 200;
  for (int t = 0; t < trials; ++t) {
    SobolGaussian q(3, 256, 10, 1000 + t);
    Estimate e = q.expect([](const double* z) { return std::exp(0.5 * (z[0] + z[1] + z[2])); });
    // 95% interval of a t-distribution with 9 degrees of freedom: 2.262 s.e.
    if (std::fabs(e.mean - truth) <= 2.262 * e.se) ++covered;
  }
  // Binomial(200, 0.95): mean 190, sd 3.1; accept 178..200 (about 4 sd below).
  CHECK(covered >= 178);
  SobolGaussian q(2, 4096, 8, 7);
  Estimate e = q.expect([](const double* z) { return z[0] * z[0] + z[1] * z[1]; });
  CHECK(std::fabs(e.mean - 2.0) < 4 * e.se + 1e-12);
  CHECK(e.se < 2e-3);
}

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
