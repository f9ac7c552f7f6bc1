// Toy fixed-point systems with known answers, shared by the tests of solver/ (cos map, slow
// linear map, divergent map, double well, sign flip).
#pragma once
#include <cmath>

#include "solver/fixed_point.hpp"
#include "solver/system.hpp"

namespace saddle_test {
using namespace saddle;
namespace {
// x = cos(x) componentwise scaled: fixed point of F(x) = (cos x0, 0.5 cos x1 + 0.1).
struct CosMap : FixedPointSystem {
  int dim() const override { return 2; }
  std::vector<std::string> names() const override { return {"a", "b"}; }
  Vec map(const Vec& x) const override {
    Vec f(2);
    f << std::cos(x[0]), 0.5 * std::cos(x[1]) + 0.1;
    return f;
  }
};
// F(x) = 1 - 2(x-1) + 0.3(x-1)^3: plain iteration diverges near x = 1 (|F'| = 2 > 1); the
// only real fixed point is x = 1.
struct Repelling : FixedPointSystem {
  double slope;
  explicit Repelling(double s) : slope(s) {}
  int dim() const override { return 1; }
  std::vector<std::string> names() const override { return {"x"}; }
  Vec map(const Vec& x) const override {
    Vec f(1);
    f << 1.0 - slope * (x[0] - 1.0) + 0.3 * std::pow(x[0] - 1.0, 3);
    return f;
  }
};
// A map with two stable fixed points x = +-sqrt(p) (F(x) = x + 0.2 (p x - x^3)); free energy
// (x^4/4 - p x^2/2) + 0.1 x favours the negative one.
struct DoubleWell : FixedPointSystem {
  double p;
  explicit DoubleWell(double pp) : p(pp) {}
  int dim() const override { return 1; }
  std::vector<std::string> names() const override { return {"x"}; }
  Vec map(const Vec& x) const override {
    Vec f(1);
    f << x[0] + 0.2 * (p * x[0] - x[0] * x[0] * x[0]);
    return f;
  }
  double free_energy(const Vec& x) const override {
    return std::pow(x[0], 4) / 4 - p * x[0] * x[0] / 2 + 0.1 * x[0];
  }
};
// A map that flips between two points: never converges, must be flagged stalled.
struct Flip : FixedPointSystem {
  int dim() const override { return 1; }
  std::vector<std::string> names() const override { return {"x"}; }
  Vec map(const Vec& x) const override {
    Vec f(1);
    f << (x[0] > 0 ? -1.0 : 1.0);
    return f;
  }
};
}  // namespace
}  // namespace saddle_test
