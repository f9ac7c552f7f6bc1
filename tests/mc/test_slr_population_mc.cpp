// Tests of the Monte Carlo population risk (mc/slr_population_mc.*; docs/equations/slr_replica.md
// §6, (S6)-(S7), (S10), (S12)): field space and feature space against the linear closed forms
// within 4 s.e., and the two spaces against each other.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "integrators/special.hpp"
#include "mc/slr_population_mc.hpp"

using namespace saddle;
using namespace saddle::slr;

TEST_CASE("population MC: linear spiked (S10) and max nu = inf (S12), field and feature space",
          "[mc][slr]") {
  PopulationSetting s;
  s.task = Task::Spiked;
  s.lengths = {2};
  s.nu = 2.0;
  s.activation = Activation::Linear;
  // (S10): the optimum of linear attention, L = 2, at m_k = sqrt(nu)(L-1)/L, m_v = B/A.
  const double L = 2, mk = std::sqrt(s.nu) * (L - 1) / L;
  const double A = L + 2 * mk * std::sqrt(s.nu) + mk * mk * (L + s.nu), B = 1 + mk * std::sqrt(s.nu);
  const double want = L * (L - 1) / (L * L + s.nu * (L - 1));
  for (int D : {0, 16}) {
    PopulationMcOptions o;
    o.samples = 60000;
    o.D = D;
    o.seed = 7 + D;
    const auto r = population_mc(s, mk, mk * mk, B / A, B * B / (A * A), o);
    INFO("D = " << D);
    CHECK(std::abs(r.risk.mean - want) < 4 * r.risk.se);
  }
  PopulationSetting m = s;
  m.task = Task::Max;
  m.nu = std::numeric_limits<double>::infinity();
  const double mu1 = 1.0 / std::sqrt(kPi);  // E max of two N(0,1)
  PopulationMcOptions o;
  o.samples = 60000;
  const auto r = population_mc(m, mu1, mu1 * mu1, 0.5, 0.25, o);
  CHECK(std::abs(r.risk.mean - (0.5 - 0.5 / kPi)) < 4 * r.risk.se);
  CHECK(std::abs(r.bayes.mean) < 1e-12);  // nu = inf: the location is known from chi*
}
