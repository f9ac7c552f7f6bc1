// Ridge classifier of a sign teacher (equations/ridge_classifier.hpp, docs/equations/ridge.md §C):
// the fixed point reached by the curve driver against the closed form (RC5), against the ridge
// fixture through the label-moment equivalence, the no-information limit, and a direct simulation.
#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "equations/ridge.hpp"
#include "equations/ridge_classifier.hpp"
#include "integrators/estimate.hpp"
#include "solver/curve.hpp"

using namespace saddle;
namespace rc = saddle::ridge_classifier;

namespace {
std::vector<CurvePoint> curve(double lambda, double flip, const std::vector<double>& alphas) {
  ParamValues pv;
  pv.set("lambda", lambda);
  pv.set("flip", flip);
  rc::Model model(pv);
  CurveOptions opt;
  opt.solver.tol = 1e-12;
  return run_curve(model, alphas, rc::Model::starts(pv), opt);
}
// A curve point's entry by the name the model gives it (unknowns, then observables).
double get(const CurvePoint& p, const std::string& name) {
  const rc::System sys({1.0, 0.1, 0.0});
  std::vector<std::string> names = sys.names();
  for (const auto& n : sys.observable_names()) names.push_back(n);
  for (std::size_t j = 0; j < names.size(); ++j)
    if (names[j] == name) return p.entry(j).mean;
  FAIL("no entry " << name);
  return 0.0;
}
}  // namespace

TEST_CASE("ridge classifier: curve driver reaches the closed form (RC5)", "[ridge_classifier]") {
  const std::vector<double> alphas{0.3, 0.9, 1.0, 1.7, 4.0, 12.0};
  for (double lambda : {1e-3, 0.1, 2.0})
    for (double flip : {0.0, 0.2}) {
      const auto pts = curve(lambda, flip, alphas);
      REQUIRE(pts.size() == alphas.size());
      for (const CurvePoint& p : pts) {
        const rc::ClosedForm cf = rc::closed_form({p.param, lambda, flip});
        CHECK(p.converged);
        CHECK(get(p, "m") == Approx(cf.m).margin(1e-8));
        CHECK(get(p, "q") == Approx(cf.q).margin(1e-8));
        CHECK(get(p, "V") == Approx(cf.V).margin(1e-8));
      }
    }
}

TEST_CASE("ridge classifier: equals ridge regression on a rescaled teacher", "[ridge_classifier]") {
  // A square loss sees only E[y z] = kappa and E[y^2] = 1: y = kappa z + e with Var e = 1 - kappa^2,
  // i.e. kappa times a ridge problem with unit teacher and noise Delta = 1/kappa^2 - 1, so
  // m = kappa m_ridge, q = kappa^2 q_ridge, V = V_ridge (closed form of the ridge fixture).
  for (double alpha : {0.5, 2.0, 6.0})
    for (double flip : {0.0, 0.1, 0.3}) {
      const double k = rc::kappa(flip), lambda = 0.3;
      const ridge::ClosedForm r = ridge::closed_form({alpha, lambda, 1.0 / (k * k) - 1.0});
      const rc::ClosedForm c = rc::closed_form({alpha, lambda, flip});
      CHECK(c.m == Approx(k * r.m).epsilon(1e-12));
      CHECK(c.q == Approx(k * k * r.q).epsilon(1e-12));
      CHECK(c.V == Approx(r.V).epsilon(1e-12));
    }
}

TEST_CASE("ridge classifier: labels without information give chance error", "[ridge_classifier]") {
  const auto pts = curve(0.1, 0.5, {0.5, 3.0});
  for (const CurvePoint& p : pts) {
    CHECK(get(p, "m") == Approx(0.0).margin(1e-12));
    CHECK(get(p, "class_error") == Approx(0.5).margin(1e-9));
  }
}

TEST_CASE("ridge classifier: direct simulation at D = 400 agrees", "[ridge_classifier][mc]") {
  // Ridge on sign labels with 10% flips, alpha = 2, lambda = 0.1: m, q and the classification error
  // of the minimiser (normal equations) over 8 seeds, against the fixed point, within 4 s.e. plus
  // an O(1/D) finite-size allowance.
  const int D = 400, N = 800, seeds = 8;
  const double lambda = 0.1, flip = 0.1;
  std::vector<double> ms, qs, es;
  for (int s = 0; s < seeds; ++s) {
    std::mt19937_64 gen(1000 + s);
    std::normal_distribution<double> g;
    std::uniform_real_distribution<double> u;
    Eigen::VectorXd w0(D);
    for (int i = 0; i < D; ++i) w0[i] = g(gen);
    w0 *= std::sqrt(double(D)) / w0.norm();
    Eigen::MatrixXd X(N, D);
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < D; ++j) X(i, j) = g(gen);
    Eigen::VectorXd y(N);
    const Eigen::VectorXd z = X * w0 / std::sqrt(double(D));
    for (int i = 0; i < N; ++i) y[i] = (z[i] >= 0 ? 1.0 : -1.0) * (u(gen) < flip ? -1.0 : 1.0);
    Eigen::MatrixXd A = X.transpose() * X / double(D);
    A.diagonal().array() += lambda;
    const Eigen::VectorXd w = A.ldlt().solve(X.transpose() * y / std::sqrt(double(D)));
    const double m = w.dot(w0) / D, q = w.squaredNorm() / D;
    ms.push_back(m);
    qs.push_back(q);
    es.push_back(std::acos(m / std::sqrt(q)) / kPi);
  }
  const rc::ClosedForm cf = rc::closed_form({double(N) / D, lambda, flip});
  const rc::Values th = rc::values_at({double(N) / D, lambda, flip}, cf.m, cf.q, cf.V);
  const Estimate m = summarize(ms), q = summarize(qs), e = summarize(es);
  CHECK(std::fabs(m.mean - cf.m) < 4 * m.se + 0.01);
  CHECK(std::fabs(q.mean - cf.q) < 4 * q.se + 0.01);
  CHECK(std::fabs(e.mean - th.class_error) < 4 * e.se + 0.01);
}
