// Tests of the ridge fixture (equations/ridge.hpp): the generic solver against the closed form of
// docs/equations/ridge.md §4.8, an independent Marchenko-Pastur resolvent formula, continuation, and a direct
// finite-size ridge simulation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "equations/ridge.hpp"
#include "integrators/special.hpp"
#include "solver/curve.hpp"

using namespace saddle;

namespace {
// Independent route: with S = X^T X / D (X is N x D), the excess error of ridge is
// E = lambda^2 g'(-lambda) + Delta (g(-lambda) - lambda g'(-lambda)), with g the Stieltjes
// transform of S. S = alpha W, W = X^T X / N ~ Marchenko-Pastur with ratio y = 1/alpha.
double mp_ridge_error(double alpha, double lambda, double delta) {
  const double y = 1.0 / alpha;
  const double a = std::pow(1 - std::sqrt(y), 2), b = std::pow(1 + std::sqrt(y), 2);
  const int N = 20000;  // theta-midpoint rule (exponentially convergent for smooth integrands)
  double g = 0.0, gp = 0.0, mass = 0.0;
  std::vector<double> s(N), w(N);
  for (int j = 0; j < N; ++j) {
    double th = (j + 0.5) * kPi / N;
    s[j] = a + (b - a) * (1 - std::cos(th)) / 2;
    w[j] = (b - a) * (b - a) * std::sin(th) * std::sin(th) / (8 * N * s[j]) / (2 * kPi * y) * kPi;
    mass += w[j];
  }
  const double cont = std::min(1.0, alpha);  // continuous mass of W
  for (int j = 0; j < N; ++j) {
    double wj = w[j] * cont / mass, lam = alpha * s[j];
    g += wj / (lam + lambda);
    gp += wj / ((lam + lambda) * (lam + lambda));
  }
  if (alpha < 1) {  // atom of mass 1 - alpha at 0
    g += (1 - alpha) / lambda;
    gp += (1 - alpha) / (lambda * lambda);
  }
  return lambda * lambda * gp + delta * (g - lambda * gp);
}
}  // namespace

TEST_CASE("Ridge fixture: solver reproduces the closed form to 1e-9 from a cold start",
          "[ridge]") {
  SolverOptions opt;
  opt.tol = 1e-12;
  for (double alpha : {0.5, 1.0, 2.0, 4.0})
    for (double lambda : {0.01, 0.1, 1.0})
      for (double delta : {0.0, 0.25}) {
        ridge::Params p{alpha, lambda, delta};
        ridge::RidgeSystem sys(p);
        SolveResult r = solve(sys, ridge::RidgeSystem::cold_start(), opt);
        ridge::ClosedForm cf = ridge::closed_form(p);
        INFO("alpha=" << alpha << " lambda=" << lambda << " delta=" << delta);
        REQUIRE(r.summary.converged);
        CHECK(std::fabs(sys.evaluate(r.x).test_error - cf.test_error) < 1e-9);
        CHECK(std::fabs(r.x[0] - cf.m) < 1e-9);
        CHECK(std::fabs(r.x[2] - cf.V) < 1e-9);
        CHECK(std::fabs(sys.evaluate(r.x).train_error - cf.train_error) < 1e-9);
      }
}

TEST_CASE("Ridge closed form agrees with the Marchenko-Pastur resolvent formula", "[ridge]") {
  for (double alpha : {0.5, 1.0, 2.0, 4.0})
    for (double lambda : {0.05, 0.1, 1.0})
      for (double delta : {0.0, 0.25}) {
        INFO("alpha=" << alpha << " lambda=" << lambda << " delta=" << delta);
        CHECK(ridge::closed_form({alpha, lambda, delta}).test_error ==
              Approx(mp_ridge_error(alpha, lambda, delta)).epsilon(1e-8));
      }
}

TEST_CASE("Continuation in alpha reaches the same points, both directions", "[ridge]") {
  // The curve driver's warm continuation (one replicate) against the closed form.
  struct RidgeCurve : CurveModel {
    std::unique_ptr<FixedPointSystem> system(double a, int, int) const override {
      return std::make_unique<ridge::RidgeSystem>(ridge::Params{a, 0.1, 0.25});
    }
  } model;
  std::vector<double> alphas{0.5, 1.0, 1.5, 2.0, 3.0, 4.0};
  const auto names = ridge::RidgeSystem({1.0, 0.1, 0.25}).observable_names();
  const std::size_t k_test = std::find(names.begin(), names.end(), "test_error") - names.begin();
  REQUIRE(k_test < names.size());
  CurveOptions opt;
  opt.solver.tol = 1e-12;
  for (Direction dir : {Direction::Forward, Direction::Backward}) {
    const CurveStart st{"s", ridge::RidgeSystem::cold_start(), dir, true};
    const auto chain = run_curve(model, alphas, {st}, opt);
    REQUIRE(chain.size() == alphas.size());
    for (std::size_t i = 0; i < alphas.size(); ++i) {
      REQUIRE(chain[i].converged);
      CHECK(std::fabs(chain[i].values[k_test].mean - ridge::closed_form({alphas[i], 0.1, 0.25}).test_error) < 1e-9);
    }
  }
}

TEST_CASE("Ridge fixture agrees with a direct finite-size ridge regression", "[ridge][mc]") {
  // D = 400, alpha = 2, lambda = 0.1, Delta = 0.25; 8 draws; excess error |w - w*|^2 / D.
  const int D = 400, N = 800, draws = 8;
  const double lambda = 0.1, delta = 0.25;
  std::mt19937_64 rng(12345);
  std::normal_distribution<double> nd;
  std::vector<double> errs;
  for (int d = 0; d < draws; ++d) {
    Eigen::MatrixXd X(N, D);
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < D; ++j) X(i, j) = nd(rng);
    Eigen::VectorXd ws(D);
    for (int j = 0; j < D; ++j) ws[j] = nd(rng);
    ws *= std::sqrt(double(D)) / ws.norm();
    Eigen::VectorXd y = X * ws / std::sqrt(double(D));
    for (int i = 0; i < N; ++i) y[i] += std::sqrt(delta) * nd(rng);
    Eigen::MatrixXd A = X.transpose() * X / double(D);
    A.diagonal().array() += lambda;
    Eigen::VectorXd w = A.ldlt().solve(X.transpose() * y / std::sqrt(double(D)));
    errs.push_back((w - ws).squaredNorm() / D);
  }
  double mean = 0, ss = 0;
  for (double e : errs) mean += e / draws;
  for (double e : errs) ss += (e - mean) * (e - mean);
  double se = std::sqrt(ss / (draws - 1) / draws);
  double theory = ridge::closed_form({2.0, lambda, delta}).test_error;
  INFO("mc " << mean << " +- " << se << " theory " << theory);
  CHECK(std::fabs(mean - theory) < 4 * se + 2.0 / D);  // 4 s.e. plus an O(1/D) finite-size allowance
}
