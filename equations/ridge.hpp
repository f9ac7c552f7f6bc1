// Fixture model with a known answer: ridge regression with i.i.d. Gaussian covariates in the
// replica-symmetric form (the v-channel of docs/equations/ridge.md §4.8 with L = 1; prior (S14)). Teacher
// y = x.w*/sqrt(D) + sqrt(Delta) xi with |w*|^2 = D; estimator minimising
// sum_mu (1/2)(y_mu - x_mu.w/sqrt(D))^2 + (lambda/2)|w|^2. State (m, q, V).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "solver/curve.hpp"
#include "solver/model_card.hpp"
#include "solver/system.hpp"

namespace saddle {
namespace ridge {

struct Params {
  double alpha = 1.0;   // N / D
  double lambda = 0.1;  // ridge penalty, > 0
  double delta = 0.0;   // noise variance Delta >= 0
};

// Conjugates from the channel, given the overlaps (docs/equations/ridge.md §4.8):
// Vhat = mhat = alpha/(1+V), qhat = alpha (1 + Delta - 2m + q)/(1+V)^2.
struct Hats {
  double mhat, qhat, Vhat;
};
Hats channel(const Params& p, double m, double q, double V);

// Closed-form fixed point (docs/equations/ridge.md §4.8): V is the positive root of
// lambda V^2 + (lambda + alpha - 1) V - 1 = 0, m = alpha V/(1+V), theta = alpha V^2/(1+V)^2,
// q = (m^2 + theta (1 - 2m + Delta)) / (1 - theta).
struct ClosedForm {
  double m, q, V, test_error, train_error;
};
ClosedForm closed_form(const Params& p);

// The values of the fixture, with names: the state (m, q, V) and the observables. T = double at
// one solution, T = Estimate for a curve point; visit() fixes the order in one place.
template <class T>
struct RidgeValues {
  T m{}, q{}, V{};              // state
  T mhat{}, qhat{}, Vhat{};     // channel conjugates
  T test_error{};   // 1 - 2m + q (excess over Delta)
  T train_error{};  // MSE incl. Delta
  template <class F> void visit_state(F&& f) {
    f("m", m);
    f("q", q);
    f("V", V);
  }
  template <class F> void visit_observables(F&& f) {
    f("mhat", mhat); f("qhat", qhat); f("Vhat", Vhat);
    f("test_error", test_error); f("train_error", train_error);
  }
  template <class F> void visit(F&& f) {
    visit_state(f);
    visit_observables(f);
  }
};

// Fixed-point system in x = (m, q, V): hats = channel(x), then the prior (S14)
// V = 1/(lambda + Vhat), m = mhat V, q = (mhat^2 + qhat) V^2.
class RidgeSystem : public FixedPointSystem {
 public:
  explicit RidgeSystem(const Params& p) : p_(p) {}
  int dim() const override { return 3; }
  std::vector<std::string> names() const override { return {"m", "q", "V"}; }
  Vec map(const Vec& x) const override;
  void project(Vec& x) const override;
  // mhat, qhat, Vhat, test_error = 1 - 2m + q (excess over Delta), train_error (MSE incl. Delta).
  std::vector<std::string> observable_names() const override {
    return {"mhat", "qhat", "Vhat", "test_error", "train_error"};
  }
  Vec observables(const Vec& x) const override;
  RidgeValues<double> evaluate(const Vec& x) const;
  // Default cold start (m, q, V) = (0, 0, 1).
  static Vec cold_start() { return Vec::Map(std::vector<double>{0.0, 0.0, 1.0}.data(), 3); }

 private:
  Params p_;
};

// The fixture as the curve driver and the generic subcommand (`saddle ridge`, tools/cli/models.cpp)
// see it: continuation in alpha at fixed (lambda, delta), one deterministic replicate, cold start.
class RidgeModel : public CurveModel {
 public:
  explicit RidgeModel(const ParamValues& p);
  std::unique_ptr<FixedPointSystem> system(double alpha, int, int) const override;
  static std::vector<CurveStart> starts(const ParamValues& p);
  static ModelCard card();

 private:
  double lambda_, delta_;
};

// A point of a curve in alpha (deterministic: one replicate, s.e. 0), with the driver's
// bookkeeping (converged, iterations, residual).
struct RidgePoint : CurveStatus, RidgeValues<Estimate> {
  double alpha = 0;
};

// Continuation in alpha, in the order given (forward, warm starts), from cold_start(), through
// the curve driver (solver/curve.hpp).
std::vector<RidgePoint> ridge_curve(double lambda, double delta, const std::vector<double>& alphas,
                                    const SolverOptions& opt);

}  // namespace ridge
}  // namespace saddle
