// Tests of equations/slr_population_elementwise (docs/equations/slr_population.md §3.3 (S7a),
// (S30a)): the density of chi*_{eps*} at large nu (normalisation, and its mean against
// mu_1 = nu E_Bayes by Stein's lemma (S11), computed by the independent 1-D (S27a)), erf attention
// at the edges of its domain (refinement), the linear closed forms at large overlaps.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "equations/slr_population.hpp"
#include "tests/equations/slr_population_setting.hpp"
#include "equations/slr_population_internal.hpp"

using namespace saddle;
using namespace saddle::slr;
using namespace saddle::slr::testing;

TEST_CASE("slr population element-wise: density of chi*_eps* at nu up to 1e3", "[slr][population]") {
  for (double nu : {100.0, 1000.0})
    for (int L : {2, 4}) {
      const auto D = detail::tilt_density(nu, L, PopulationAccuracy{});
      double norm = 0.0, mean = 0.0;
      for (int k = 0; k < D->x.n; ++k) {
        norm += D->f[k] * D->x.h;
        mean += D->f[k] * D->x.at(k) * D->x.h;
      }
      INFO("nu=" << nu << " L=" << L);
      CHECK(norm == Approx(1.0).epsilon(1e-9));
      CHECK(mean == Approx(nu * bayes_risk(Task::Max, {L}, nu)).epsilon(1e-8));  // (S11), Stein
      CHECK(max_mu1(L, nu) == Approx(mean).epsilon(1e-14));
    }
}

TEST_CASE("slr population element-wise: erf at the edges of its domain", "[slr][population]") {
  const PopulationAccuracy def{}, fine = def.refined(2.0);
  // max-SLR: |m_k| <= 10 sqrt(1 + 2 (q_k - m_k^2)) (the step 1 + erf(b + m x) against the density
  // grid); spiked: q_k <= 1e6
  struct Case {
    Task t;
    double nu, m, q;
  };
  const std::vector<Case> cases{{Task::Max, 1000.0, 10.0, 100.0},
                                {Task::Max, 2.0, 30.0, 904.0},   // r^2 = 4: bound 30
                                {Task::Max, kPopulationMaxNu, 0.5, 1e6},
                                {Task::Spiked, 1000.0, 30.0, 1e6},
                                {Task::Spiked, 2.0, 0.0, 1e6}};
  for (const auto& c : cases) {
    const PopulationSetting s = setting(c.t, {3}, c.nu, Activation::Erf, -0.7);
    const ABDetail a = population_AB_detail(s, c.m, c.q, def);
    const ABDetail b = population_AB_detail(s, c.m, c.q, fine);
    INFO(to_string(c.t) << " nu=" << c.nu << " m=" << c.m << " q=" << c.q);
    CHECK(a.A == Approx(b.A).epsilon(1e-9));
    CHECK(a.B == Approx(b.B).epsilon(1e-9));
  }
  CHECK_THROWS_AS(population_AB(setting(Task::Max, {3}, 2.0, Activation::Erf), 10.001, 10.001 * 10.001),
                  PopulationDomainError);
  CHECK_THROWS_AS(population_AB(setting(Task::Max, {3}, 2.0, Activation::Erf), 200.0, 4e4),  // old domain: 1e-3 off
                  PopulationDomainError);
  CHECK_THROWS_AS(population_AB(setting(Task::Spiked, {3}, 2.0, Activation::Erf), 1.0, 1e6 * 1.001),
                  PopulationDomainError);
}

TEST_CASE("slr population element-wise: linear attention at large overlaps", "[slr][population]") {
  // spiked (S7a): A = (1 + mu)^2 + q + (L - 1)(1 + q), B = 1 + mu, mu = m sqrt(nu); max: A = L(1 + q),
  // B = 1 + m mu_1 (the density mean), for any overlaps of the domain (q_k <= 1e100)
  const double m = 1e40, q = 2e80;
  const AB sp = population_AB(setting(Task::Spiked, {3}, 4.0, Activation::Linear), m, q);
  CHECK(sp.A == Approx((1.0 + 2.0 * m) * (1.0 + 2.0 * m) + q + 2.0 * (1.0 + q)).epsilon(1e-14));
  CHECK(sp.B == Approx(1.0 + 2.0 * m).epsilon(1e-14));
  const AB mx = population_AB(setting(Task::Max, {3}, 1000.0, Activation::Linear), -m, q);
  CHECK(mx.A == Approx(3.0 * (1.0 + q)).epsilon(1e-14));
  CHECK(mx.B == Approx(1.0 - m * max_mu1(3, 1000.0)).epsilon(1e-12));
  CHECK_THROWS_AS(population_AB(setting(Task::Spiked, {3}, 4.0, Activation::Linear), 1e50, 1e101),
                  PopulationDomainError);
}
