// Tests of equations/slr_laplace_lognormal (docs/equations/slr_population.md §7b): the Laplace
// factors F_k(c) = E[e^{kY} exp(-e^Y)], C = 1 - F_0, Y ~ N(c, s^2), in log form. References:
// GSL adaptive quadrature of the Gaussian average (written here, around the integrand's peak),
// the identities F_0 + C = 1 and F_k(c) = e^{kc + k^2 s^2/2} F_0(c + k s^2) (a different
// integrand of the w-representation), log Phi by the continued fraction of integrators/special,
// and the shared-lattice tables of equations/slr_laplace_tables.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "equations/slr_laplace_lognormal.hpp"
#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"

using namespace saddle;
using namespace saddle::slr;
using namespace saddle::slr::detail;

namespace {

// log of int phi(x) g(c + s x) dx by adaptive Gauss-Kronrod on pieces around the peak of the
// log-integrand (found by a scan), g = e^{k y - e^y} (k >= 0) or 1 - e^{-e^y} (k = -1).
double reference(int k, double c, double s) {
  auto H = [&](double x) {
    const double y = c + s * x;
    const double lg = k < 0 ? (y < -30 ? y + std::log1p(-0.5 * std::exp(y)) : std::log(-std::expm1(-std::exp(y))))
                            : k * y - std::exp(y);
    return -0.5 * x * x + lg;
  };
  double xm = 0.0, hm = H(0.0);
  for (double x = -60.0; x <= 60.0; x += 1e-3) {
    const double h = H(x);
    if (h > hm) {
      hm = h;
      xm = x;
    }
  }
  // pieces: the peak, the cut at y = 0, and the Gaussian scale
  std::vector<double> br{xm - 12.0, xm - 1.0, xm - 0.1, xm, xm + 0.1, xm + 1.0, xm + 12.0};
  const double xc = -c / s;
  for (double d : {-5.0, -1.0, 0.0, 1.0, 5.0})
    if (xc + d / s > br.front() && xc + d / s < br.back()) br.push_back(xc + d / s);
  std::sort(br.begin(), br.end());
  double sum = 0.0;
  for (std::size_t i = 0; i + 1 < br.size(); ++i)
    sum += integrate_adaptive([&](double x) { return std::exp(H(x) - hm); }, br[i], br[i + 1], 0.0,
                              1e-13)
               .value;
  return hm + std::log(sum) - 0.5 * std::log(2.0 * kPi);
}

double pick(const LogLaplace& r, int k) {
  return k < 0 ? r.lC0 : k == 0 ? r.lF0 : k == 1 ? r.lF1 : k == 2 ? r.lF2 : r.lF3;
}

}  // namespace

TEST_CASE("log-normal Laplace factors: adaptive quadrature in both representations", "[slr][laplace]") {
  const PopulationAccuracy acc{};
  const unsigned all = kLapF0 | kLapC0 | kLapF1 | kLapF2 | kLapF3;
  // s <= 2: x-representation; s > 2: w-representation
  for (double s : {0.3, 1.0, 1.9, 2.1, 5.0, 30.0})
    for (double c : {-300.0, -30.0, -3.0, 0.0, 3.0, 30.0, 300.0}) {
      const LogLaplace r = log_laplace(c, s, all, acc);
      for (int k = -1; k <= 3; ++k) {
        const double ref = reference(k, c, s);
        // (peak outside the reference's scan, or its exponentials underflow)
        if (!std::isfinite(ref) || ref < -650.0) continue;
        INFO("k=" << k << " c=" << c << " s=" << s << " ref=" << ref);
        CHECK(pick(r, k) == Approx(ref).epsilon(0).margin(2e-10));
      }
    }
}

TEST_CASE("log-normal Laplace factors: identities at large spread and far tails", "[slr][laplace]") {
  const PopulationAccuracy acc{};
  for (double s : {0.5, 3.0, 30.0, 300.0, 3000.0})
    for (double c : {-1e5, -1e3, -30.0, 0.0, 30.0, 1e3, 1e5}) {
      INFO("c=" << c << " s=" << s);
      const LogLaplace r = log_laplace(c, s, kLapF0 | kLapC0 | kLapF1 | kLapF2, acc);
      // F_0 + C = 1 where both are representable
      if (r.lF0 > -700.0 && r.lC0 > -700.0) CHECK(std::exp(r.lF0) + std::exp(r.lC0) == Approx(1.0).epsilon(1e-12));
      // F_k(c) = exp(k c + k^2 s^2/2) F_0(c + k s^2): the w-representation's tilted integrand
      // (k >= 1) against its untilted one at a shifted mean
      for (int k = 1; k <= 2; ++k) {
        const double shift = k * s * s;
        const double lf0 = log_laplace(c + shift, s, kLapF0, acc).lF0;
        const double lhs = pick(r, k), rhs = k * c + 0.5 * k * k * s * s + lf0;
        const double tol = 1e-10 + 4e-16 * (std::abs(c) + shift) + 1e-12 * std::abs(lhs);
        CHECK(lhs == Approx(rhs).epsilon(0).margin(tol));
      }
    }
  // tails far beyond double range in linear form: log F_0 ~ -c^2/(2 s^2) for c >> s
  const double lf = log_laplace(1e6, 10.0, kLapF0, acc).lF0;
  CHECK(lf == Approx(-0.5e10).epsilon(1e-3));
  CHECK(std::isfinite(lf));
}

TEST_CASE("log Phi(-a) and the inverse Mills ratio", "[slr][laplace]") {
  for (double a : {-40.0, -5.0, -0.5, 0.0, 3.0, 25.9, 26.1, 40.0, 1e3, 1e6}) {
    INFO("a=" << a);
    CHECK(log_phi_upper(a) == Approx(log_norm_cdf(-a)).epsilon(1e-13).margin(1e-300));
    if (a > -30.0)
      CHECK(inv_mills(a) == Approx(1.0 / mills_ratio(a)).epsilon(1e-12));
  }
}

TEST_CASE("log-normal tables agree with the shared-lattice tables", "[slr][laplace]") {
  // The lattice tables (x grid shared by all tau; used up to q = 1e5) and the per-entry kernel
  // (used beyond): continuity of the two paths at the switch, and for tilted tokens.
  const PopulationAccuracy acc{};
  for (double q : {1.0, 100.0, 1e5})
    for (double mu_over_sq : {0.0, 3.0, 20.0}) {
      const double sq = std::sqrt(q), mu = mu_over_sq * sq;
      const Grid tau = make_grid(-mu - 10.0 * sq - 30.0, 10.0 * sq + 4.0, std::max(0.25, 0.1 * sq));
      const LapTable a = laplace_table(Activation::Softmax, mu, q, tau, acc);
      const LapTable b = laplace_table_lognormal(mu, q, tau, acc);
      for (int i = 0; i < tau.n; ++i) {
        INFO("q=" << q << " mu=" << mu << " tau=" << tau.at(i));
        // the lattice truncates the Gaussian variable at +-x_tail (absolute error ~1e-22, mu <
        // 5 sqrt(q)); the kernel follows every entry's own peak
        CHECK(b.tL1[i] == Approx(a.tL1[i]).epsilon(1e-9).margin(1e-20));
        CHECK(b.t2L2[i] == Approx(a.t2L2[i]).epsilon(1e-9).margin(1e-20));
        CHECK(std::exp(b.logL0[i]) == Approx(std::exp(a.logL0[i])).epsilon(1e-9).margin(1e-20));
        CHECK(b.cL0[i] == Approx(a.cL0[i]).epsilon(1e-9).margin(1e-20));
      }
    }
}

TEST_CASE("LogLaplaceTable: quintic Hermite interpolation of the direct values", "[slr][laplace]") {
  const PopulationAccuracy acc{};
  for (double sigma : {0.2, 1.5, 3.0, 300.0}) {
    const LogLaplaceTable T(sigma, acc);
    const int n = 97;
    for (int i = 0; i <= n; ++i) {
      const double s = T.lo() + (T.hi() - T.lo()) * (i + 0.318) / (n + 1.0);
      double lf0, lc0, lf1;
      T.eval(s, lf0, lc0, lf1);
      const LogLaplace r = log_laplace(s, sigma, kLapF0 | kLapC0 | kLapF1, acc);
      INFO("sigma=" << sigma << " s=" << s);
      CHECK(lf0 == Approx(r.lF0).epsilon(0).margin(2e-10 * std::max(1.0, std::abs(r.lF0))));
      CHECK(lc0 == Approx(r.lC0).epsilon(0).margin(2e-10 * std::max(1.0, std::abs(r.lC0))));
      CHECK(lf1 == Approx(r.lF1).epsilon(0).margin(2e-10 * std::max(1.0, std::abs(r.lF1))));
    }
    // outside: the trivial limits (values below 1e-21)
    double lf0, lc0, lf1;
    T.eval(T.lo() - 1.0, lf0, lc0, lf1);
    CHECK(lf0 == 0.0);
    CHECK(log_laplace(T.lo(), sigma, kLapC0, acc).lC0 < -48.0);
    T.eval(T.hi() + 1.0, lf0, lc0, lf1);
    CHECK(lc0 == 0.0);
    CHECK(log_laplace(T.hi(), sigma, kLapF1, acc).lF1 < -48.0);
  }
}
