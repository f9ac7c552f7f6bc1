// Tests of the field-space sampler of SLR (mc/slr_sample.*; docs/equations/slr_population.md §1.2-§1.5,
// (S4), (S9)): the laws of eps*, chi*, z*, y against their means within 4 s.e., the inverse-cdf
// location of max-SLR, and the Bayes posterior.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "integrators/estimate.hpp"
#include "mc/slr_sample.hpp"

using namespace saddle;
using namespace saddle::slr;

TEST_CASE("field sampler: spiked chi*_eps ~ N(sqrt(nu), 1), others N(0, 1), y = z*_eps + noise",
          "[mc][slr]") {
  FieldSampler s(Task::Spiked, {3}, 2.0, 0.5);
  Rng rng(3, 0, 0);
  FieldDraw d;
  std::vector<double> at, other, resid2;
  for (int n = 0; n < 20000; ++n) {
    s.draw(rng, d);
    REQUIRE(d.L == 3);
    for (int l = 0; l < 3; ++l) (l == d.eps ? at : other).push_back(d.chi_star[l]);
    resid2.push_back((d.y - d.z_star[d.eps]) * (d.y - d.z_star[d.eps]));
  }
  const auto a = summarize(at), o = summarize(other), r = summarize(resid2);
  CHECK(std::abs(a.mean - std::sqrt(2.0)) < 4 * a.se);
  CHECK(std::abs(o.mean) < 4 * o.se);
  CHECK(std::abs(r.mean - 0.5) < 4 * r.se);  // variance Delta (S4)
}

TEST_CASE("field sampler: max-SLR location by the inverse cdf of softmax(nu chi*)", "[mc][slr]") {
  const double chi[3] = {0.2, -0.5, 1.0};
  // nu = inf: the argmax, whatever U
  for (double U : {1e-9, 0.5, 1 - 1e-9})
    CHECK(draw_max_location(3, chi, std::numeric_limits<double>::infinity(), U) == 2);
  // finite nu: the smallest l with cumulative p >= U
  const double nu = 1.3;
  double p[3], z = 0;
  for (int l = 0; l < 3; ++l) z += std::exp(nu * chi[l]);
  for (int l = 0; l < 3; ++l) p[l] = std::exp(nu * chi[l]) / z;
  CHECK(draw_max_location(3, chi, nu, 0.5 * p[0]) == 0);
  CHECK(draw_max_location(3, chi, nu, p[0] + 0.5 * p[1]) == 1);
  CHECK(draw_max_location(3, chi, nu, p[0] + p[1] + 0.5 * p[2]) == 2);
  // the Bayes posterior (S9) is that softmax (spiked: c_nu = sqrt(nu))
  double q[3];
  location_posterior(Task::Max, nu, chi, 3, q);
  for (int l = 0; l < 3; ++l) CHECK(q[l] == Approx(p[l]).epsilon(1e-14));
  location_posterior(Task::Max, std::numeric_limits<double>::infinity(), chi, 3, q);
  CHECK(q[2] == 1.0);
  CHECK(q[0] + q[1] == 0.0);
}

TEST_CASE("field sampler: variable length uniform on the set; bad settings throw", "[mc][slr]") {
  FieldSampler s(Task::Spiked, {1, 2, 5}, 1.0);
  Rng rng(5, 0, 0);
  int count[6] = {0};
  const int n = 30000;
  for (int k = 0; k < n; ++k) ++count[s.draw_L(rng)];
  for (int L : {1, 2, 5}) CHECK(std::abs(count[L] / double(n) - 1.0 / 3) < 4 * std::sqrt(2.0 / 9 / n));
  CHECK_THROWS_AS(FieldSampler(Task::Spiked, {}, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(FieldSampler(Task::Spiked, {2}, std::numeric_limits<double>::infinity()),
                  std::invalid_argument);
  CHECK_THROWS_AS(FieldSampler(Task::Max, {2}, -1.0), std::invalid_argument);
}
