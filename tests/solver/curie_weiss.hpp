// Test fixture (not a subcommand): the Curie-Weiss mean-field magnet, m = tanh(beta (J m + h)),
// continuation in beta, written as a model of the generic path (FixedPointSystem, CurveModel,
// ModelCard) the way docs/adding_a_model.md describes. It has a pitchfork bifurcation at
// beta J = 1 (h = 0): below it m = 0 is the only solution and attracts the iteration
// (|F'(0)| = beta J < 1); above it m = 0 is still an exact fixed point but repels the iteration
// (|F'(0)| = beta J > 1) and the physical solutions are the two non-zero roots, which have the
// lower free energy
//   f(m) = J m^2 / 2 - (1/beta) log(2 cosh(beta (J m + h)))   (stationary exactly at the roots).
#pragma once
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "solver/curve.hpp"
#include "solver/model_card.hpp"
#include "solver/system.hpp"

namespace saddle_test {
namespace curie_weiss {
using namespace saddle;

struct System : FixedPointSystem {
  double beta, J, h;
  bool with_jacobian;
  System(double b, double j, double hh, bool jac) : beta(b), J(j), h(hh), with_jacobian(jac) {}
  int dim() const override { return 1; }
  std::vector<std::string> names() const override { return {"m"}; }
  Vec map(const Vec& x) const override {
    Vec f(1);
    f[0] = std::tanh(beta * (J * x[0] + h));
    return f;
  }
  bool map_jacobian(const Vec& x, Vec& fx, Eigen::MatrixXd& Jm) const override {
    if (!with_jacobian) return false;
    fx = map(x);
    Jm.resize(1, 1);
    Jm(0, 0) = beta * J * (1.0 - fx[0] * fx[0]);
    return true;
  }
  std::vector<std::string> observable_names() const override { return {"free_energy"}; }
  Vec observables(const Vec& x) const override {
    Vec o(1);
    o[0] = free_energy(x);
    return o;
  }
  double free_energy(const Vec& x) const override {
    const double m = x[0];
    return 0.5 * J * m * m - std::log(2.0 * std::cosh(beta * (J * m + h))) / beta;
  }
};

// Starts: "low" forward from m = m0_low (0: exactly the symmetric solution), "high" backward
// from m = 1 at the largest beta. `escape` (CurveStart::escape) is given to the low start.
class Model : public CurveModel {
 public:
  explicit Model(const ParamValues& p) : J_(p("J")), h_(p("h")) {}
  Model(double J, double h, bool jacobian) : J_(J), h_(h), jacobian_(jacobian) {}
  std::unique_ptr<FixedPointSystem> system(double beta, int, int) const override {
    return std::make_unique<System>(beta, J_, h_, jacobian_);
  }
  double free_energy(const CurvePoint& p) const override { return p.values[0].mean; }
  bool distinct(const CurvePoint& a, const CurvePoint& b) const override {
    return std::fabs(a.x[0].mean - b.x[0].mean) > 1e-6;
  }
  static CurveStart low(double m0 = 0.0, double escape = 0.0) {
    CurveStart s;
    s.label = "low";
    s.x0 = Vec::Constant(1, m0);
    s.escape = escape;
    return s;
  }
  static CurveStart high() {
    CurveStart s;
    s.label = "high";
    s.x0 = Vec::Constant(1, 1.0);
    s.direction = Direction::Backward;
    return s;
  }
  static std::vector<CurveStart> starts(const ParamValues&) { return {low(), high()}; }
  static ModelCard card() {
    ModelCard c;
    c.command = "curie-weiss";
    c.summary = "Curie-Weiss mean field m = tanh(beta (J m + h)) (test fixture)";
    c.equations = "tests/solver/curie_weiss.hpp";
    c.params = {{"beta", "0.5:2:4", interval_domain(0.01, 100), "Inverse temperature beta"},
                {"J", "1", interval_domain(0.0, 10), "Coupling J"},
                {"h", "0", interval_domain(-10, 10), "Field h"}};
    c.continuation = "beta";
    c.plot_y = "m";
    return c;
  }

 private:
  double J_ = 1, h_ = 0;
  bool jacobian_ = true;
};

// The largest root of m = tanh(beta J m) (h = 0) by bisection on (0, 1]: an independent
// computation (0 for beta J <= 1).
inline double positive_root(double beta, double J) {
  if (beta * J <= 1.0) return 0.0;
  double lo = 1e-12, hi = 1.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (std::tanh(beta * J * mid) - mid > 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace curie_weiss
}  // namespace saddle_test
