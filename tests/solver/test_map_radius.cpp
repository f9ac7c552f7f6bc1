// solver/map_radius: the spectral radius of dF/dx against linear maps with known eigenvalues,
// with and without the system's Jacobian (finite differences), and the leading direction.
#include <catch2/catch.hpp>

#include "solver/map_radius.hpp"
#include "tests/solver/curie_weiss.hpp"

using namespace saddle;

namespace {
// F(x) = A x + b with A = [[0.5, 2], [0, -1.5]]: eigenvalues 0.5 and -1.5, the latter with
// eigenvector (2, -2)/... = (-1, 1) direction: A v = -1.5 v for v = (1, -1).
struct Linear : FixedPointSystem {
  int dim() const override { return 2; }
  std::vector<std::string> names() const override { return {"a", "b"}; }
  Vec map(const Vec& x) const override {
    Vec f(2);
    f << 0.5 * x[0] + 2.0 * x[1] + 1.0, -1.5 * x[1] - 3.0;
    return f;
  }
};
// A rotation by 90 degrees scaled by 0.8: complex eigenvalues +-0.8 i.
struct Rotation : FixedPointSystem {
  int dim() const override { return 2; }
  std::vector<std::string> names() const override { return {"a", "b"}; }
  Vec map(const Vec& x) const override {
    Vec f(2);
    f << -0.8 * x[1], 0.8 * x[0];
    return f;
  }
};
}  // namespace

TEST_CASE("map radius: eigenvalues of a linear map by finite differences", "[core][solver]") {
  const Linear sys;
  const MapSpectrum s = map_spectrum(sys, Vec::Zero(2));
  CHECK(s.finite_differences);
  CHECK(s.radius == Approx(1.5).epsilon(1e-8));
  // (1, -1) scaled so that its largest entry is +1 (either entry has |.| = 1: the first is kept).
  CHECK(std::fabs(s.direction[0]) == Approx(1.0).epsilon(1e-8));
  CHECK(s.direction[0] + s.direction[1] == Approx(0.0).margin(1e-8));
  CHECK(map_spectrum(Rotation{}, Vec::Ones(2)).radius == Approx(0.8).epsilon(1e-8));
}

TEST_CASE("map radius: the model's Jacobian when it has one, finite differences otherwise",
          "[core][solver]") {
  using saddle_test::curie_weiss::System;
  // F'(m) = beta J (1 - tanh^2): at m = 0 exactly beta J.
  for (bool jac : {true, false}) {
    const System sys(1.7, 1.0, 0.0, jac);
    const MapSpectrum s = map_spectrum(sys, Vec::Zero(1));
    CHECK(s.finite_differences == !jac);
    CHECK(s.radius == Approx(1.7).epsilon(1e-8));
    CHECK(s.direction[0] == 1.0);
  }
  // At the non-zero root m*: F'(m*) = beta J (1 - m*^2) < 1.
  const double m = saddle_test::curie_weiss::positive_root(1.7, 1.0);
  const System sys(1.7, 1.0, 0.0, false);
  CHECK(map_spectrum(sys, Vec::Constant(1, m)).radius == Approx(1.7 * (1 - m * m)).epsilon(1e-7));
}
