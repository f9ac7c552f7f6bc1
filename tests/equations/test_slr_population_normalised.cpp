// Tests of equations/slr_population_normalised (docs/equations/slr_population.md §7a): the 1-D
// Laplace reductions of spiked-SLR (S26)-(S28), (S26a), (S8a) and max-SLR A (S27a) at large nu
// and large key overlaps. References independent of the code: at L = 2 every quantity is a 1-D
// Gaussian average of the logistic function of u = chi_1 - chi_2 (§3.6), integrated here in log
// form (GSL adaptive quadrature around the peak), so relative accuracy is checked where the
// values are e^{-250}; refinement of all quadrature steps; continuity across the switch from the
// shared-lattice tables to the log-normal kernel (q_k = 1e5).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "equations/slr_population.hpp"
#include "tests/equations/slr_population_setting.hpp"
#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"

using namespace saddle;
using namespace saddle::slr;

namespace {

PopulationSetting setting(Task t, std::vector<int> Ls, double nu) {
  return testing::setting(t, std::move(Ls), nu, Activation::Softmax);
}

// log E[exp(lg(u))], u ~ N(mean, var): in the standard variable z = (u - mean)/sd, the peak of
// the log-integrand by scans (z in [-60, 60]; u in [-200, 200], where the logistic factors have
// their structure), then GSL adaptive quadrature of exp(H - H_max) between breakpoints at the
// Gaussian scales, the logistic scales and around the peak.
double log_gauss_expect(const std::function<double(double)>& lg, double mean, double var) {
  const double sd = std::sqrt(var);
  auto H = [&](double z) { return -0.5 * z * z + lg(mean + sd * z); };
  double zm = 0.0, hm = H(0.0);
  auto scan = [&](double a, double b, int n) {
    for (int i = 0; i <= n; ++i) {
      const double z = a + (b - a) * i / n;
      const double h = H(z);
      if (h > hm) {
        hm = h;
        zm = z;
      }
    }
  };
  scan(-60.0, 60.0, 200000);
  scan((-200.0 - mean) / sd, (200.0 - mean) / sd, 400000);
  const double wz = std::min(1.0, 1.0 / sd);  // the logistic scale in z
  scan(zm - 2.0 * wz, zm + 2.0 * wz, 40000);
  std::vector<double> br;
  for (double z : {-60.0, -20.0, -10.0, -5.0, -2.0, -1.0, 0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 60.0}) br.push_back(z);
  for (double u : {-100.0, -40.0, -10.0, -1.0, 0.0, 1.0, 10.0, 40.0, 100.0}) br.push_back((u - mean) / sd);
  for (double k : {-12.0, -3.0, -1.0, 0.0, 1.0, 3.0, 12.0}) br.push_back(zm + k * wz);
  std::sort(br.begin(), br.end());
  br.erase(std::remove_if(br.begin(), br.end(), [](double z) { return z < -60.0 || z > 60.0; }), br.end());
  double sum = 0.0;
  for (std::size_t i = 0; i + 1 < br.size(); ++i)
    if (br[i + 1] > br[i])
      sum += integrate_adaptive([&](double z) { return std::exp(H(z) - hm); }, br[i], br[i + 1], 0.0, 1e-12).value;
  return hm + std::log(sum / std::sqrt(2.0 * kPi));
}
// log sigma(-u) = -log(1 + e^u)
double log_sig_neg(double u) { return -log1p_exp(u); }

}  // namespace

TEST_CASE("slr population normalised: spiked L = 2 exact forms at large nu and large q_k", "[slr][population]") {
  // s_1 = sigma(u), u = chi_1 - chi_2 ~ N(mu, 2 q): 1 - B = E sigma(-u), 1 - A = 2 E sigma(u)
  // sigma(-u), A - B^2 = 2 E sigma(-u)^2 - (1 - B)^2 (S8a).
  struct Case {
    double mu, q;
  };
  const std::vector<Case> cases{{1000.0, 1000.0},         // Bayes point at nu = 1e3 (risk 7e-111)
                                {600.0, 500.0},           // past the Bayes point
                                {300.0, 99999.0},         // lattice, below the switch
                                {2000.0, 100001.0},       // log-normal kernel, above
                                {1e4, 1e8},               //
                                {3e5, 1e12},              // the largest q_k of the domain
                                {-50.0, 30.0}};           // m_k < 0
  for (const auto& c : cases) {
    // mu = m_k sqrt(nu) with q_k = m_k^2 (no key noise): m_k = +-sqrt(q), nu = mu^2/q <= 1e3
    const double q = c.q, m = std::copysign(std::sqrt(q), c.mu);
    const PopulationSetting s = setting(Task::Spiked, {2}, c.mu * c.mu / q);
    const ABDetail d = population_AB_detail(s, m, q, PopulationAccuracy{});
    const double lcB = log_gauss_expect(log_sig_neg, c.mu, 2.0 * q);
    const double lcA = std::log(2.0) + log_gauss_expect([](double u) { return log_sig_neg(u) + log_sig_neg(-u); }, c.mu, 2.0 * q);
    const double lS2 = std::log(2.0) + log_gauss_expect([](double u) { return 2.0 * log_sig_neg(u); }, c.mu, 2.0 * q);
    INFO("mu=" << c.mu << " q=" << q << " 1-B=" << std::exp(lcB) << " 1-A=" << std::exp(lcA));
    CHECK(std::log(d.cB) == Approx(lcB).epsilon(0).margin(1e-9));
    CHECK(std::log(d.cA) == Approx(lcA).epsilon(0).margin(1e-9));
    // A - B^2 = 2 E s_2^2 - (1 - B)^2, both terms from the references (E s_2^2 directly where
    // it is small, else as E s_2 - E s_1 s_2 without cancellation)
    const double cB = std::exp(lcB), cA = std::exp(lcA);
    const double dab = (cB < 0.1 ? std::exp(lS2) : 2.0 * cB - cA) - cB * cB;
    INFO("2 E s_2^2: direct " << std::exp(lS2) << ", from 1 - B and 1 - A " << 2.0 * cB - cA);
    CHECK(d.dAB == Approx(dab).epsilon(1e-8));
    // and the optimal-v risk (S8) from it keeps its relative accuracy
    CHECK(risk_optimal_v(d) == Approx(dab / (1.0 - std::exp(lcA))).epsilon(1e-8));
  }
}

TEST_CASE("slr population normalised: max-SLR A (S27a) at large q_k", "[slr][population]") {
  // L = 2: 1 - A = 2 E sigma(u) sigma(-u), u ~ N(0, 2 q) (the Bayes risk at q = nu^2)
  for (double q : {1e4, 3e5, 1e6}) {  // lattice, log-normal kernel, the domain's largest
    const ABDetail d = population_AB_detail(setting(Task::Max, {2}, 0.0), 0.0, q, PopulationAccuracy{});
    const double ref = 2.0 * std::exp(log_gauss_expect([](double u) { return log_sig_neg(u) + log_sig_neg(-u); }, 0.0, 2.0 * q));
    INFO("q=" << q);
    CHECK(d.cA == Approx(ref).epsilon(1e-9));
  }
  CHECK(bayes_risk(Task::Max, {2}, 1000.0) ==
        Approx(2.0 * std::exp(log_gauss_expect([](double u) { return log_sig_neg(u) + log_sig_neg(-u); }, 0.0, 2e6))).epsilon(1e-9));
}

TEST_CASE("slr population normalised: refinement at the new edges", "[slr][population]") {
  const PopulationAccuracy def{}, fine = def.refined(2.0);
  struct Case {
    Task t;
    std::vector<int> Ls;
    double nu, m, q;
  };
  const double sq1e3 = std::sqrt(1000.0);
  const std::vector<Case> cases{{Task::Spiked, {2}, 1000.0, sq1e3, 1000.0},       // Bayes, nu = 1e3
                                {Task::Spiked, {3, 1000}, 1000.0, 25.0, 900.0},    // variable L
                                {Task::Spiked, {4}, 1000.0, 300.0, 1e5},           // tilted token, mu = 30 sqrt(q)
                                {Task::Spiked, {2}, 2.0, 1e5, 1e12},               // largest q_k
                                {Task::Spiked, {10}, 500.0, 30.0, 3e6},            // kernel, L = 10
                                {Task::Max, {2, 3}, 1000.0, 0.0, 1e6}};            // max-SLR A only
  for (const auto& c : cases) {
    const PopulationSetting s = setting(c.t, c.Ls, c.nu);
    ABDetail d0, d1;
    if (c.t == Task::Max) {  // A alone: the Bayes risk at q = nu^2
      d0.cA = bayes_risk(c.t, c.Ls, c.nu, def);
      d1.cA = bayes_risk(c.t, c.Ls, c.nu, fine);
      d0.A = 1.0 - d0.cA;
      d1.A = 1.0 - d1.cA;
      d0.B = d1.B = d0.cB = d1.cB = d0.dAB = d1.dAB = 1.0;
    } else {
      d0 = population_AB_detail(s, c.m, c.q, def);
      d1 = population_AB_detail(s, c.m, c.q, fine);
    }
    INFO(to_string(c.t) << " nu=" << c.nu << " m=" << c.m << " q=" << c.q << " 1-A=" << d0.cA << " 1-B=" << d0.cB);
    CHECK(d0.A == Approx(d1.A).epsilon(1e-12));
    CHECK(d0.B == Approx(d1.B).epsilon(1e-12));
    CHECK(d0.cA == Approx(d1.cA).epsilon(1e-9));
    CHECK(d0.cB == Approx(d1.cB).epsilon(1e-9));
    CHECK(d0.dAB == Approx(d1.dAB).epsilon(1e-9));
  }
}

TEST_CASE("slr population normalised: continuity across the old domain edges", "[slr][population]") {
  // q_k = 1e5: the shared-lattice tables below, the log-normal kernel above (and the old bound);
  // nu = 150 and m_k sqrt(nu) = 300 were old bounds with no switch now: smooth in nu and m_k.
  for (double mu_over_sq : {0.5, 3.0, 8.0}) {
    // mu = m_k sqrt(nu) = mu_over_sq sqrt(q_k) with m_k = sqrt(q_k), nu = mu_over_sq^2
    const PopulationSetting s = setting(Task::Spiked, {3}, mu_over_sq * mu_over_sq);
    const double q0 = 1e5 * (1.0 - 1e-13), q1 = 1e5 * (1.0 + 1e-13);
    const ABDetail a = population_AB_detail(s, std::sqrt(q0), q0, PopulationAccuracy{});
    const ABDetail b = population_AB_detail(s, std::sqrt(q1), q1, PopulationAccuracy{});
    INFO("mu/sqrt(q)=" << mu_over_sq);
    CHECK(a.A == Approx(b.A).epsilon(1e-12));
    CHECK(a.B == Approx(b.B).epsilon(1e-12));
    CHECK(a.cA == Approx(b.cA).epsilon(1e-9));
    CHECK(a.cB == Approx(b.cB).epsilon(1e-9));
    CHECK(a.dAB == Approx(b.dAB).epsilon(1e-9));
  }
  // E_Bayes(nu) is smooth through nu = 150: log E_Bayes against its secant within the curvature
  auto le = [](double nu) { return std::log(bayes_risk(Task::Spiked, {3}, nu)); };
  const double h = 1e-3;
  const double second = le(150.0 - h) - 2.0 * le(150.0) + le(150.0 + h);  // ~ h^2 (log E)''
  CHECK(std::abs(second) < 1e-8);
  // the spiked mean m_k sqrt(nu) through 300 at nu = 100: the risk of (S7) is smooth
  auto lr = [](double m) {
    PopulationSetting s = setting(Task::Spiked, {2}, 100.0);
    return std::log(risk_optimal_v(population_AB_detail(s, m, m * m, PopulationAccuracy{})));
  };
  const double sec_m = lr(30.0 - h) - 2.0 * lr(30.0) + lr(30.0 + h);
  CHECK(std::abs(sec_m) < 1e-6);
}
