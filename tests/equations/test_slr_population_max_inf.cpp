// Tests of equations/slr_population_max_inf (docs/equations/slr_population.md §7a, nu = inf):
// max-SLR B of softmax at nu = inf with key noise (the X-representation with the log-normal table)
// and at large m_k. Reference: at L = 2, B = 2 E[1{d > 0} E_eta sig(m d + r sqrt(2) eta)],
// d ~ N(0, 2), by nested GSL adaptive quadrature on d > 0 (written here); refinement.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "equations/slr_population.hpp"
#include "tests/equations/slr_population_setting.hpp"
#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"

using namespace saddle;
using namespace saddle::slr;
using namespace saddle::slr::testing;

namespace {

PopulationSetting max_inf(std::vector<int> Ls, Activation a = Activation::Softmax) {
  return setting(Task::Max, std::move(Ls), kInfty, a);
}

double B_L2_inf(double m, double q) {
  const double r = std::sqrt(std::max(0.0, q - m * m)), sd = r * std::sqrt(2.0);
  // G(mu) = E sigma(mu + sd eta) = P(l < mu + sd eta), l logistic: for sd > 1 as the smooth
  // int sigma'(l) Phi((mu - l)/sd) dl (the sharp logistic step in eta is hard to sample)
  auto G = [&](double mu) {
    if (sd == 0.0) return sigmoid(mu);
    if (sd > 1.0)
      return integrate_adaptive([&](double l) { return sigmoid(l) * sigmoid(-l) * norm_cdf((mu - l) / sd); },
                                -60.0, 60.0, 1e-15, 1e-12)
          .value;
    return integrate_adaptive([&](double e) { return norm_pdf(e) * sigmoid(mu + sd * e); }, -12.0, 12.0,
                              1e-15, 1e-12)
        .value;
  };
  auto f = [&](double x) { return norm_pdf(x) * G(m * std::sqrt(2.0) * x); };
  const double w = 1.0 / std::max(m, 1.0);
  double s = 0.0;
  const std::vector<double> br{0.0, 5.0 * w, 60.0 * w, 12.0};
  for (std::size_t i = 0; i + 1 < br.size(); ++i)
    if (br[i + 1] > br[i]) s += integrate_adaptive(f, br[i], br[i + 1], 1e-15, 1e-12).value;
  return 2.0 * s;
}

}  // namespace

TEST_CASE("slr population max nu = inf: L = 2 B with key noise against nested quadrature", "[slr][population]") {
  // (before the log-normal table, q = 1000, m = 30 gave B = 0.489 instead of 0.897)
  struct Case {
    double m, q;
  };
  const std::vector<Case> cases{{0.9, 1.57}, {30.0, 1000.0}, {3.0, 1e4}, {100.0, 1e6}, {300.0, 9e4}, {1000.0, 1e6}};
  for (const auto& c : cases) {
    const ABDetail d = population_AB_detail(max_inf({2}), c.m, c.q, PopulationAccuracy{});
    INFO("m=" << c.m << " q=" << c.q);
    CHECK(d.B == Approx(B_L2_inf(c.m, c.q)).epsilon(0).margin(5e-10));
  }
}

TEST_CASE("slr population max nu = inf: refinement with key noise and at large m_k", "[slr][population]") {
  const PopulationAccuracy def{}, fine = def.refined(2.0);
  struct Case {
    std::vector<int> Ls;
    double m, q;
  };
  const std::vector<Case> cases{{{3, 100}, 30.0, 1000.0}, {{2}, 300.0, 9.01e4}, {{4}, 1000.0, 1e6}};
  for (const auto& c : cases) {
    const ABDetail a = population_AB_detail(max_inf(c.Ls), c.m, c.q, def);
    const ABDetail b = population_AB_detail(max_inf(c.Ls), c.m, c.q, fine);
    INFO("m=" << c.m << " q=" << c.q);
    CHECK(a.B == Approx(b.B).epsilon(1e-9));
    CHECK(a.A == Approx(b.A).epsilon(1e-10));
  }
  // normalised softplus at nu = inf: its own (smaller) domain
  CHECK_NOTHROW(check_population_domain(max_inf({2}, Activation::Softplus), 10.0, kPopulationMaxQkSoftplusMaxInf));
  CHECK_THROWS_AS(population_AB(max_inf({2}, Activation::Softplus), 10.0, kPopulationMaxQkSoftplusMaxInf * 1.001),
                  PopulationDomainError);
}
