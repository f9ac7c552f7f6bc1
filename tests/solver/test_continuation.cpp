// Tests of solver/continuation: continuation in both directions and the branch rules.
#include <catch2/catch.hpp>

#include <cmath>

#include "solver/continuation.hpp"
#include "solver/curve.hpp"
#include "solver/fixed_point.hpp"

using namespace saddle;

#include "tests/solver/toy_systems.hpp"
using namespace saddle_test;

TEST_CASE("Continuation in both directions and branch selection", "[core][solver]") {
  std::vector<double> ps{0.5, 1.0, 1.5, 2.0};
  SystemFactory make = [](double p) { return std::make_unique<DoubleWell>(p); };
  SolverOptions opt;
  opt.tol = 1e-12;
  auto up = continuation(make, ps, Vec::Constant(1, 0.5), opt, Direction::Forward);
  auto down = continuation(make, ps, Vec::Constant(1, -2.0), opt, Direction::Backward);
  for (std::size_t i = 0; i < ps.size(); ++i) {
    CHECK(up[i].summary.converged);
    CHECK(down[i].summary.converged);
    CHECK(up[i].x[0] == Approx(std::sqrt(ps[i])).epsilon(1e-10));
    CHECK(down[i].x[0] == Approx(-std::sqrt(ps[i])).epsilon(1e-10));
  }
  std::vector<Branch> br{{"up", up}, {"down", down}};
  DoubleWell at(1.0);
  CHECK(preferred_branch(br, 1, at) == 1);  // the tilt +0.1 x favours the negative well
  CHECK(branches_differ(br[0], br[1], 1, 1e-6));
}
