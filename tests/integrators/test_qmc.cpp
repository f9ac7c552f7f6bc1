// Tests of integrators/qmc: the randomly shifted Sobol estimate and its standard error (coverage
// of a closed-form mean).
#include <catch2/catch.hpp>

#include <cmath>
#include <thread>
#include <vector>

#include "integrators/qmc.hpp"
#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"

using namespace saddle;

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
