// Tests of solver/fixed_point: damped and Anderson iterations on maps with known fixed points,
// the Newton polish on a map whose plain iteration diverges, stall detection, the Newton path.
#include <catch2/catch.hpp>

#include <cmath>

#include "solver/curve.hpp"
#include "solver/fixed_point.hpp"

using namespace saddle;

#include "tests/solver/toy_systems.hpp"
using namespace saddle_test;

TEST_CASE("Damped and Anderson iterations find the fixed point", "[core][solver]") {
  // Dottie number: the root of cos x = x.
  const double dottie = 0.7390851332151607;
  CosMap sys;
  for (Method m : {Method::Damped, Method::Anderson}) {
    SolverOptions opt;
    opt.method = m;
    opt.tol = 1e-13;
    opt.newton_polish = false;
    SolveResult r = solve(sys, Vec::Zero(2), opt);
    CHECK(r.summary.converged);
    CHECK(r.summary.reason == Termination::Tolerance);
    CHECK(r.summary.residual <= 1e-13);
    CHECK(r.x[0] == Approx(dottie).epsilon(1e-12));
    // b = 0.5 cos b + 0.1: check the defining equation, not a copied value.
    CHECK(r.x[1] - 0.5 * std::cos(r.x[1]) - 0.1 == Approx(0.0).margin(1e-12));
  }
}

TEST_CASE("Anderson needs fewer iterations than damped on a slow linear map", "[core][solver]") {
  struct Slow : FixedPointSystem {
    int dim() const override { return 3; }
    std::vector<std::string> names() const override { return {"a", "b", "c"}; }
    Vec map(const Vec& x) const override {
      Eigen::Matrix3d A;
      A << 0.95, 0.01, 0.0, 0.0, 0.9, 0.02, 0.01, 0.0, 0.97;
      return A * x + Eigen::Vector3d(1.0, 2.0, 3.0);
    }
  } sys;
  SolverOptions d, a;
  d.method = Method::Damped;
  d.mix = 1.0;
  d.newton_polish = false;
  a = d;
  a.method = Method::Anderson;
  SolveResult rd = solve(sys, Vec::Zero(3), d), ra = solve(sys, Vec::Zero(3), a);
  CHECK(rd.summary.converged);
  CHECK(ra.summary.converged);
  CHECK(ra.summary.iterations * 5 < rd.summary.iterations);
  Eigen::Matrix3d A;
  A << 0.95, 0.01, 0.0, 0.0, 0.9, 0.02, 0.01, 0.0, 0.97;
  Eigen::Vector3d exact = (Eigen::Matrix3d::Identity() - A).lu().solve(Eigen::Vector3d(1, 2, 3));
  CHECK((ra.x - exact).cwiseAbs().maxCoeff() < 1e-8);
}

TEST_CASE("Newton polish converges where the plain iteration diverges", "[core][solver]") {
  Repelling sys(2.0);
  SolverOptions opt;
  opt.method = Method::Damped;
  opt.mix = 1.0;
  opt.max_iter = 20;
  opt.newton_polish = false;
  SolveResult plain = solve(sys, Vec::Constant(1, 1.2), opt);
  CHECK_FALSE(plain.summary.converged);
  opt.newton_polish = true;
  SolveResult pol = solve(sys, Vec::Constant(1, 1.2), opt);
  CHECK(pol.summary.converged);
  CHECK(pol.summary.reason == Termination::Newton);
  CHECK(pol.x[0] == Approx(1.0).epsilon(1e-10));
}

TEST_CASE("A limit cycle is flagged as stalled, not converged", "[core][solver]") {
  Flip sys;
  SolverOptions opt;
  opt.method = Method::Damped;
  opt.mix = 1.0;
  opt.stall_window = 20;
  SolveResult r = solve(sys, Vec::Constant(1, 0.5), opt);
  CHECK_FALSE(r.summary.converged);
  CHECK(r.summary.stalled);
  CHECK(r.summary.reason == Termination::Stalled);
  CHECK(to_string(r.summary.reason) == "stalled");
  CHECK(r.x[0] == Approx(0.0).margin(1e-12));  // mean of the last 20 iterates of +-1
  CHECK(r.summary.amplitude == Approx(2.0).epsilon(1e-15));  // the cycle -1 <-> +1
}


namespace {
// F(x) = cos(x) componentwise with its Jacobian diag(-sin x): Newton converges quadratically.
struct CosWithJacobian : FixedPointSystem {
  int dim() const override { return 2; }
  std::vector<std::string> names() const override { return {"a", "b"}; }
  Vec map(const Vec& x) const override { return x.array().cos(); }
  bool map_jacobian(const Vec& x, Vec& fx, Eigen::MatrixXd& J) const override {
    fx = map(x);
    J = (-x.array().sin()).matrix().asDiagonal();
    return true;
  }
};
}  // namespace

TEST_CASE("Newton path: few passes with a Jacobian, Anderson fallback without", "[core][solver]") {
  const double dottie = 0.7390851332151607;
  SolverOptions opt;
  opt.method = Method::Newton;
  opt.tol = 1e-13;
  opt.newton_polish = false;
  CosWithJacobian with;
  SolveResult r = solve(with, Vec::Zero(2), opt);
  CHECK(r.summary.converged);
  CHECK(r.summary.path == Method::Newton);
  CHECK(r.summary.iterations <= 7);  // quadratic convergence from 0
  CHECK(r.x[0] == Approx(dottie).epsilon(1e-12));
  CosMap without;  // no Jacobian: the Anderson iteration does the work
  SolveResult a = solve(without, Vec::Zero(2), opt);
  CHECK(a.summary.converged);
  CHECK(a.summary.path == Method::Anderson);
  CHECK(a.x[0] == Approx(dottie).epsilon(1e-12));
  CHECK(parse_method("newton") == Method::Newton);
}

namespace {
// F(x) = c / x (fixed point sqrt(c), |F'| = 1 there: the plain iteration oscillates), with a
// chart z = log x and the relative residual R = (x - F(x))/x = 1 - c/x^2, dR/dz = 2c/x^2.
// Records the smallest x it was evaluated at.
struct Reciprocal : FixedPointSystem {
  double c;
  mutable double min_x = 1e300;
  explicit Reciprocal(double cc) : c(cc) {}
  int dim() const override { return 1; }
  std::vector<std::string> names() const override { return {"x"}; }
  Vec map(const Vec& x) const override {
    min_x = std::min(min_x, x[0]);
    return Vec::Constant(1, c / x[0]);
  }
  double residual_norm(const Vec& x, const Vec& fx) const override { return std::fabs(x[0] - fx[0]) / x[0]; }
  bool chart_residual(const Vec& x, Vec& R, Eigen::MatrixXd& J, double& norm) const override {
    min_x = std::min(min_x, x[0]);
    R = Vec::Constant(1, 1.0 - c / (x[0] * x[0]));
    J = Eigen::MatrixXd::Constant(1, 1, 2.0 * c / (x[0] * x[0]));
    norm = std::fabs(R[0]);
    return true;
  }
  void to_chart(const Vec& x, Vec& z) const override { z = x.array().log(); }
  void from_chart(const Vec& z, Vec& x) const override { x = z.array().exp(); }
};
}  // namespace

TEST_CASE("Newton in a model's chart: admissible steps, the model's norm, damped fallback", "[core][solver]") {
  SolverOptions opt;
  opt.method = Method::Newton;
  opt.tol = 1e-13;
  opt.newton_steps = 200;
  opt.newton_halvings = 30;
  {
    // From x = 1e-6 (residual ~ 4e12): Newton in log x never leaves x > 0 and converges.
    const Reciprocal sys(4.0);
    const SolveResult r = solve(sys, Vec::Constant(1, 1e-6), opt);
    CHECK(r.summary.converged);
    CHECK(r.summary.path == Method::Newton);
    CHECK(r.x[0] == Approx(2.0).epsilon(1e-12));
    CHECK(r.summary.residual <= 1e-13);  // the model's relative norm
    CHECK(r.summary.steps > 0);
    CHECK(r.summary.steps <= 60);
    CHECK(sys.min_x > 0.0);
  }
  {
    // No Newton step allowed (one evaluation): the damped fallback (Heron's iteration at mix
    // 1/2) converges, and its updates are the steps.
    SolverOptions o = opt;
    o.newton_steps = 1;
    o.newton_fallback = Method::Damped;
    o.mix = 0.5;
    const Reciprocal sys(9.0);
    const SolveResult r = solve(sys, Vec::Constant(1, 1.0), o);
    CHECK(r.summary.converged);
    CHECK(r.summary.path == Method::Damped);
    CHECK(r.x[0] == Approx(3.0).epsilon(1e-12));
    CHECK(r.summary.steps >= 3);
    CHECK(r.summary.steps < 20);
  }
  {
    // max_iter caps the chart's Newton steps and the fallback together.
    SolverOptions o = opt;
    o.max_iter = 2;
    const Reciprocal sys(4.0);
    const SolveResult r = solve(sys, Vec::Constant(1, 1e-6), o);
    CHECK_FALSE(r.summary.converged);
    CHECK(r.summary.steps == 2);
  }
}
