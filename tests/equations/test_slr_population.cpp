// Tests of the SLR population module (docs/equations/slr_population.md §3, §7a, §8; mc/slr_population_mc for docs/equations/slr_replica.md §6).
// Every expected value is independent of the code under test: closed forms of §3.6, the spec's
// smoke values (§8, computed independently and confirmed by tensor Gauss-Hermite), tensor
// Gauss-Hermite written here, 1-D adaptive quadrature, and Monte Carlo within 3 standard errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <limits>
#include <vector>

#include "equations/slr_population.hpp"
#include "tests/equations/slr_population_setting.hpp"
#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"
#include "mc/slr_population_mc.hpp"
#include "mc/slr_sample.hpp"

using namespace saddle;
using namespace saddle::slr;
using namespace saddle::slr::testing;

namespace {

// Tensor Gauss-Hermite of A and B: coordinates zeta (L teacher) and xi (L key noise, if r > 0).
AB tensor_gh(const PopulationSetting& s, double m, double q, int n) {
  const int L = s.lengths[0];
  const double r = q - m * m > 1e-12 ? std::sqrt(q - m * m) : 0.0;
  const int dim = r > 0 ? 2 * L : L;
  GaussianTensorRule rule(Eigen::VectorXd::Zero(dim), Eigen::MatrixXd::Identity(dim, dim), n);
  std::vector<double> cs(L), chi(L), sv(L), p(L);
  double A = 0, B = 0;
  for (int j = 0; j < rule.size(); ++j) {
    const double* x = rule.point(j);
    for (int l = 0; l < L; ++l) {
      cs[l] = x[l];
      if (s.task == Task::Spiked && l == 0) cs[l] += std::sqrt(s.nu);  // eps* = 1
      chi[l] = m * cs[l] + (r > 0 ? r * x[L + l] : 0.0);
    }
    attention_weights(s.activation, s.erf_b, chi.data(), L, sv.data());
    double a = 0, b = 0;
    for (int l = 0; l < L; ++l) a += sv[l] * sv[l];
    if (s.task == Task::Spiked) {
      b = sv[0];
    } else {
      location_posterior(s.task, s.nu, cs.data(), L, p.data());
      for (int l = 0; l < L; ++l) b += p[l] * sv[l];
    }
    A += rule.weight(j) * a;
    B += rule.weight(j) * b;
  }
  return {A, B};
}
}  // namespace

TEST_CASE("slr population: spec smoke values (§8)", "[slr][population]") {
  // Spec §8, computed independently with (S26)-(S30) and 100-node tensor Gauss-Hermite.
  auto d1 = population_AB(setting(Task::Spiked, {3}, 2.0, Activation::Softmax), 1.0, 1.5);
  CHECK(d1.A == Approx(0.5818371052).epsilon(2e-10));
  CHECK(d1.B == Approx(0.5742182722).epsilon(2e-10));
  auto d2 = population_AB(setting(Task::Max, {3}, 2.0, Activation::Softmax), 1.0, 1.0);
  CHECK(d2.A == Approx(0.4815657208).epsilon(2e-10));
  CHECK(d2.B == Approx(0.5448195617).epsilon(2e-10));
}

TEST_CASE("slr population: Laplace reduction = tensor Gauss-Hermite at L = 2, 3", "[slr][population]") {
  struct Case {
    Task t;
    int L;
    double nu, m, q;
    Activation a;
    int n;
  };
  const std::vector<Case> cases{
      {Task::Spiked, 2, 1.0, 0.8, 0.64, Activation::Softmax, 80},
      {Task::Spiked, 3, 1.0, 0.7, 0.49, Activation::Softplus, 60},
      {Task::Spiked, 2, 2.0, 0.6, 0.8, Activation::Softmax, 30},
      {Task::Spiked, 2, 1.5, 0.6, 0.8, Activation::Softplus, 30},
      {Task::Spiked, 3, 2.0, 0.5, 0.25, Activation::Erf, 60},
      {Task::Max, 2, 1.0, 0.8, 0.64, Activation::Softmax, 80},
      {Task::Max, 3, 1.0, 0.7, 0.49, Activation::Softplus, 60},
      {Task::Max, 2, 1.0, 0.6, 0.8, Activation::Softmax, 30},
      {Task::Max, 2, 1.0, 0.6, 0.8, Activation::Softplus, 30},
      {Task::Max, 3, 1.0, 0.5, 0.25, Activation::Erf, 60},
      {Task::Max, 2, 1.0, 0.5, 0.5, Activation::Erf, 30},
  };
  for (const auto& c : cases) {
    auto s = setting(c.t, {c.L}, c.nu, c.a, c.a == Activation::Erf ? -0.3 : 0.0);
    AB lap = population_AB(s, c.m, c.q);
    AB gh = tensor_gh(s, c.m, c.q, c.n);
    INFO(to_string(c.t) << " L=" << c.L << " nu=" << c.nu << " " << to_string(c.a) << " m=" << c.m
                        << " q=" << c.q);
    CHECK(lap.A == Approx(gh.A).epsilon(2e-7));
    CHECK(lap.B == Approx(gh.B).epsilon(2e-7));
  }
}

TEST_CASE("slr population: 6 significant digits under quadrature refinement", "[slr][population]") {
  const PopulationAccuracy def{};
  const PopulationAccuracy fine = def.refined(2.0);
  struct Case {
    Task t;
    double nu;
    Activation a;
    double m, q;
  };
  const std::vector<Case> cases{{Task::Spiked, 4.0, Activation::Softmax, 2.0, 4.0},
                                {Task::Spiked, 2.0, Activation::Softplus, 3.0, 9.5},
                                {Task::Max, 3.0, Activation::Softmax, 2.0, 4.0},
                                {Task::Max, 2.0, Activation::Softplus, 3.0, 9.0},
                                {Task::Max, kInfty, Activation::Softmax, 3.0, 9.0},
                                {Task::Max, 2.0, Activation::Erf, 1.5, 2.25}};
  for (const auto& c : cases)
    for (int L : {2, 10, 1000}) {
      auto s = setting(c.t, {L}, c.nu, c.a, -1.0);
      auto d0 = population_AB_detail(s, c.m, c.q, def);
      auto d1 = population_AB_detail(s, c.m, c.q, fine);
      INFO(to_string(c.t) << " nu=" << c.nu << " " << to_string(c.a) << " L=" << L);
      CHECK(risk_optimal_v(d0) == Approx(risk_optimal_v(d1)).epsilon(1e-7));
      CHECK(d0.A == Approx(d1.A).epsilon(1e-7));
      CHECK(d0.B == Approx(d1.B).epsilon(1e-7));
    }
}

TEST_CASE("slr population: Bayes risk, L = 2 integral, Nishimori, limits", "[slr][population]") {
  auto sig = [](double u) { return sigmoid(u); };
  for (double nu : {0.5, 2.0, 6.0}) {
    for (Task t : {Task::Spiked, Task::Max}) {
      const double mean = t == Task::Spiked ? nu : 0.0;
      const double var = t == Task::Spiked ? 2 * nu : 2 * nu * nu;
      auto r = integrate_adaptive(
          [&](double x) {
            const double u = mean + std::sqrt(var) * x;
            return 2.0 * sig(u) * sig(-u) * norm_pdf(x);
          },
          -kInfty, kInfty, 1e-14, 1e-12);
      INFO(to_string(t) << " nu=" << nu);
      CHECK(bayes_risk(t, {2}, nu) == Approx(r.value).epsilon(1e-8));
      for (int L : {2, 5, 1000})
        CHECK(bayes_risk(t, {L}, nu) ==
              Approx(bayes_risk_via_B(t, {L}, nu, PopulationAccuracy{})).epsilon(1e-8));
    }
  }
  CHECK(bayes_risk(Task::Max, {3}, kInfty) == 0.0);
  CHECK(bayes_risk(Task::Spiked, {1}, 3.0) == 0.0);
  // L -> inf: L (1 - E_Bayes) -> e^{c_nu^2} (spiked nu = 1: e; max nu = 1: e)
  const double L = 1e7;
  CHECK(L * (1.0 - bayes_risk(Task::Spiked, {int(L)}, 1.0)) == Approx(std::exp(1.0)).epsilon(2e-3));
  CHECK(L * (1.0 - bayes_risk(Task::Max, {int(L)}, 1.0)) == Approx(std::exp(1.0)).epsilon(2e-3));
}

TEST_CASE("slr population: Laplace reduction agrees with Monte Carlo at L = 10 and 1000", "[slr][population]") {
  struct Case {
    Task t;
    int L;
    double nu, m, q;
    Activation a;
    long n;
  };
  const std::vector<Case> cases{
      {Task::Spiked, 10, 2.0, 1.2, 1.8, Activation::Softmax, 200000},
      {Task::Max, 10, 2.0, 1.5, 2.25, Activation::Softmax, 200000},
      {Task::Max, 10, kInfty, 2.0, 4.5, Activation::Softplus, 200000},
      {Task::Spiked, 1000, 4.0, 2.5, 6.25, Activation::Softmax, 8000},
      {Task::Max, 1000, 2.0, 2.0, 4.0, Activation::Softplus, 8000},
      {Task::Max, 1000, kInfty, 3.0, 9.0, Activation::Softmax, 8000},
  };
  std::uint64_t seed = 11;
  for (const auto& c : cases) {
    auto s = setting(c.t, {c.L}, c.nu, c.a);
    AB lap = population_AB(s, c.m, c.q);
    PopulationMcOptions mo;
    mo.samples = c.n;
    mo.seed = seed++;
    auto mc = population_mc(s, c.m, c.q, 1.0, 1.0, mo);
    INFO(to_string(c.t) << " L=" << c.L << " nu=" << c.nu << " " << to_string(c.a) << " A " << lap.A
                        << " vs " << mc.A.mean << " +- " << mc.A.se << "; B " << lap.B << " vs "
                        << mc.B_rb.mean << " +- " << mc.B_rb.se);
    CHECK(std::abs(lap.A - mc.A.mean) < 3.0 * mc.A.se);
    CHECK(std::abs(lap.B - mc.B_rb.mean) < 3.0 * mc.B_rb.se);
  }
}

TEST_CASE("slr population: (S7) matches direct Monte Carlo of the predictor", "[slr][population]") {
  // random points with q >= m^2; field space (S6) and explicit tokens at D = 40
  struct Case {
    Task t;
    std::vector<int> Ls;
    double nu;
    Activation a;
    double mk, qk, mv, qv;
    int D;
  };
  const std::vector<Case> cases{
      {Task::Spiked, {3}, 2.0, Activation::Softmax, 0.9, 1.3, 0.7, 0.8, 0},
      {Task::Max, {2}, kInfty, Activation::Softmax, 1.7, 3.1, 0.6, 0.5, 0},
      {Task::Max, {4}, 1.5, Activation::Softplus, 1.1, 1.6, 0.8, 1.0, 0},
      {Task::Spiked, {1, 2, 3}, 3.0, Activation::Erf, 0.4, 0.3, 0.3, 0.2, 0},
      {Task::Max, {3}, 2.0, Activation::Linear, 0.5, 0.4, 0.3, 0.1, 0},
      {Task::Spiked, {3}, 2.0, Activation::Softmax, 0.9, 1.3, 0.7, 0.8, 40},
      {Task::Max, {3}, 2.0, Activation::Softplus, 1.2, 1.7, 0.9, 1.0, 40},
  };
  std::uint64_t seed = 101;
  for (const auto& c : cases) {
    auto s = setting(c.t, c.Ls, c.nu, c.a, -0.4);
    const double E = population_risk(s, c.mk, c.qk, c.mv, c.qv);
    PopulationMcOptions mo;
    mo.samples = c.D > 0 ? 40000 : 200000;
    mo.seed = seed++;
    mo.D = c.D;
    mo.delta = 0.1;
    auto mc = population_mc(s, c.mk, c.qk, c.mv, c.qv, mo);
    INFO(to_string(c.t) << " " << to_string(c.a) << " D=" << c.D << ": E = " << E << " MC "
                        << mc.risk.mean << " +- " << mc.risk.se);
    CHECK(std::abs(E - mc.risk.mean) < 3.0 * mc.risk.se);
  }
}

TEST_CASE("slr population: bad input throws", "[slr][population]") {
  auto s = setting(Task::Spiked, {2}, kInfty, Activation::Softmax);
  CHECK_THROWS_AS(population_AB(s, 1.0, 1.0), std::invalid_argument);
  s.nu = -1;
  CHECK_THROWS_AS(population_AB(s, 1.0, 1.0), std::invalid_argument);
  s.nu = 1;
  CHECK_THROWS_AS(population_AB(s, 1.0, 0.5), std::invalid_argument);  // q < m^2
  s.lengths = {0};
  CHECK_THROWS_AS(population_AB(s, 1.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(parse_activation("relu"), std::invalid_argument);
  CHECK(parse_task("max") == Task::Max);
  CHECK(to_string(Activation::Softplus) == "softplus");
}

TEST_CASE("slr population: max-SLR at large nu (closed forms, limits, domain)", "[slr][population]") {
  // At m_k = c_nu = nu, q_k = nu^2 the softmax weights are the posterior p, so B = E sum p_l s_l
  // equals A = E sum s_l^2 (Prop. 4.2): the 2-D finite-nu B (S30, ridge-aligned grid) against the
  // independent 1-D A. Also at L = 1000 (the large-L step shrink) and with key noise (q > m^2 is
  // not Bayes, so only A(q) vs its own value: skipped).
  for (double nu : {20.0, 50.0, 100.0})
    for (int L : {2, 3, 1000}) {
      INFO("nu=" << nu << " L=" << L);
      const auto ab = population_AB_detail(setting(Task::Max, {L}, nu, Activation::Softmax), nu,
                                           nu * nu, PopulationAccuracy{});
      CHECK(ab.B == Approx(ab.A).epsilon(2e-9));
      CHECK(ab.cB == Approx(ab.cA).epsilon(1e-6));  // 1 - B = 1 - A = E_Bayes ~ 1/nu
    }
  // L = 2: E_Bayes = 2 E[sig(u) sig(-u)], u ~ N(0, 2 nu^2) (§3.6), by a plain trapezoid in u
  // (the integrand has width ~1 in u, tiny against the Gaussian scale); ~ 1/(sqrt(pi) nu) for
  // large nu.
  for (double nu : {30.0, 100.0}) {
    const double sd = std::sqrt(2.0) * nu, h = 1e-3;
    double s = 0.0;
    for (double u = -60.0; u <= 60.0; u += h)
      s += 2.0 * sigmoid(u) * sigmoid(-u) * std::exp(-0.5 * u * u / (sd * sd)) / (std::sqrt(2 * M_PI) * sd);
    s *= h;
    INFO("nu=" << nu);
    CHECK(bayes_risk(Task::Max, {2}, nu) == Approx(s).epsilon(1e-8));
    CHECK(nu * s * std::sqrt(M_PI) == Approx(1.0).epsilon(0.5 / (nu * nu) + 1e-3));
  }
  // Linear attention (S12) at nu = 50: E_lin = 1 - (1 + mu_1^2)/L with mu_1 = nu E_Bayes (Stein),
  // against the optimiser, whose B uses the tilt density (another route).
  {
    const double nu = 50.0;
    const auto lin = optimise_population(setting(Task::Max, {3}, nu, Activation::Linear), {});
    const double mu1 = nu * bayes_risk(Task::Max, {3}, nu);
    CHECK(lin.risk == Approx(1.0 - (1.0 + mu1 * mu1) / 3.0).epsilon(1e-8));
    CHECK(lin.m_k == Approx(mu1).margin(1e-5));
  }
  // The domain: outside it the functions refuse before allocating.
  CHECK_THROWS_AS(population_AB(setting(Task::Max, {3}, 1e300, Activation::Softmax), 1.0, 1.0),
                  std::invalid_argument);
  CHECK_THROWS_AS(population_AB(setting(Task::Spiked, {3}, 1e6, Activation::Softmax), 1.0, 1.0),
                  std::invalid_argument);
  CHECK_THROWS_AS(population_AB(setting(Task::Max, {3}, 2.0, Activation::Erf), 1e150, 1e300),
                  std::invalid_argument);
  CHECK_THROWS_AS(population_AB(setting(Task::Max, {3}, 2.0, Activation::Erf, 1e300), 1.0, 1.0),
                  std::invalid_argument);
}

TEST_CASE("slr population: spiked Bayes risk at large nu against its asymptotic series", "[slr][population]") {
  // docs/equations/slr_population.md §3.7: E_Bayes(L, nu) = (L-1) sqrt(pi/(4 nu)) e^{-nu/4}
  // [1 - pi^2/(4 nu) + 5 pi^4/(32 nu^2) - 61 pi^6/(384 nu^3) + O(nu^-4)] (1 + O(e^{-nu/11})):
  // the omitted term 1385 pi^8/(6144 nu^4) is 8e-8 at nu = 400 and 2e-9 at nu = 1e3.
  for (double nu : {400.0, 1000.0})
    for (int L : {2, 3, 8}) {
      const double p2 = kPi * kPi, a = 1.0 / nu;
      const double series = 1.0 - p2 / 4.0 * a + 5.0 * p2 * p2 / 32.0 * a * a - 61.0 * p2 * p2 * p2 / 384.0 * a * a * a;
      const double lead = (L - 1.0) * std::sqrt(kPi / (4.0 * nu)) * std::exp(-nu / 4.0);
      const double tol = 1385.0 * p2 * p2 * p2 * p2 / 6144.0 * a * a * a * a * 1.5;
      INFO("nu=" << nu << " L=" << L);
      CHECK(bayes_risk(Task::Spiked, {L}, nu) / (lead * series) == Approx(1.0).epsilon(tol));
      // the Nishimori form 1 - E p_eps* (from (S26a)) agrees to relative 1e-9
      CHECK(bayes_risk_via_B(Task::Spiked, {L}, nu, PopulationAccuracy{}) ==
            Approx(bayes_risk(Task::Spiked, {L}, nu)).epsilon(1e-9));
    }
  // variable length: the average of the fixed-length risks
  CHECK(bayes_risk(Task::Spiked, {2, 5}, 1000.0) ==
        Approx(0.5 * (bayes_risk(Task::Spiked, {2}, 1000.0) + bayes_risk(Task::Spiked, {5}, 1000.0))).epsilon(1e-14));
}

TEST_CASE("slr population: the domain contract (PopulationDomainError)", "[slr][population]") {
  // outside the domain: PopulationDomainError (an std::invalid_argument), raised before any work;
  // plain bad input: std::invalid_argument but not PopulationDomainError
  auto is_domain = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const PopulationDomainError&) {
      return 1;
    } catch (const std::invalid_argument&) {
      return 0;
    }
    return -1;
  };
  const auto sm = setting(Task::Spiked, {2}, 2.0, Activation::Softmax);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(is_domain([&] { population_risk(sm, 1.0, kInfty, 1.0, 1.0); }) == 1);         // diverged
  CHECK(is_domain([&] { population_risk(sm, nan, 1.0, 1.0, 1.0); }) == 1);
  CHECK(is_domain([&] { population_risk(sm, 1.0, 1.001e12, 1.0, 1.0); }) == 1);      // q_k
  CHECK(is_domain([&] { population_risk(setting(Task::Spiked, {2}, 1000.001, Activation::Linear), 1.0, 1.0, 1.0, 1.0); }) == 1);
  CHECK(is_domain([&] { bayes_risk(Task::Max, {2}, 2e3); }) == 1);
  CHECK(is_domain([&] { population_risk(sm, 1.0, 0.5, 1.0, 1.0); }) == 0);           // q_k < m_k^2
  CHECK(is_domain([&] { population_risk(setting(Task::Spiked, {2}, -1.0, Activation::Softmax), 1.0, 1.0, 1.0, 1.0); }) == 0);
  CHECK(is_domain([&] { population_risk(setting(Task::Spiked, {0}, 1.0, Activation::Softmax), 1.0, 1.0, 1.0, 1.0); }) == 0);
  CHECK(is_domain([&] { population_risk(sm, 1.0, 1.0, 1.0, 0.5); }) == 0);           // q_v < m_v^2
  // just inside: finite values
  CHECK(std::isfinite(population_risk(sm, 1e6, 1e12, 1.0, 1.0)));
  CHECK(std::isfinite(population_risk(setting(Task::Spiked, {2}, 1000.0, Activation::Linear), -1e40, 1e100, 0.0, 0.0)));
}

TEST_CASE("slr population: Monte Carlo at new points of the domain", "[slr][population]") {
  // field-space simulation of the predictor (mc/slr_population_mc) at large key overlaps and
  // large nu, within 3 standard errors
  struct Case {
    Task t;
    std::vector<int> Ls;
    double nu;
    Activation a;
    double mk, qk, mv, qv;
  };
  const std::vector<Case> cases{
      {Task::Spiked, {3}, 2.0, Activation::Softmax, 30.0, 2.5e6, 0.7, 0.8},    // log-normal kernel
      {Task::Spiked, {2}, 600.0, Activation::Softmax, 20.0, 500.0, 0.9, 1.0},  // nu > 150
      {Task::Max, {2}, 500.0, Activation::Softmax, 30.0, 1000.0, 0.8, 0.7},    // max nu > 100, key noise
      {Task::Max, {3}, kInfty, Activation::Softmax, 30.0, 1000.0, 0.8, 0.7},   // nu = inf, key noise
      {Task::Spiked, {2}, 800.0, Activation::Linear, 5.0, 30.0, 0.1, 0.02},
  };
  std::uint64_t seed = 7001;
  for (const auto& c : cases) {
    auto s = setting(c.t, c.Ls, c.nu, c.a);
    const double E = population_risk(s, c.mk, c.qk, c.mv, c.qv);
    PopulationMcOptions mo;
    mo.samples = 100000;
    mo.seed = seed++;
    auto mc = population_mc(s, c.mk, c.qk, c.mv, c.qv, mo);
    INFO(to_string(c.t) << " nu=" << c.nu << " " << to_string(c.a) << ": E = " << E << " MC " << mc.risk.mean
                        << " +- " << mc.risk.se);
    CHECK(std::abs(E - mc.risk.mean) < 3.0 * mc.risk.se);
  }
}
