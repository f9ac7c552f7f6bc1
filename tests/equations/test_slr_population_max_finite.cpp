// Tests of equations/slr_population_max_finite (docs/equations/slr_population.md §7a (S30)):
// max-SLR B of softmax at finite nu up to 1e3, with and without key noise. References: at L = 2,
// B = 2 E[p_1 s_1] = 2 E_d[sig(nu d) E_eta sig(m d + r sqrt(2) eta)], d ~ N(0, 2), by nested GSL
// adaptive quadrature (written here); Prop. 4.2 (B = A at the Bayes point m_k = nu, q_k = nu^2,
// A by the independent 1-D (S27a)); refinement of all steps.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "equations/slr_population.hpp"
#include "tests/equations/slr_population_setting.hpp"
#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"

using namespace saddle;
using namespace saddle::slr;

namespace {

PopulationSetting max_softmax(std::vector<int> Ls, double nu) {
  return testing::setting(Task::Max, std::move(Ls), nu, Activation::Softmax);
}

// E_eta sigma(mu + sd eta), eta ~ N(0, 1)
// (for sd > 1 as int sigma'(l) Phi((mu - l)/sd) dl, l logistic: smooth, unlike the sharp step
// of the logistic in eta)
double logistic_normal(double mu, double sd) {
  if (sd == 0.0) return sigmoid(mu);
  if (sd > 1.0)
    return integrate_adaptive([&](double l) { return sigmoid(l) * sigmoid(-l) * norm_cdf((mu - l) / sd); },
                              -60.0, 60.0, 1e-15, 1e-12)
        .value;
  return integrate_adaptive([&](double e) { return norm_pdf(e) * sigmoid(mu + sd * e); }, -12.0, 12.0,
                            1e-15, 1e-12)
      .value;
}
// L = 2, finite nu: B = 2 E_d[sigma(nu d) G(d)], G(d) = E_eta sigma(m d + r sqrt(2) eta); in
// x = d/sqrt(2) ~ N(0, 1), with breakpoints at the widths 1/nu and 1/m of the two logistics.
double B_L2(double nu, double m, double q) {
  const double r = std::sqrt(std::max(0.0, q - m * m));
  auto f = [&](double x) {
    const double d = std::sqrt(2.0) * x;
    return norm_pdf(x) * sigmoid(nu * d) * logistic_normal(m * d, r * std::sqrt(2.0));
  };
  const double w = 1.0 / std::max(nu, std::max(m, 1.0));
  double s = 0.0;
  const std::vector<double> br{-12.0, -60.0 * w, -5.0 * w, 0.0, 5.0 * w, 60.0 * w, 12.0};
  for (std::size_t i = 0; i + 1 < br.size(); ++i)
    if (br[i + 1] > br[i]) s += integrate_adaptive(f, br[i], br[i + 1], 1e-15, 1e-12).value;
  return 2.0 * s;
}

}  // namespace

TEST_CASE("slr population max finite nu: L = 2 B against nested quadrature, nu up to 1e3", "[slr][population]") {
  struct Case {
    double nu, m, q;
  };
  // key noise sigma = nu sqrt(1 - m^2/q) from 0 to ~1e3 (the old cubic table gave NaN at
  // nu = 100 with key noise)
  const std::vector<Case> cases{{2.0, 0.9, 1.57},    {10.0, 3.0, 10.0},   {100.0, 30.0, 1000.0},
                                {100.0, 3.0, 10.0},  {1000.0, 3.0, 10.0}, {1000.0, 30.0, 1000.0},
                                {1000.0, 0.5, 2.0},  {1000.0, 40.0, 1600.0}};
  for (const auto& c : cases) {
    const ABDetail d = population_AB_detail(max_softmax({2}, c.nu), c.m, c.q, PopulationAccuracy{});
    INFO("nu=" << c.nu << " m=" << c.m << " q=" << c.q);
    CHECK(d.B == Approx(B_L2(c.nu, c.m, c.q)).epsilon(0).margin(5e-10));
  }
}

TEST_CASE("slr population max finite nu: Bayes point and refinement at the new edges", "[slr][population]") {
  // Prop. 4.2: at m_k = nu, q_k = nu^2 the softmax weights are the posterior, B = A
  for (double nu : {300.0, 1000.0})
    for (int L : {2, 3}) {
      const ABDetail d = population_AB_detail(max_softmax({L}, nu), nu, nu * nu, PopulationAccuracy{});
      INFO("nu=" << nu << " L=" << L);
      CHECK(d.B == Approx(d.A).epsilon(2e-9));
      CHECK(d.cB == Approx(d.cA).epsilon(2e-6));  // 1 - B = 1 - A = E_Bayes ~ 1/(sqrt(pi) nu)
    }
  // refinement (all steps halved) with key noise at nu = 1e3 and at the largest q_k
  const PopulationAccuracy def{}, fine = def.refined(2.0);
  struct Case {
    std::vector<int> Ls;
    double nu, m, q;
  };
  const std::vector<Case> cases{{{2, 4}, 1000.0, 30.0, 1000.0}, {{3}, 500.0, 300.0, 1e5}, {{2}, 1000.0, 100.0, 1e6}};
  for (const auto& c : cases) {
    const ABDetail a = population_AB_detail(max_softmax(c.Ls, c.nu), c.m, c.q, def);
    const ABDetail b = population_AB_detail(max_softmax(c.Ls, c.nu), c.m, c.q, fine);
    INFO("nu=" << c.nu << " m=" << c.m << " q=" << c.q);
    CHECK(a.B == Approx(b.B).epsilon(1e-9));
    CHECK(risk_optimal_v(a) == Approx(risk_optimal_v(b)).epsilon(1e-8));
  }
}

TEST_CASE("slr population max finite nu: domain edges", "[slr][population]") {
  const PopulationSetting s = max_softmax({2}, 1000.0);
  CHECK_NOTHROW(check_population_domain(s, 10.0, kPopulationMaxQkSoftmaxMax));
  CHECK_THROWS_AS(population_AB(s, 10.0, kPopulationMaxQkSoftmaxMax * (1.0 + 1e-9)), PopulationDomainError);
  CHECK_THROWS_AS(population_AB(max_softmax({2}, 1000.0 * (1.0 + 1e-9)), 1.0, 1.0), PopulationDomainError);
  CHECK_NOTHROW(population_AB(max_softmax({2}, 1000.0), 1.0, 1.0));
}
