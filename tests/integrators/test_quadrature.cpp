// Tests of integrators/quadrature: Gauss-Hermite moments, exponential moments, the thread-safe
// rule cache, a correlated 2-D Gaussian expectation, Gauss-Legendre and adaptive rules. Every
// expected value is a closed form.
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

TEST_CASE("Truncated-normal Gauss rule: Gauss-Hermite on the line, exact moments on a piece",
          "[core][quadrature]") {
  Rule1D r;
  // On (-inf, inf) it is the Gauss-Hermite rule.
  truncated_normal_rule(-INFINITY, INFINITY, 6, r);
  const Rule1D& gh = gauss_hermite(6);
  for (int i = 0; i < 6; ++i) {
    CHECK(r.x[i] == Approx(gh.x[i]).margin(1e-12));
    CHECK(r.w[i] == Approx(gh.w[i]).margin(1e-13));
  }
  // On [a, inf) the moments of the truncated normal: m_0 = Q(a), m_1 = phi(a),
  // m_k = (k - 1) m_{k-2} + a^{k-1} phi(a); exact up to degree 2n - 1 = 11.
  for (double a : {-3.0, 0.7, 4.0}) {
    truncated_normal_rule(a, INFINITY, 6, r);
    double m[12];
    m[0] = norm_cdf(-a);
    m[1] = norm_pdf(a);
    for (int k = 2; k < 12; ++k) m[k] = (k - 1) * m[k - 2] + std::pow(a, k - 1) * norm_pdf(a);
    for (int k = 0; k < 12; ++k) {
      double q = 0.0;
      for (int i = 0; i < 6; ++i) q += r.w[i] * std::pow(r.x[i], k);
      INFO("a = " << a << ", k = " << k);
      CHECK(q == Approx(m[k]).epsilon(1e-11));
    }
  }
  // A bounded piece: against adaptive integration.
  truncated_normal_rule(-1.3, 0.4, 5, r);
  for (int k = 0; k < 10; ++k) {
    double q = 0.0;
    for (int i = 0; i < 5; ++i) q += r.w[i] * std::pow(r.x[i], k);
    const auto ref = integrate_adaptive([&](double x) { return std::pow(x, k) * norm_pdf(x); }, -1.3, 0.4);
    CHECK(q == Approx(ref.value).epsilon(1e-11).margin(1e-15));
  }
}
